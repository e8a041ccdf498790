package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/internal/scantest"
	"github.com/google/go-cmp/cmp"
)

// The one-pass scanners of the update path must never disagree with the
// encoding/json path they short-cut: every input they accept must decode to
// exactly what encoding/json gives, and everything else must fall back.

// scanSeeds adds two _meta cases of the update path and the shapes of the
// tool_call_update fast path to the shared corpus.
var scanSeeds = append([]string{
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"toolCallId":"c\u0031","kind":"edit","name":"e","title":"a\nb ` + "\xff" + `","status":null,"x":[1]}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":7,"kind":"","status":"failed"}}}`,
	// v2's upsert: nulls, words in strings, capabilities; readsAsV1 or not.
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"null","kind":"edit"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"diff","status":"x\"diff"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","name":null,"status":"completed"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","capabilities":{"cancel":{}},"status":"in_progress"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","kind":"","status":""}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","Status":"failed"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"a","status":"b"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":5}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","rawOutput":{"a":1},"content":[]}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"package main\n"}}],"rawOutput":{"bytes":31}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[null, {"type":"diff","path":"/a","newText":"x"} ,{"type":"nope"},{"type":"content"},7,{"type":"terminal","terminalId":"t"}],"rawInput":null,"rawOutput":  [1] }}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":{"type":"content"},"rawInput":"s"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":null,"locations":[{"path":"/a"}]}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"\u00e9` + "\xff\xfe" + `"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a.go","kind":"read","status":"pending","rawInput":{"path":"/a.go"},"locations":[{"path":"/a.go","line":3},null,{"path":"/b","line":1.5}]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","_meta":{"trace":"t"},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[]},"_meta":[1],"_META":{"x":1}}}`,
}, scantest.Seeds...)

func TestDecodeNotificationMatchesSlowPath(t *testing.T) {
	fast := 0
	for _, in := range scanSeeds {
		var env notificationEnvelope
		if json.Unmarshal([]byte(in), &env) != nil || env.Method != "session/update" || len(env.Params) == 0 {
			continue
		}
		if checkNotification(t, env.Params) {
			fast++
		}
	}
	if fast < 4 {
		t.Errorf("only %d seeds took the text-chunk fast path", fast)
	}
}

// checkNotification compares the two paths and reports whether the text
// chunk fast path handled params.
func checkNotification(t *testing.T, params []byte) bool {
	t.Helper()
	sid, u, meta, err := decodeNotificationMeta(params)
	sid2, u2, meta2, err2 := decodeNotificationSlow(params)
	if sid != sid2 || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("decodeNotification(%s) = %q, %v; slow path %q, %v", params, sid, err, sid2, err2)
	}
	if string(meta) != string(meta2) {
		t.Fatalf("decodeNotification(%s) _meta = %s; slow path %s", params, meta, meta2)
	}
	if d := cmp.Diff(u2, u, rawCmp); d != "" {
		t.Fatalf("decodeNotification(%s) differs from the slow path (-slow +fast):\n%s", params, d)
	}
	if _, upd, _, ok := splitNotification(params); ok {
		_, ok = decodeTextChunk(upd)
		return ok
	}
	return false
}

// The text of a fast-path chunk must not alias the line: the reader reuses
// its buffer.
func TestTextChunkDoesNotAliasInput(t *testing.T) {
	params := []byte(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"},"messageId":"m"}}`)
	sid, u, err := decodeNotification(params)
	if err != nil {
		t.Fatal(err)
	}
	for i := range params {
		params[i] = 'X'
	}
	c := u.(*AgentMessageChunk)
	if sid != "s1" || c.MessageID != "m" || c.Content.(*TextContent).Text != "hello" {
		t.Fatalf("decoded values changed with the input buffer: %q %+v %+v", sid, c, c.Content)
	}
}

func TestJSONValidValueMatchesValid(t *testing.T) {
	for _, in := range scanSeeds {
		checkValid(t, []byte(in))
	}
}

func checkValid(t *testing.T, b []byte) {
	t.Helper()
	end := jsonscan.ValidValue(b, 0, 0)
	got := end == len(b)
	if end >= 0 && end < len(b) {
		got = jsonscan.SkipWS(b, end) == len(b)
	}
	if want := json.Valid(b) && len(b) > 0 && b[0] > ' '; got != want {
		t.Fatalf("jsonscan.ValidValue(%q) = %d, json.Valid = %v", b, end, want)
	}
}

// notificationEnvelope is the part of a line the notification checks need.
type notificationEnvelope struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// FuzzDecodeNotification checks the scanners of the update path against
// encoding/json. (The envelope peeker has its own target, FuzzPeek in
// internal/jsonscan.)
func FuzzDecodeNotification(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkValid(t, line)
		var env notificationEnvelope
		if json.Unmarshal(line, &env) == nil && len(env.Params) > 0 {
			checkNotification(t, env.Params)
		}
		checkPeeked(t, line)
	})
}

// checkPeeked compares, in both versions, the decoder of what Peek read
// of line's params with DecodeNotification of the params.
func checkPeeked(t *testing.T, line []byte) bool {
	t.Helper()
	env, err := jsonscan.Peek(line)
	if err != nil || env.Params == nil {
		return false
	}
	if u := env.Update; u.Exact && string(u.Kind) == "tool_call_update" {
		if tf, ok := walkTool(u.Body, "tool_call_update", true); ok && tf.readsAsV1() && !fastUpsert(u.Body) {
			t.Fatalf("readsAsV1(%s) holds, fastUpsert does not", u.Body)
		}
	}
	for _, v := range []int{1, 2} {
		want, werr := DecodeNotification(v, env.Params)
		// The caller knows no session, the notification's (a string of
		// its own, as a session's id is), or another.
		for _, known := range []string{"", strings.Clone(want.SessionID), "s-other"} {
			got, gerr := decodePeeked(v, env.Params, env.Update, known)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("v%d: decodePeeked(%s) error %v; DecodeNotification %v", v, env.Params, gerr, werr)
			}
			if got.SessionID != want.SessionID || string(got.Meta) != string(want.Meta) {
				t.Fatalf("v%d: decodePeeked(%s) = %q, _meta %s; DecodeNotification %q, %s", v, env.Params, got.SessionID, got.Meta, want.SessionID, want.Meta)
			}
			if env.Update.Exact && env.Update.Kind != nil && known == got.SessionID && known != "" && unsafe.StringData(known) != unsafe.StringData(got.SessionID) {
				t.Fatalf("v%d: decodePeeked(%s) copied the known session id %q", v, env.Params, known)
			}
			if d := cmp.Diff(want.Update, got.Update, rawCmp); d != "" {
				t.Fatalf("v%d: decodePeeked(%s) differs from DecodeNotification (-want +got):\n%s", v, env.Params, d)
			}
		}
	}
	return env.Update.Exact && env.Update.Kind != nil
}

// The decoder of a peeked update gives what DecodeNotification gives, and
// takes the peek's path for the seeds that are exact.
func TestDecodePeekedMatchesDecodeNotification(t *testing.T) {
	exact := 0
	for _, in := range scanSeeds {
		if checkPeeked(t, []byte(in)) {
			exact++
		}
	}
	if exact < 8 {
		t.Errorf("only %d seeds took the peeked path", exact)
	}
}

func TestJSONUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{`""`, `"a"`, `"\n\t\\\/\""`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800x"`, "\"\xff\xfe\"", "\"é\"", `"\u0000"`} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := jsonscan.Unquote([]byte(in))
		if !ok || got != want {
			t.Errorf("jsonscan.Unquote(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// The tool_call fast path takes the usual shapes, locations included, in
// the generated decoder's result, and leaves the rest to it.
func TestToolCallFastPath(t *testing.T) {
	for _, in := range []string{
		`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Read src/file1.go","kind":"read","status":"pending","rawInput":{"path":"/work/src/file1.go"},"locations":[{"path":"/work/src/file1.go"}]}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c","title":"","locations":[null,{"path":"/a","line":0},{"line":4294967295,"path":"/b"},{"path":"/c","line":4294967296},{"path":"/d","line":-1},{"path":"/e","line":2.0},{"path":"/f","_meta":{"x":1}},{"path":7},{},{"path":"/g\u00e9"},5],"content":[{"type":"content","content":{"type":"text","text":"x"}}],"rawOutput":null,"x":1}`,
		`{"toolCallId":"t\u0031","sessionUpdate":"tool_call","title":"a\nb","name":"n","kind":7,"status":null,"locations":{"path":"/a"},"content":null}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"content":{"text":"a\nb","type":"text","x":1},"type":"content","y":2},{"type":"content","content":{"type":"text","text":"x","annotations":{"priority":1}}},{"type":"content","content":{"type":"text","text":"x"},"_meta":{"a":1}},{"type":"content","content":{"type":"image","data":"x","mimeType":"image/png"}},{"type":"content","content":{"type":"text"}},{"type":"content","type":"content","content":{"type":"text","text":"x"}},{"type":"content","content":[]}]}`,
	} {
		u, ok := decodeToolCall([]byte(in))
		if !ok {
			t.Fatalf("%s took the general path", in)
		}
		want, err := decodeUpdate([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, u, rawCmp); d != "" {
			t.Fatalf("%s: fast path differs (-general +fast):\n%s", in, d)
		}
	}
	short := []byte(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a.go","kind":"read","status":"pending"}`)
	if n := testing.AllocsPerRun(100, func() { decodeToolCall(short) }); n > 1 {
		t.Errorf("decodeToolCall allocates %v times, want 1", n)
	}
	for _, in := range []string{
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"t"}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1"}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":5}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"t","_meta":{}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"t","locations":[],"locations":[]}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"t","Locations":[]}`,
	} {
		if _, ok := decodeToolCall([]byte(in)); ok {
			t.Errorf("%s took the fast path", in)
		}
	}
}

// The tool_call_update fast path takes the shape agents send most, in one
// allocation (two when its strings are long), and leaves the rest to the generated decoder.
func TestToolCallUpdateFastPath(t *testing.T) {
	upd := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}`)
	withContent := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"x"}}],"rawOutput":{"bytes":31}}`)
	if _, ok := decodeToolCallUpdate(withContent); !ok {
		t.Error("an update with content and rawOutput took the general path")
	}
	withLoc := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a.go","locations":[{"path":"/a.go","line":7},{"path":"/b","line":-1}],"rawInput":{"path":"/a.go"}}`)
	if u, ok := decodeToolCallUpdate(withLoc); !ok {
		t.Error("an update with locations took the general path")
	} else if want, _ := decodeUpdate(withLoc); !cmp.Equal(want, u, rawCmp) {
		t.Errorf("an update with locations: %s", cmp.Diff(want, u, rawCmp))
	}
	u, ok := decodeToolCallUpdate(upd)
	if !ok {
		t.Fatal("the common status update took the general path")
	}
	want, err := decodeUpdate(upd)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, u); d != "" {
		t.Fatalf("fast path differs (-general +fast):\n%s", d)
	}
	if n := testing.AllocsPerRun(100, func() { decodeToolCallUpdate(upd) }); n > 1 {
		t.Errorf("decodeToolCallUpdate allocates %v times, want 1", n)
	}
	long := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_01ABCDEFGHIJKLMNOPQRSTUV","status":"in_progress","title":"Edit internal/engine/wire.go"}`)
	if n := testing.AllocsPerRun(100, func() { decodeToolCallUpdate(long) }); n > 2 {
		t.Errorf("decodeToolCallUpdate of long strings allocates %v times, want 2", n)
	}
	lu, _ := decodeToolCallUpdate(long)
	lw, _ := decodeUpdate(long)
	if d := cmp.Diff(lw, lu); d != "" {
		t.Fatalf("fast path of long strings differs (-general +fast):\n%s", d)
	}
	for _, in := range []string{
		`{"sessionUpdate":"tool_call","toolCallId":"c1"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","_meta":{}}`,
		`{"sessionUpdate":"tool_call_update","toolCallID":"c1"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","toolCallId":"c2"}`,
		`{"sessionUpdate":"tool_call_update","tool\u0043allId":"c1"}`,
		`{"sessionUpdate":"tool_call_update"}`,
	} {
		if _, ok := decodeToolCallUpdate([]byte(in)); ok {
			t.Errorf("%s took the fast path", in)
		}
	}
}
