package remote

import "testing"

// peek reads what the client's engine reads: an ambiguous message yields a
// zero envelope, an escaped key is the key it spells.
func TestPeekStrict(t *testing.T) {
	if env := peek([]byte(`{"id":1,"ID":2,"result":{}}`)); env.id != nil || env.hasResult {
		t.Errorf("an ambiguous response read as %+v", env)
	}
	env := peek([]byte(`{"jsonrpc":"2.0","\u0069d":5,"result":{"session\u0049d":"s5"}}`))
	if string(env.id) != "5" || env.sessionID != "s5" || !env.isResponse() {
		t.Errorf("escaped keys read as %+v", env)
	}
}
