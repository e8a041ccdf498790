package acp

import (
	"context"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileTimeout is a safety net for tests whose failure mode is a hang; no
// test waits on it when the code is right.
const hostileTimeout = 10 * time.Second

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hostileTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// An over-cap line whose id is not a valid JSON-RPC id as written must
// neither make the client write an invalid frame nor stop the connection:
// the line is reported and the connection keeps serving calls.
func TestOversizedLineWithUnreproducibleID(t *testing.T) {
	ids := map[string]string{
		"leading zero":  `01`,
		"zeros":         `0000000`,
		"minus":         `-`,
		"trailing dot":  `1.`,
		"two dots":      `1.2.3`,
		"long string":   `"` + strings.Repeat("i", 300) + `"`,
		"cut in escape": `"` + strings.Repeat(`\"`, 200) + `"`,
	}
	for name, id := range ids {
		for _, kind := range []string{"response", "request"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				rec := newDiagRecorder()
				c, a := connectRaw(t, &ClientOptions{OnDiagnostic: rec.record, Limits: Limits{MaxLineBytes: 1 << 10}}, nil)
				errc := make(chan error, 1)
				go func() {
					_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
					errc <- err
				}()
				m := a.expect("session/new")
				pad := strings.Repeat("x", 4<<10)
				if kind == "response" {
					a.write(`{"jsonrpc":"2.0","id":` + id + `,"result":{"pad":"` + pad + `"}}` + "\n")
				} else {
					a.write(`{"jsonrpc":"2.0","id":` + id + `,"method":"fs/read_text_file","params":{"pad":"` + pad + `"}}` + "\n")
				}
				a.reply(m, map[string]any{"sessionId": "s1"})
				if err := waitFor(t, errc, "session/new"); err != nil {
					t.Fatalf("session/new after the oversized line: %v", err)
				}
				if err := c.Err(); err != nil {
					t.Fatalf("connection ended: %v", err)
				}
				// Nothing was written for the unreadable line: the next
				// thing the agent sees is the next call.
				go func() { _, _ = c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"}) }()
				a.reply(a.expect("session/new"), map[string]any{"sessionId": "s2"})
				c.Close()
				if k := rec.kinds(); len(k) == 0 || k[0] != "line_too_long" {
					t.Errorf("diagnostics = %v, want line_too_long", k)
				}
			})
		}
	}
}

// If jrpc2's reader stops for any reason the connection ends at once: Done
// closes, Err says why, and pending calls and turns fail with
// ErrConnClosed rather than hanging or looking like an agent's error.
func TestEngineStopEndsConnection(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	a.expect("session/prompt")
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		errc <- err
	}()
	a.expect("session/new")

	// Take away the client's own end-of-input handling, so that the only
	// thing left to notice the end is jrpc2 stopping. (The write is ordered
	// before the reader's use of it by the pipe.)
	c.conn.Load().wire.SetEOFHook(func(error) {})
	a.out.Close()

	waitFor(t, c.Done(), "Done")
	if err := c.Err(); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Err = %v, want ErrConnClosed", err)
	}
	if err := waitFor(t, errc, "the pending call"); !errors.Is(err, ErrConnClosed) {
		t.Errorf("pending call: %v, want ErrConnClosed", err)
	}
	done := make(chan error, 1)
	go func() { _, err := turn.Wait(); done <- err }()
	if err := waitFor(t, done, "the turn"); !errors.Is(err, ErrConnClosed) {
		t.Errorf("turn: %v, want ErrConnClosed", err)
	}
}

func hostilePermParams(toolCallID string) map[string]any {
	return map[string]any{
		"sessionId": "s1",
		"toolCall":  map[string]any{"toolCallId": toolCallID, "title": "run"},
		"options": []map[string]any{
			{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
			{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
		},
	}
}

// Two permission requests with the same id: the second is rejected at once,
// so cancelling the turn reaches the first, and no allow ever follows the
// cancel.
func TestDuplicateRequestIDNeverAllowsAfterCancel(t *testing.T) {
	entered := make(chan struct{}, 10)
	release := make(chan struct{})
	c, a := connectRaw(t, &ClientOptions{Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return AllowAll(ctx, req)
	}}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.send(map[string]any{"jsonrpc": "2.0", "id": "perm", "method": "session/request_permission", "params": hostilePermParams("t1")})
	waitFor(t, entered, "the first permission handler")
	a.send(map[string]any{"jsonrpc": "2.0", "id": "perm", "method": "session/request_permission", "params": hostilePermParams("t2")})
	// A round trip proves the reader has taken in the second request.
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such"})
	var replies []rawMsg
	for {
		m := a.next()
		if string(m.ID) == `"probe"` {
			break
		}
		replies = append(replies, m)
	}
	turn.Cancel()
	close(release)
	for len(replies) < 2 {
		m := a.next()
		if string(m.ID) == `"perm"` {
			replies = append(replies, m)
		}
	}
	for _, m := range replies {
		if strings.Contains(string(m.Result), "selected") {
			t.Errorf("the agent got an allow after the cancel: %s", m.line)
		}
	}
	if replies[0].Error == nil || replies[0].Error.Code != schema.CodeInvalidRequest {
		t.Errorf("the duplicate was not rejected at once: %s", replies[0].line)
	}
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Requests over MaxPendingRequests are answered by the reader at once, so
// a flood of requests the handler sits on costs no goroutines.
func TestMaxPendingRequests(t *testing.T) {
	const limit, flood = 16, 3000
	var entered atomic.Int64
	release := make(chan struct{})
	rec := newDiagRecorder()
	c, a := connectRaw(t, &ClientOptions{
		OnDiagnostic: rec.record,
		Limits:       Limits{MaxPendingRequests: limit},
		Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
			entered.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return RejectAll(ctx, req)
		},
	}, nil)
	newSessionRaw(t, c, a)
	before := countGoroutines()
	go func() {
		for i := range flood {
			a.send(map[string]any{"jsonrpc": "2.0", "id": i, "method": "session/request_permission", "params": hostilePermParams("t")})
		}
		a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such"})
	}()
	limited := 0
	for {
		m := a.next()
		if string(m.ID) == `"probe"` {
			break
		}
		if m.Error != nil && strings.Contains(m.Error.Message, schema.ErrLimitExceeded.Error()) {
			limited++
		}
	}
	grown := countGoroutines() - before
	t.Logf("%d requests refused, %d handlers entered, %d more goroutines", limited, entered.Load(), grown)
	if limited != flood-limit {
		t.Errorf("%d requests refused, want %d", limited, flood-limit)
	}
	if grown > 4*limit+20 {
		t.Errorf("%d more goroutines while %d requests are pending", grown, limit)
	}
	close(release)
	for answered := 0; answered < limit; {
		if m := a.next(); m.Result != nil {
			answered++
		}
	}
	c.Close()
	found := false
	for _, d := range rec.ds {
		found = found || d.Kind == "limit_exceeded"
	}
	if !found {
		t.Error("no limit_exceeded diagnostic")
	}
}

func countGoroutines() int {
	var n int
	for range 3 {
		runtime.GC()
		n = runtime.NumGoroutine()
	}
	return n
}

// A batch over MaxBatchItems has its extra requests answered with a limit
// error and is reported once.
func TestMaxBatchItems(t *testing.T) {
	rec := newDiagRecorder()
	c, a := connectRaw(t, &ClientOptions{OnDiagnostic: rec.record, Limits: Limits{MaxBatchItems: 4}}, nil)
	var items []string
	for i := range 10 {
		items = append(items, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"no/such"}`, i))
	}
	a.write("[" + strings.Join(items, ",") + "]\n")
	notFound, limited := 0, 0
	for range 10 {
		m := a.next()
		switch {
		case m.Error == nil:
			t.Errorf("unexpected %s", m.line)
		case m.Error.Code == schema.CodeMethodNotFound:
			notFound++
		case strings.Contains(m.Error.Message, schema.ErrLimitExceeded.Error()):
			limited++
		}
	}
	if notFound != 4 || limited != 6 {
		t.Errorf("%d served, %d refused; want 4 and 6", notFound, limited)
	}
	c.Close()
	if k := rec.kinds(); len(k) != 1 || k[0] != "limit_exceeded" {
		t.Errorf("diagnostics = %v", k)
	}
}
