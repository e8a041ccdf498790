package schema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolCallContentDecode(t *testing.T) {
	tests := []struct {
		in   string
		want ToolCallContent
	}{
		{`{"type":"content","content":{"type":"text","text":"a"},"_meta":{"m":1}}`,
			&ToolContent{Content: Text("a"), Meta: json.RawMessage(`{"m":1}`)}},
		{`{"type":"diff","path":"/a","oldText":null,"newText":""}`, &DiffContent{Path: "/a", NewText: ""}},
		{`{"type":"diff","path":"/a","oldText":5,"newText":"n"}`, &DiffContent{Path: "/a", NewText: "n"}},
		{`{"type":"diff","path":"/a","oldText":"o","newText":"n"}`, &DiffContent{Path: "/a", OldText: ptr("o"), NewText: "n"}},
		{`{"type":"terminal","terminalId":"t1"}`, &TerminalContent{TerminalID: "t1"}},
		// The doc's mistake: a bare content block where a wrapped one
		// belongs. It is kept, not unwrapped and not taken for "content".
		{`{"type":"text","text":"bare"}`, &UnknownToolCallContent{Type: "text", Raw: json.RawMessage(`{"type":"text","text":"bare"}`)}},
	}
	for _, tt := range tests {
		got, err := unmarshalToolCallContent([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, rawCmp); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, d)
		}
		out := mustMarshal(t, got)
		if !jsonEqual(out, []byte(tt.in)) {
			if _, isDiff := got.(*DiffContent); !isDiff { // diffs above carry dropped junk
				t.Errorf("%s re-encoded as %s", tt.in, out)
			}
		}
	}
	for _, in := range []string{
		`{"type":"content"}`,
		`{"type":"content","content":{"type":"text"}}`,
		`{"type":"diff","newText":"x"}`,
		`{"type":"diff","path":"/a"}`,
		`{"type":"terminal"}`,
		`{"type":"terminal","terminalId":1}`,
		`{"content":{"type":"text","text":"x"}}`,
	} {
		if got, err := unmarshalToolCallContent([]byte(in)); err == nil {
			t.Errorf("%s: decoded as %#v", in, got)
		}
	}
}

func TestToolCallLocation(t *testing.T) {
	for in, want := range map[string]ToolCallLocation{
		`{"path":"/a","line":3}`:          {Path: "/a", Line: ptr(uint32(3))},
		`{"path":"/a","line":null}`:       {Path: "/a"},
		`{"path":"/a","line":-1}`:         {Path: "/a"},
		`{"path":"/a","line":4294967296}`: {Path: "/a"},
		`{"path":"/a","line":"3"}`:        {Path: "/a"},
	} {
		var got ToolCallLocation
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	if err := json.Unmarshal([]byte(`{"line":3}`), new(ToolCallLocation)); err == nil {
		t.Error("location without path decoded")
	}
}

func TestToolCallContentEncode(t *testing.T) {
	tests := []struct {
		c    ToolCallContent
		want string
	}{
		{&ToolContent{Content: Text("x")}, `{"type":"content","content":{"type":"text","text":"x"}}`},
		{&DiffContent{Path: "/a", NewText: "n"}, `{"type":"diff","path":"/a","newText":"n"}`},
		{&DiffContent{Path: "/a", OldText: ptr(""), NewText: ""}, `{"type":"diff","path":"/a","oldText":"","newText":""}`},
		{&TerminalContent{TerminalID: "t"}, `{"type":"terminal","terminalId":"t"}`},
		{&UnknownToolCallContent{Type: "x"}, `{"type":"x"}`},
	}
	for _, tt := range tests {
		if got := mustMarshal(t, tt.c); string(got) != tt.want {
			t.Errorf("got %s want %s", got, tt.want)
		}
	}
	if _, err := json.Marshal(&ToolContent{}); err == nil {
		t.Error("content item without a block encoded")
	}
}

func TestToolCallDefaults(t *testing.T) {
	// kind and status are optional on tool_call: absent stays "" (the
	// folding code reads it as other / pending) and is not sent back.
	u, err := decodeUpdate([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	tc := u.(*ToolCall)
	if tc.Kind != "" || tc.Status != "" || tc.Content != nil || tc.Locations != nil || tc.RawInput != nil {
		t.Errorf("got %+v", tc)
	}
	if out := mustMarshal(t, tc); string(out) != `{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}` {
		t.Errorf("re-encoded %s", out)
	}
}

// Every Unknown variant of a union decodes the same way on its own: any
// object is kept, with its discriminator, and re-sent byte for byte; a value
// that is not an object is an error. UnknownToolCallContent used to fall
// back to encoding/json's field matching, which kept neither.
func TestUnknownVariantsDecodeDirectly(t *testing.T) {
	const in = `{"type":"video","url":"u","n":[1,2.50]}`
	var c UnknownToolCallContent
	if err := json.Unmarshal([]byte(in), &c); err != nil || c.Type != "video" || string(c.Raw) != in {
		t.Fatalf("got %+v, %v", c, err)
	}
	if out, err := json.Marshal(c); err != nil || string(out) != in {
		t.Errorf("re-encoded as %s, %v", out, err)
	}
	for _, v := range []any{new(UnknownToolCallContent), new(UnknownContent), new(UnknownUpdate), new(UnknownResourceContents)} {
		if err := json.Unmarshal([]byte(`[1]`), v); err == nil {
			t.Errorf("%T: a non-object decoded", v)
		}
	}
}
