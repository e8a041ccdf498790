package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// Every call, session/prompt included, takes its id from jrpc2's one
// counter: a prompt's id follows the call before it and precedes the next.
func TestPromptSharesTheCallIDSpace(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)

	turn, err := s.Prompt(context.Background(), Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	if got := turn.ID(); got != string(p.ID) {
		t.Errorf("Turn.ID() = %s, want the request's id %s", got, p.ID)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.CallExt(context.Background(), "_next", nil, nil) }()
	m := a.expect("_next")
	var pid, mid int64
	if json.Unmarshal(p.ID, &pid) != nil || json.Unmarshal(m.ID, &mid) != nil || mid != pid+1 {
		t.Errorf("ids: prompt %s, next call %s; want consecutive numbers from one counter", p.ID, m.ID)
	}
	a.reply(m, map[string]any{})
	if err := waitFor(t, errc, "_next"); err != nil {
		t.Fatal(err)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if stop, err := turn.Wait(); err != nil || stop != StopReasonEndTurn {
		t.Fatalf("Wait = %v, %v", stop, err)
	}
}

// recvResult runs Recv on its own goroutine.
func recvResult(w *wire) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := w.Recv()
		ch <- err
	}()
	return ch
}

// At the end of the agent's output, the reader does not report the end to
// jrpc2 (which would fail pending calls, racing its own delivery of
// answers it already has) until every response it handed on has reached
// its caller — with no clock involved: it waits for exactly those calls.
// A repeated answer and an answer to an unknown id are dropped, so they are
// never waited for; Close ends the wait too.
func TestEndOfInputWaitsForHandedResponses(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"again":true}}` + "\n" +
		`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n"
	rec := newDiagRecorder()
	w := newWire(strings.NewReader(in), discard{}, nil, nil,
		wireLimits{maxLine: 1 << 20, maxPending: 1, maxBatch: 1, maxQueued: 1 << 20},
		wireHooks{response: func([]byte, string, []byte) {}, diag: func(k, m string, _ []byte) { rec.record(Diagnostic{Kind: DiagnosticKind(k), Message: m}) }})
	defer w.closeWrite(time.Second)
	w.calls["1"] = &callRecord{method: "x"}

	line, err := w.Recv()
	if err != nil || !strings.Contains(string(line), `"id":1`) {
		t.Fatalf("Recv = %s, %v; want the answer to call 1", line, err)
	}
	done := recvResult(w)
	select {
	case err := <-done:
		t.Fatalf("Recv returned %v before the answer handed on reached its caller", err)
	case <-rec.ch: // the repeated answer was dropped
	}
	<-rec.ch // and so was the unknown id
	select {
	case err := <-done:
		t.Fatalf("Recv returned %v before the answer handed on reached its caller", err)
	default:
	}
	if out := w.settle("1"); !out.answered {
		t.Error("settle: the call is not marked answered")
	}
	if err := waitFor(t, done, "Recv after settle"); err != io.EOF {
		t.Errorf("Recv = %v, want io.EOF", err)
	}
	if got := rec.kinds(); len(got) != 2 || got[0] != "late_response" || got[1] != "late_response" {
		t.Errorf("diagnostics = %v, want two late_response", got)
	}

	// An answer never settled (its caller is gone): Close ends the wait.
	w2 := newWire(strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"), discard{}, nil, nil,
		wireLimits{maxLine: 1 << 20, maxPending: 1, maxBatch: 1, maxQueued: 1 << 20},
		wireHooks{response: func([]byte, string, []byte) {}})
	defer w2.closeWrite(time.Second)
	w2.calls["1"] = &callRecord{method: "x"}
	if _, err := w2.Recv(); err != nil {
		t.Fatal(err)
	}
	done = recvResult(w2)
	w2.Close()
	if err := waitFor(t, done, "Recv after Close"); err != io.EOF {
		t.Errorf("Recv = %v, want io.EOF", err)
	}
}

// An agent error that uses one of jrpc2's reserved codes (-32800 is also
// ACP's "request cancelled") is the agent's answer, not a cancellation of
// the caller's.
func TestAgentCancelledCodeIsAnError(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &NewSessionRequest{Cwd: "/tmp"})
		errc <- err
	}()
	a.replyError(a.expect("session/new"), CodeRequestCancelled, "the agent gave up", nil)
	err := waitFor(t, errc, "NewSession")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeRequestCancelled || errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want *Error with code %d that is not context.Canceled", err, CodeRequestCancelled)
	}
}
