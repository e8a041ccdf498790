package schema

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule (performance, BenchmarkFoldV1V2): a v2 tool_call_update without
// null or diff takes v1's generated decoder; it must read exactly as the
// v2 upsert decoder reads it.
func TestV2FastUpsertSameAsV2Decoder(t *testing.T) {
	for _, in := range []string{
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"T","kind":"edit","status":"completed","name":"n"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"x"}}],"locations":[{"path":"/a","line":2}],"rawInput":{"a":[1,2]},"rawOutput":"s"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[],"locations":[],"_meta":{"k":1}}`,
	} {
		if !fastUpsert([]byte(in)) {
			t.Fatalf("%s: not fast", in)
		}
		fast, err := decodeUpdate([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		slow, err := decodeToolCallUpsert([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Errorf("%s (-v2 +v1 decoder):\n%s", in, diff)
		}
		if walked, ok := decodeToolCallUpdate([]byte(in)); ok {
			if diff := cmp.Diff(slow, walked); diff != "" {
				t.Errorf("%s (-v2 +one-walk decoder):\n%s", in, diff)
			}
		}
	}
}

// containsQuoted is bytes.Contains with the quote in front.
func FuzzContainsQuoted(f *testing.F) {
	for _, s := range []string{`"diff"`, `x"diff"`, `diff"`, `"dif"diff"`, `""capabilities"`, `capabilities"`, `"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, w := range []string{`diff"`, `capabilities"`} {
			if got, want := containsQuoted(raw, []byte(w)), bytes.Contains(raw, []byte(`"`+w)); got != want {
				t.Fatalf("containsQuoted(%q, %q) = %v, bytes.Contains %v", raw, w, got, want)
			}
		}
	})
}

// Rule (v2 schema: ToolKind and ToolCallStatus are open unions with a
// default): every path a v2 tool_call_update can take (the one-walk
// decoder, v1's generated decoder, the v2 upsert decoder) reads a kind or
// status that is empty, unknown or not a string as the v2 upsert decoder
// does: the fast paths may only take what they read identically.
func TestV2UpsertOddKindAndStatus(t *testing.T) {
	for _, field := range []string{`"kind":""`, `"status":""`, `"kind":"weird"`, `"status":"weird"`, `"kind":5`, `"status":true`, `"kind":{}`, `"title":""`} {
		upd := `{"sessionUpdate":"tool_call_update","toolCallId":"c1",` + field + `}`
		want, err := decodeToolCallUpsert([]byte(upd))
		if err != nil {
			t.Fatalf("%s: %v", upd, err)
		}
		params := `{"sessionId":"s1","update":` + upd + `}`
		got, err := DecodeNotification(2, []byte(params))
		if err != nil {
			t.Fatalf("%s: DecodeNotification: %v", upd, err)
		}
		if d := cmp.Diff(want, got.Update); d != "" {
			t.Errorf("%s: DecodeNotification (-v2 upsert decoder +got):\n%s", upd, d)
		}
		line := `{"jsonrpc":"2.0","method":"session/update","params":` + params + `}`
		checkPeeked(t, []byte(line))
	}
}
