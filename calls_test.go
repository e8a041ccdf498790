package acp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/acpclient/acp/schema"
	"testing"
)

// Every call, session/prompt included, takes its id from jrpc2's one
// counter: a prompt's id follows the call before it and precedes the next.
func TestPromptSharesTheCallIDSpace(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)

	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	if got := turn.RequestID(); got != string(p.ID) {
		t.Errorf("Turn.RequestID() = %s, want the request's id %s", got, p.ID)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "_next", nil, nil) }()
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
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %v, %v", stop, err)
	}
}

// An agent error that uses one of jrpc2's reserved codes (-32800 is also
// ACP's "request cancelled") is the agent's answer, not a cancellation of
// the caller's.
func TestAgentCancelledCodeIsAnError(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		errc <- err
	}()
	a.replyError(a.expect("session/new"), schema.CodeRequestCancelled, "the agent gave up", nil)
	err := waitFor(t, errc, "NewSession")
	var e *schema.Error
	if !errors.As(err, &e) || e.Code != schema.CodeRequestCancelled || errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want *Error with code %d that is not context.Canceled", err, schema.CodeRequestCancelled)
	}
}
