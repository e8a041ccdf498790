package schema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContentBlockDecode(t *testing.T) {
	tests := []struct {
		in   string
		want ContentBlock
	}{
		{`{"type":"text","text":"a"}`, Text("a")},
		{`{"type":"text","text":"a","annotations":null,"_meta":null}`, Text("a")},
		{`{"type":"text","text":"a","annotations":{"audience":["user",3,"bot"],"priority":"high","lastModified":5}}`,
			&TextContent{Text: "a", Annotations: &Annotations{Audience: []Role{RoleUser, "bot"}}}},
		{`{"type":"image","data":"AA==","mimeType":"image/png","uri":7}`, Image("AA==", "image/png")},
		{`{"type":"audio","data":"AA==","mimeType":"audio/wav"}`, Audio("AA==", "audio/wav")},
		{`{"type":"resource_link","uri":"u","name":"n","size":"big","title":null}`, Link("u", "n")},
		{`{"type":"resource_link","uri":"u","name":"n","size":12}`, &ResourceLink{URI: "u", Name: "n", Size: ptr(int64(12))}},
		{`{"type":"resource","resource":{"uri":"u","text":"t","blob":"b"}}`, TextResource("u", "t", "")},
		{`{"type":"resource","resource":{"uri":"u","blob":"AA==","mimeType":5}}`,
			&EmbeddedResource{Resource: &BlobResourceContents{URI: "u", Blob: "AA=="}}},
		{`{"type":"resource","resource":{"uri":"u"}}`,
			&EmbeddedResource{Resource: &UnknownResourceContents{Raw: json.RawMessage(`{"uri":"u"}`)}}},
		{`{"type":"Text","text":"case matters"}`,
			&UnknownContent{Type: "Text", Raw: json.RawMessage(`{"type":"Text","text":"case matters"}`)}},
		{`{"type":"","text":"empty type"}`,
			&UnknownContent{Type: "", Raw: json.RawMessage(`{"type":"","text":"empty type"}`)}},
	}
	for _, tt := range tests {
		got, err := unmarshalContentBlock([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if d := cmp.Diff(tt.want, got, rawCmp); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, d)
		}
	}
}

// A block of a known type that is malformed is an error; it must never come
// back as another variant (or as unknown, which would hide the fault).
func TestContentBlockMalformedKnownType(t *testing.T) {
	for _, in := range []string{
		`{"type":"text"}`,
		`{"type":"text","text":null}`,
		`{"type":"text","text":["a"]}`,
		`{"type":"image","mimeType":"image/png"}`,
		`{"type":"image","data":"AA=="}`,
		`{"type":"audio","data":1,"mimeType":"audio/wav"}`,
		`{"type":"resource_link","uri":"u"}`,
		`{"type":"resource_link","name":"n"}`,
		`{"type":"resource"}`,
		`{"type":"resource","resource":"file:///x"}`,
		`{"type":"resource","resource":{"text":"t"}}`,
		`{"type":"resource","resource":{"uri":"u","blob":5}}`,
		`{"text":"no type"}`,
		`{"type":null,"text":"x"}`,
		`{"type":1}`,
		`"text"`,
		`null`,
		`{"type":"unknown_but_invalid_json",}`,
	} {
		if got, err := unmarshalContentBlock([]byte(in)); err == nil {
			t.Errorf("%s: decoded as %#v", in, got)
		}
	}
}

func TestContentBlockEncode(t *testing.T) {
	tests := []struct {
		c    ContentBlock
		want string
	}{
		{Text("hi"), `{"type":"text","text":"hi"}`},
		{&TextContent{Text: "", Meta: json.RawMessage(`{"a":1}`)}, `{"type":"text","text":"","_meta":{"a":1}}`},
		{Image("AA==", "image/png"), `{"type":"image","data":"AA==","mimeType":"image/png"}`},
		{Audio("AA==", "audio/wav"), `{"type":"audio","data":"AA==","mimeType":"audio/wav"}`},
		{Link("file:///a", "a"), `{"type":"resource_link","uri":"file:///a","name":"a"}`},
		{&ResourceLink{URI: "u", Name: "n", Size: ptr(int64(0))}, `{"type":"resource_link","uri":"u","name":"n","size":0}`},
		{TextResource("file:///a", "x", "text/plain"), `{"type":"resource","resource":{"uri":"file:///a","text":"x","mimeType":"text/plain"}}`},
		{&TextContent{Text: "a", Annotations: &Annotations{Audience: []Role{RoleAssistant}, Priority: ptr(0.0)}},
			`{"type":"text","text":"a","annotations":{"audience":["assistant"],"priority":0}}`},
		{&UnknownContent{Type: "x"}, `{"type":"x"}`},
		{&UnknownContent{Type: "x", Raw: json.RawMessage(`{"type":"x","k":[1]}`)}, `{"type":"x","k":[1]}`},
	}
	for _, tt := range tests {
		got, err := marshalContentBlock(tt.c)
		if err != nil {
			t.Errorf("%#v: %v", tt.c, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
	}
	if _, err := marshalContentBlock(nil); err == nil {
		t.Error("nil block encoded")
	}
	if _, err := json.Marshal(&EmbeddedResource{}); err == nil {
		t.Error("embedded resource without contents encoded")
	}
}
