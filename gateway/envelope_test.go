package gateway

import (
	"strings"
	"testing"
)

// The gateway routes by the reader the client's engine uses: a message the
// client would refuse as ambiguous is refused here too (before, encoding/json
// read "ID" as "id" and the last of two), and a sessionId is read only under
// exactly that key.
func TestParseEnvelopeStrict(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"session/prompt","params":{}}`,
		`{"jsonrpc":"2.0","ID":1,"method":"session/prompt","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
	} {
		if _, ok := parseEnvelope([]byte(line)); ok {
			t.Errorf("parseEnvelope(%s) accepted an ambiguous message", line)
		}
	}
	e, ok := parseEnvelope([]byte(`{"jsonrpc":"2.0","\u0069d":1,"method":"session/prompt","params":{"SessionId":"a"}}`))
	if !ok || !e.isRequest() || e.method() != "session/prompt" {
		t.Fatalf("an escaped id key: %+v %v, want a session/prompt request", e, ok)
	}
	if s, ok := e.sessionID(); ok {
		t.Errorf("a case-folded sessionId read as %q", s)
	}
}

// updateSession routes a plain session/update without the peek, exactly
// as the peek would, and leaves every other line to the peek.
func TestUpdateSession(t *testing.T) {
	const open = `{"jsonrpc":"2.0","method":"session/update","params":`
	for _, tc := range []struct {
		ws   bool
		line string
		sid  string
		ok   bool
	}{
		{false, open + `{"sessionId":"s1","update":{}}}`, "s1", true},
		{false, open + `{"sessionId":"sess_01J9 x-y","update":{}}}`, "sess_01J9 x-y", true},
		{true, open + `{"sessionId":"s1","update":{}}}`, "", true},
		{true, open + `[]}`, "", true}, // a WebSocket routes no method
		{false, open + `{"update":{},"sessionId":"s1"}}`, "", false},
		{false, open + `{"sessionId":"s\u00311","update":{}}}`, "", false},
		{false, open + `{"sessionId":"` + "s\xff" + `","update":{}}}`, "", false},
		{false, open + `{"sessionId":"","update":{}}}`, "", false},
		{false, open + `{"sessionId":"` + strings.Repeat("x", maxIDBytes+1) + `","update":{}}}`, "", false},
		{false, open + `{"sessionId":"s1`, "", false},
		{false, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`, "", false},
		{true, `{"jsonrpc":"2.0","id":1,"result":{}}`, "", false},
		{true, `{"method":"session/update","jsonrpc":"2.0","params":{}}`, "", false},
	} {
		c := &conn{ws: tc.ws}
		sid, ok := c.updateSession([]byte(tc.line))
		if sid != tc.sid || ok != tc.ok {
			t.Errorf("ws=%v %s: %q %v, want %q %v", tc.ws, tc.line, sid, ok, tc.sid, tc.ok)
			continue
		}
		if !ok || tc.ws {
			continue
		}
		e, perr := parseEnvelope([]byte(tc.line))
		if got, has := e.sessionID(); !perr || !has || got != sid || e.isResponse() {
			t.Errorf("%s: the peek reads session %q (%v), the fast path %q", tc.line, got, has, sid)
		}
	}
}

// While a v2 turn is followed for the drain, the fast path leaves to the
// full read every line that may be its idle, however it spells the kind,
// and nothing else; and the full read does see an escaped idle.
func TestMayEndTurn(t *testing.T) {
	const open = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`
	for _, tc := range []struct {
		line string
		want bool
	}{
		{open + `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`, true},
		{open + `{"sessionUpdate":"\u0073tate_update","state":"idle"}}}`, true},
		{open + `{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a\nb"}}}}`, false},
		{open + `{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}}`, false},
	} {
		if got := mayEndTurn([]byte(tc.line)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.line, got, tc.want)
		}
	}
	c := &conn{turns: map[string]bool{"s1": true}}
	e, ok := parseEnvelope([]byte(open + `{"sessionUpdate":"\u0073tate_update","state":"idle"}}}`))
	if !ok {
		t.Fatal("the escaped idle does not parse")
	}
	c.turnUpdateLocked("s1", &e)
	if c.turns["s1"] {
		t.Error("the escaped idle did not end the followed turn")
	}
}
