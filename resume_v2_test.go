package acp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/acpclient/acp/schema"
	"testing"
)

// loadRaw runs LoadSession with req on a goroutine; the agent side is the
// caller's.
func loadRaw(c *Client, req *schema.LoadSessionRequest) <-chan struct {
	s   *Session
	err error
} {
	ch := make(chan struct {
		s   *Session
		err error
	}, 1)
	go func() {
		s, err := c.LoadSession(context.Background(), req)
		ch <- struct {
			s   *Session
			err error
		}{s, err}
	}()
	return ch
}

// Rule (schema v2 ResumeSessionRequest.replayFrom, ReplayFrom): LoadSession
// sends the request's cursor as replayFrom, as given (start when zero);
// the session keeps the cursor it replayed from; an agent's -32602 for a
// cursor other than start is ErrUnsupportedReplayCursor, with the agent's
// error; a -32602 for start is not (it may name another param).
func TestV2ReplayCursor(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)

	ch := loadRaw(c, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp"})
	m := a.expect("session/resume")
	var p struct {
		ReplayFrom json.RawMessage `json:"replayFrom"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if string(p.ReplayFrom) != `{"type":"start"}` {
		t.Fatalf("zero cursor sent %s", p.ReplayFrom)
	}
	a.update("s1", map[string]any{"sessionUpdate": "agent_message", "messageId": "m1", "content": []any{map[string]any{"type": "text", "text": "old"}}})
	a.update("s1", state("idle"))
	a.reply(m, map[string]any{})
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if cur, ok := r.s.ReplayFrom(); !ok || !cur.IsStart() || cur.Type() != "start" {
		t.Fatalf("ReplayFrom = %v, %v", cur, ok)
	}
	if h := r.s.State().History; len(h.Messages) != 1 || h.Messages[0].Text != "old" {
		t.Fatalf("history %+v", h)
	}
	r.s.Release()

	const custom = `{"type":"_acme/at","z":1,"a":{"messageId":"m7","k":[2,1]}}`
	cur, err := schema.ParseReplayCursor([]byte(custom))
	if err != nil {
		t.Fatal(err)
	}
	if cur.Type() != "_acme/at" || cur.IsStart() {
		t.Fatalf("cursor %v type %q", cur, cur.Type())
	}
	ch = loadRaw(c, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp", ReplayFrom: cur})
	m = a.expect("session/resume")
	_ = json.Unmarshal(m.Params, &p)
	if string(p.ReplayFrom) != custom {
		t.Fatalf("custom cursor sent as %s, want it unchanged", p.ReplayFrom)
	}
	a.replyError(m, schema.CodeInvalidParams, "unsupported replay cursor", nil)
	r = <-ch
	var ae *schema.Error
	if !errors.Is(r.err, ErrUnsupportedReplayCursor) || !errors.As(r.err, &ae) || ae.Code != schema.CodeInvalidParams {
		t.Fatalf("refused custom cursor: %v", r.err)
	}
	if c.lookup("s1") != nil {
		t.Fatal("a refused load left the session registered")
	}

	ch = loadRaw(c, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp", ReplayFrom: cur})
	m = a.expect("session/resume")
	a.update("s1", state("idle"))
	a.reply(m, map[string]any{})
	r = <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, ok := r.s.ReplayFrom(); !ok || string(got.Raw()) != custom {
		t.Fatalf("kept cursor %v, %v", got, ok)
	}
	r.s.Release()

	ch = loadRaw(c, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp"})
	a.replyError(a.expect("session/resume"), schema.CodeInvalidParams, "cwd differs", nil)
	if r = <-ch; r.err == nil || errors.Is(r.err, ErrUnsupportedReplayCursor) {
		t.Fatalf("a -32602 for the start cursor: %v", r.err)
	}

	// A session created, or resumed without replay, has no cursor.
	s := newSessionRaw(t, c, a)
	if _, ok := s.ReplayFrom(); ok {
		t.Fatal("a new session has a replay cursor")
	}
}

// Rule: v1's session/load replays from the start; LoadSession refuses
// another cursor with ErrNotSupported before anything is sent or
// registered, and sends no replayFrom for start.
func TestV1ReplayCursorRefused(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	cur, err := schema.ParseReplayCursor([]byte(`{"type":"_acme/at","n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoadSession(context.Background(), &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp", ReplayFrom: cur}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("v1 LoadSession with a custom cursor = %v", err)
	}
	if c.lookup("s1") != s {
		t.Fatal("the refused load replaced the registered session")
	}
	s.Release()
	ch := loadRaw(c, &schema.LoadSessionRequest{SessionID: "s1", Cwd: "/tmp", ReplayFrom: schema.ReplayFromStart()})
	m := a.expect("session/load") // the first thing sent since the session
	var p map[string]json.RawMessage
	_ = json.Unmarshal(m.Params, &p)
	if _, ok := p["replayFrom"]; ok {
		t.Fatalf("v1 session/load carries replayFrom: %s", m.Params)
	}
	a.reply(m, nil)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, ok := r.s.ReplayFrom(); !ok || !got.IsStart() {
		t.Fatalf("v1 load cursor %v, %v", got, ok)
	}
}

// Rule: a replay cursor is a JSON object with a string type; it
// round-trips through JSON unchanged.
func TestReplayCursorParse(t *testing.T) {
	for _, bad := range []string{``, `null`, `[]`, `"start"`, `{}`, `{"type":1}`, `{"type":""}`, `{"type":"x"`} {
		if _, err := schema.ParseReplayCursor([]byte(bad)); err == nil {
			t.Errorf("ParseReplayCursor(%q) accepted", bad)
		}
	}
	var v struct {
		C schema.ReplayCursor `json:"c"`
	}
	if err := json.Unmarshal([]byte(`{"c":{"type":"start","_meta":{"k":1}}}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.C.IsStart() || string(v.C.Raw()) != `{"type":"start","_meta":{"k":1}}` {
		t.Fatalf("start with members: %v", v.C)
	}
	b, _ := json.Marshal(struct {
		C schema.ReplayCursor `json:"c"`
	}{})
	if string(b) != `{"c":{"type":"start"}}` {
		t.Fatalf("zero cursor marshals as %s", b)
	}
}
