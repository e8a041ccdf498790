package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// While the extension-notification callback is stuck, the callback queue
// holds at most MaxQueuedEvents; the rest are dropped, counted, and
// reported once the queue drains.
func TestCallbackQueueIsBounded(t *testing.T) {
	const limit, flood = 10, 2000
	release := make(chan struct{})
	var delivered atomic.Int64
	report := make(chan Diagnostic, 1)
	var once sync.Once
	_, a := connectRaw(t, &ClientOptions{
		Limits: Limits{MaxQueuedEvents: limit},
		ExtNotification: func(method string, _ json.RawMessage) {
			<-release
			delivered.Add(1)
		},
		OnDiagnostic: func(d Diagnostic) {
			if d.Kind == "limit_exceeded" {
				once.Do(func() { report <- d })
			}
		},
	}, nil)
	for range flood {
		a.send(map[string]any{"jsonrpc": "2.0", "method": "_note", "params": map[string]any{"pad": strings.Repeat("p", 100)}})
	}
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such"})
	a.next() // the reader has taken in every notification
	close(release)
	d := waitFor(t, report, "the dropped-callbacks diagnostic")
	if got := delivered.Load(); got > limit+1 {
		t.Errorf("%d notifications delivered with a queue of %d", got, limit)
	}
	if !strings.Contains(d.Message, "extension notifications") {
		t.Errorf("report %q does not say what was dropped", d.Message)
	}
	t.Logf("delivered %d of %d; %s", delivered.Load(), flood, d.Message)
}

// Close may be called from the callbacks that run on the client's callback
// goroutine without deadlocking.
func TestCloseFromCallback(t *testing.T) {
	for _, from := range []string{"OnDiagnostic", "ExtNotification"} {
		t.Run(from, func(t *testing.T) {
			clientc := make(chan *Client, 1)
			closed := make(chan error, 1)
			closeIt := func() {
				c := <-clientc
				closed <- c.Close()
			}
			opts := &ClientOptions{}
			if from == "OnDiagnostic" {
				opts.OnDiagnostic = func(Diagnostic) { closeIt() }
			} else {
				opts.ExtNotification = func(string, json.RawMessage) { closeIt() }
			}
			c, a := connectRaw(t, opts, nil)
			clientc <- c
			if from == "OnDiagnostic" {
				a.write("junk\n")
			} else {
				a.send(map[string]any{"jsonrpc": "2.0", "method": "_note", "params": map[string]any{}})
			}
			if err := waitFor(t, closed, "Close called from "+from); err != nil {
				t.Fatal(err)
			}
			waitFor(t, c.Done(), "Done")
			if _, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/"}); err == nil {
				t.Error("a call succeeded after Close")
			}
		})
	}
}
