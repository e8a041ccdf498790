package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/jsonscan"
)

// The reader routes by jsonscan.Peek alone: a session/update's hook gets
// what the one pass read of it (no second scan), and a line Peek refuses as
// ambiguous is skipped as junk, never guessed at; before Peek it went through
// encoding/json, which reads "ID" as "id" and the last of two ids.
func TestDispatchRoutesByPeek(t *testing.T) {
	var kinds, msgs []string
	var peeks []jsonscan.Update
	w := NewWire(strings.NewReader(""), &frameChecker{}, nil, nil, testLimits(), Hooks{
		Update:       func(_ []byte, p jsonscan.Update) { peeks = append(peeks, p) },
		Notification: func(string, []byte) { t.Error("a notification was routed") },
		Response:     func([]byte, string, []byte) { t.Error("a response was routed") },
		Request:      func([]byte, string, []byte) Request { t.Error("a request was routed"); return request{} },
		Diag:         func(kind, msg string, _ []byte) { kinds, msgs = append(kinds, kind), append(msgs, msg) },
	})
	defer w.CloseWrite(time.Second)
	w.Dispatch([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`))
	if len(peeks) != 1 || peeks[0].Chunk != jsonscan.ChunkMessage || string(peeks[0].Text) != `"hi"` || string(peeks[0].SessionID) != "s1" {
		t.Fatalf("the update hook got %+v, want the text chunk read", peeks)
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"fs/read_text_file","params":{}}`,
		`{"jsonrpc":"2.0","ID":1,"method":"fs/read_text_file","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","Method":"x","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
	} {
		kinds, msgs = nil, nil
		if out := w.Dispatch([]byte(line)); out != nil {
			t.Errorf("%s went to jrpc2", line)
		}
		if len(kinds) != 1 || kinds[0] != "junk_line" || !strings.Contains(msgs[0], "route") {
			t.Errorf("%s: diagnostics %q %q, want one junk_line saying why", line, kinds, msgs)
		}
	}
	if len(peeks) != 1 {
		t.Errorf("%d updates, want 1", len(peeks))
	}
}
