package gateway

import "testing"

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
