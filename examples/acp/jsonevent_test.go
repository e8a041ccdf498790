// jsonevent_test.go holds the hand-written update event to encoding/json's
// bytes.
package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// encodingJSON is the line emit writes for v through encoding/json.
func encodingJSON(t testing.TB, v any) string {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hardStrings are texts whose JSON is not the text between quotes.
var hardStrings = []string{
	"", "w0001 ", "plain text", `"quoted" \ back\slash`, "<b>&amp;</b> <script>",
	"line\nbreak\r\n\ttab", "\b\f\x00\x01\x1f\x7f", "\x1b[2Jclear", "é ü 中文 🙂",
	"\u2028 and \u2029", "\u2027\u202a", "bad \xff byte", "cut \xe4\xb8", "\xed\xa0\x80 surrogate",
	"\xc0\xaf overlong", "tail\\",
}

// TestUpdateEventJSONIsEncodingJSON: a plain text chunk's event, and its
// replay event, are written byte for byte as json.Encoder writes them,
// whatever its text, ids and origin, and every other update is left to
// encoding/json.
func TestUpdateEventJSONIsEncodingJSON(t *testing.T) {
	chunks := func(id, text string) []schema.Update {
		return []schema.Update{schema.AgentMessageText(id, text), schema.AgentThoughtText(id, text), schema.UserMessageText(id, text)}
	}
	n := 0
	for _, text := range hardStrings {
		for _, id := range []string{"", "m1", "<id>\n"} {
			for _, u := range chunks(id, text) {
				for _, e := range []updateEvent{
					{Event: "update", Seq: 7, SessionID: "s1", Update: u},
					{Event: "update", Seq: 1 << 40, SessionID: text, Update: u, Origin: acp.OriginLocal},
					{Event: "update", Seq: 0, SessionID: "child&", ParentSessionID: text, Update: u, Origin: acp.OriginPermission},
				} {
					got, ok := appendUpdateEvent([]byte("before"), &e)
					if !ok {
						t.Fatalf("%T %q: not written", u, text)
					}
					if want := "before" + encodingJSON(t, &e); string(got) != want {
						t.Errorf("%T %q:\n got %s\nwant %s", u, text, got, want)
					}
					n++
				}
				for _, sid := range []string{"s1", text} {
					got, ok := appendReplayEvent([]byte("before"), sid, u)
					want := "before" + encodingJSON(t, map[string]any{"event": "update", "sessionId": sid, "replay": true, "update": u})
					if !ok || string(got) != want {
						t.Errorf("replay %T %q (written %v):\n got %s\nwant %s", u, text, ok, got, want)
					}
				}
			}
		}
	}
	meta := json.RawMessage(`{"k":1}`)
	for _, u := range []schema.Update{
		&schema.AgentMessageChunk{Content: &schema.TextContent{Text: "x"}, Meta: meta},
		&schema.AgentMessageChunk{Content: &schema.TextContent{Text: "x", Meta: meta}},
		&schema.AgentThoughtChunk{Content: &schema.TextContent{Text: "x", Annotations: &schema.Annotations{}}},
		&schema.UserMessageChunk{Content: &schema.ImageContent{Data: "AA==", MimeType: "image/png"}},
		&schema.AgentMessageChunk{},
		(*schema.AgentMessageChunk)(nil),
		&schema.ToolCall{ToolCallID: "t1", Title: "run"},
		&schema.CurrentModeUpdate{CurrentModeID: "code"},
	} {
		e := updateEvent{Event: "update", Seq: 1, SessionID: "s1", Update: u}
		if got, ok := appendUpdateEvent([]byte("before"), &e); ok || string(got) != "before" {
			t.Errorf("%T: written by hand (%q), not by encoding/json", u, got)
		}
		if got, ok := appendReplayEvent([]byte("before"), "s1", u); ok || string(got) != "before" {
			t.Errorf("replay %T: written by hand (%q), not by encoding/json", u, got)
		}
	}
	if n == 0 {
		t.Fatal("no case ran")
	}
}

// TestJSONLineIsEncodingJSON: the reused encoder writes what a new one
// does, one line per value, and a value that cannot be encoded adds
// nothing.
func TestJSONLineIsEncodingJSON(t *testing.T) {
	var j jsonLine
	var b []byte
	var want string
	for _, u := range []schema.Update{&schema.ToolCall{ToolCallID: "t<1>", Title: "run"}, &schema.CurrentModeUpdate{CurrentModeID: "code"}} {
		e := updateEvent{Event: "update", Seq: 3, SessionID: "s1", Update: u}
		var err error
		if b, err = j.appendTo(b, &e); err != nil {
			t.Fatal(err)
		}
		want += encodingJSON(t, &e)
	}
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	if b2, err := j.appendTo(b, map[string]any{"bad": func() {}}); err == nil || len(b2) != len(b) {
		t.Fatalf("an unencodable value: err %v, %d bytes added", err, len(b2)-len(b))
	}
}

// FuzzUpdateEventJSON: for any text, message id and session id, the hand
// written event is encoding/json's.
func FuzzUpdateEventJSON(f *testing.F) {
	for _, s := range hardStrings {
		f.Add(s, "m1", "s1")
	}
	f.Fuzz(func(t *testing.T, text, id, sid string) {
		for _, u := range []schema.Update{schema.AgentMessageText(id, text), schema.AgentThoughtText(id, text), schema.UserMessageText(id, text)} {
			e := updateEvent{Event: "update", Seq: 42, SessionID: sid, ParentSessionID: id, Update: u}
			got, ok := appendUpdateEvent(nil, &e)
			if !ok {
				t.Fatalf("%T: not written", u)
			}
			if want := encodingJSON(t, &e); string(got) != want {
				t.Fatalf("%T:\n got %s\nwant %s", u, got, want)
			}
			got, _ = appendReplayEvent(nil, sid, u)
			if want := encodingJSON(t, map[string]any{"event": "update", "sessionId": sid, "replay": true, "update": u}); string(got) != want {
				t.Fatalf("replay %T:\n got %s\nwant %s", u, got, want)
			}
		}
	})
}
