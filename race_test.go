package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// autoReply answers every request from the client at once: prompts with
// end_turn, everything else with an empty result. Write errors (the client
// closed) end it quietly.
func autoReply(a *rawAgent) {
	for m := range a.msgs {
		var result any = map[string]any{}
		switch {
		case m.ID == nil:
			continue
		case m.Method == "session/prompt":
			result = map[string]any{"stopReason": "end_turn"}
		case m.Method == "session/new":
			result = map[string]any{"sessionId": "s1"}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		if _, err := a.out.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

// finishes fails the test if f has not returned shortly before the test
// binary's own deadline: the failure mode of a lock-order bug is a hang, and
// a fixed bound would make a slow, loaded machine look like one.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	var expired <-chan time.Time
	if d, ok := t.Deadline(); ok {
		timer := time.NewTimer(time.Until(d) - 30*time.Second)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-done:
	case <-expired:
		t.Fatalf("%s hung (deadlock?)", what)
	}
}

// Loading a session that is open while its old handle starts prompts: the
// client and session locks are always taken in the same order.
func TestReloadWhilePrompting(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	go autoReply(a)
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Prompts on the current handle (taking the session lock, then the
	// client's) race loads of the same id, which replace that handle
	// (taking the client lock, then the replaced session's, under the old
	// order).
	var cur atomic.Pointer[Session]
	cur.Store(s)
	finishes(t, "reload while prompting", func() {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if turn, err := cur.Load().Prompt(ctx, schema.Text("x")); err == nil {
						turn.Wait()
					}
				}
			})
		}
		for range 100 {
			ns, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp"})
			if err != nil {
				t.Error(err)
				break
			}
			cur.Store(ns)
		}
		close(stop)
		wg.Wait()
	})
}

// A prompt racing Close either fails or returns a turn that ends: never a
// turn left waiting forever.
func TestPromptRacingClose(t *testing.T) {
	for range 100 {
		c, a := connectRaw(t, nil, nil)
		go autoReply(a)
		s, err := c.NewSession(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		go c.Close()
		finishes(t, "a prompt racing Close", func() {
			if turn, err := s.Prompt(context.Background(), schema.Text("x")); err == nil {
				turn.Wait()
			}
		})
		c.Close()
	}
}
