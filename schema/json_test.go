package schema

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites golden files: the "want" part of testdata/golden/*.json and
// the expected states in testdata/turns/*.txtar.
var update = flag.Bool("update", false, "rewrite golden files in testdata")

// jsonEqual compares JSON texts by meaning (key order, spacing and escapes
// do not matter; numbers are compared as written).
func jsonEqual(a, b []byte) bool {
	va, ea := decodeAny(a)
	vb, eb := decodeAny(b)
	if ea != nil || eb != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(va, vb)
}

func decodeAny(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// rawCmp makes cmp compare raw JSON by meaning.
var rawCmp = cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) })

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

// ---- golden files ----

// goldenFile is one case in testdata/golden: the input as an agent or a
// client would send it, which Go type decodes it, and the canonical
// re-encoding (rewritten by -update). Cases named lenient-* may lose data on
// the way (that is their point); every other case must round-trip to the
// same JSON.
type goldenFile struct {
	Type  string          `json:"type"`
	Input json.RawMessage `json:"input"`
	Want  json.RawMessage `json:"want"`
}

func decoderFor[T any](b []byte) (any, error) {
	v := new(T)
	err := json.Unmarshal(b, v)
	return v, err
}

var goldenDecoders = map[string]func([]byte) (any, error){
	"Update": func(b []byte) (any, error) { return decodeUpdate(b) },
	"ContentBlock": func(b []byte) (any, error) {
		return unmarshalContentBlock(b)
	},
	"ToolCallContent": func(b []byte) (any, error) {
		return unmarshalToolCallContent(b)
	},
	"SessionNotification":            decoderFor[SessionNotification],
	"InitializeRequest":              decoderFor[InitializeRequest],
	"InitializeResponse":             decoderFor[InitializeResponse],
	"NewSessionRequest":              decoderFor[NewSessionRequest],
	"NewSessionResponse":             decoderFor[NewSessionResponse],
	"LoadSessionResponse":            decoderFor[LoadSessionResponse],
	"ListSessionsResponse":           decoderFor[ListSessionsResponse],
	"SetSessionConfigOptionRequest":  decoderFor[SetSessionConfigOptionRequest],
	"SetSessionConfigOptionResponse": decoderFor[SetSessionConfigOptionResponse],
	"PromptRequest":                  decoderFor[PromptRequest],
	"PromptResponse":                 decoderFor[PromptResponse],
	"RequestPermissionRequest":       decoderFor[RequestPermissionRequest],
	"RequestPermissionResponse":      decoderFor[RequestPermissionResponse],
	"CreateElicitationRequest":       decoderFor[CreateElicitationRequest],
	"CreateElicitationResponse":      decoderFor[CreateElicitationResponse],
	"CancelRequestNotification":      decoderFor[CancelRequestNotification],
	"AuthStatus":                     decoderFor[AuthStatus],
	"SessionStatusResponse":          decoderFor[SessionStatusResponse],
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var g goldenFile
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatalf("golden file: %v", err)
			}
			dec := goldenDecoders[g.Type]
			if dec == nil {
				t.Fatalf("no decoder for type %q", g.Type)
			}
			v, err := dec(g.Input)
			if err != nil {
				t.Fatalf("decode input: %v", err)
			}
			out := mustMarshal(t, v)
			if *update {
				g.Want = out
				b, err := json.MarshalIndent(g, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !jsonEqual(out, g.Want) {
				t.Errorf("re-encoded:\n%s\nwant:\n%s", out, g.Want)
			}
			if !strings.HasPrefix(name, "lenient") && !jsonEqual(out, g.Input) {
				t.Errorf("lossy round trip:\n in: %s\nout: %s", g.Input, out)
			}
			// The canonical form decodes to the same value: nothing is lost
			// between decoding and encoding.
			v2, err := dec(g.Want)
			if err != nil {
				t.Fatalf("decode want: %v", err)
			}
			if d := cmp.Diff(v, v2, rawCmp); d != "" {
				t.Errorf("decode(encode(v)) differs (-v +v2):\n%s", d)
			}
			// An unknown variant re-sends its bytes unchanged.
			if m, ok := unknownRaw(v); ok {
				got, err := m.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, bytes.TrimSpace(g.Input)) {
					t.Errorf("unknown variant not re-sent byte for byte:\n got %s\nwant %s", got, g.Input)
				}
			}
		})
	}
}

func unknownRaw(v any) (json.Marshaler, bool) {
	switch v := v.(type) {
	case *UnknownUpdate, *UnknownContent, *UnknownToolCallContent:
		return v.(json.Marshaler), true
	}
	return nil, false
}

// ---- Field ----

func TestFieldThreeStates(t *testing.T) {
	type holder struct {
		F Field[string] `json:"f,omitzero"`
	}
	tests := []struct {
		in   string
		want Field[string]
	}{
		{`{}`, Field[string]{}},
		{`{"f":null}`, NullField[string]()},
		{`{"f":"x"}`, SetField("x")},
		{`{"f":""}`, SetField("")},
	}
	for _, tt := range tests {
		var h holder
		if err := json.Unmarshal([]byte(tt.in), &h); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if d := cmp.Diff(tt.want, h.F); d != "" {
			t.Errorf("%s: decoded (-want +got):\n%s", tt.in, d)
		}
		if out := mustMarshal(t, h); string(out) != tt.in {
			t.Errorf("%s: re-encoded as %s", tt.in, out)
		}
	}
	var h holder
	if err := json.Unmarshal([]byte(`{"f":5}`), &h); err == nil {
		t.Error("Field.UnmarshalJSON accepted a number for a string")
	}
}

// ---- the lenient building blocks ----

func TestWireListSkipsInvalidAndKeepsEmpty(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		ok      bool
		present bool
	}{
		{`{}`, nil, false, false},
		{`{"l":null}`, nil, false, true},
		{`{"l":"x"}`, nil, false, true},
		{`{"l":[]}`, []string{}, true, true},
		{`{"l":[1,"a",null,{},"b"]}`, []string{"a", "b"}, true, true},
	}
	for _, tt := range tests {
		var w struct {
			L wireList[string] `json:"l"`
		}
		if err := json.Unmarshal([]byte(tt.in), &w); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if d := cmp.Diff(tt.want, w.L.v); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.in, d)
		}
		if (w.L.v == nil) != (tt.want == nil) {
			t.Errorf("%s: nil-ness: got %#v", tt.in, w.L.v)
		}
		if w.L.ok != tt.ok || w.L.seen != tt.present {
			t.Errorf("%s: ok=%v seen=%v", tt.in, w.L.ok, w.L.seen)
		}
	}
}

func TestWireMetaKeepsOnlyObjects(t *testing.T) {
	for in, want := range map[string]string{
		`{"_meta":{"a":[1,2]}}`: `{"a":[1,2]}`,
		`{"_meta":null}`:        ``,
		`{"_meta":"x"}`:         ``,
		`{"_meta":[1]}`:         ``,
	} {
		var w struct {
			Meta wireMeta `json:"_meta"`
		}
		if err := json.Unmarshal([]byte(in), &w); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if string(w.Meta) != want {
			t.Errorf("%s: got %q want %q", in, w.Meta, want)
		}
	}
}

func TestJSONDiscriminator(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		found   bool
		wantErr bool
	}{
		{`{"sessionUpdate":"plan"}`, "plan", true, false},
		{` { "a" : {"sessionUpdate":"no"}, "b":[1,"]",{}], "sessionUpdate" : "x\"y" } `, `x"y`, true, false},
		{`{"session\u0055pdate":"esc"}`, "esc", true, false},
		{`{"a":"\\","sessionUpdate":"after-backslash"}`, "after-backslash", true, false},
		{`{"sessionUpdate":"first","sessionUpdate":"second"}`, "first", true, false},
		{`{}`, "", false, false},
		{`{"a":1}`, "", false, false},
		{`{"sessionUpdate":5}`, "", true, true},
		// A null discriminator reads as absent: the default variant where
		// the union has one (AuthMethod, MCPServer), else "missing".
		{`{"sessionUpdate":null}`, "", false, false},
		{`{"sessionUpdate": null }`, "", false, false},
		{`[]`, "", false, true},
		{`"x"`, "", false, true},
		{``, "", false, true},
		{`{"a"`, "", false, true},
		{`{"a":`, "", false, true},
		{`{"a":1 "b":2}`, "", false, true},
		{`{"a":"unterminated`, "", false, true},
	}
	for _, tt := range tests {
		v, found, err := jsonDiscriminator([]byte(tt.in), "sessionUpdate")
		if (err != nil) != tt.wantErr || found != tt.found || string(v) != tt.want {
			t.Errorf("%s: got (%q, %v, %v), want (%q, %v, err=%v)", tt.in, v, found, err, tt.want, tt.found, tt.wantErr)
		}
	}
}

func TestEnumsNeverFail(t *testing.T) {
	var w struct {
		K ToolKind             `json:"k"`
		S ToolCallStatus       `json:"s"`
		R StopReason           `json:"r"`
		P PlanEntryPriority    `json:"p"`
		E PlanEntryStatus      `json:"e"`
		O PermissionOptionKind `json:"o"`
		A Role                 `json:"a"`
	}
	in := `{"k":"teleport","s":5,"r":{"x":1},"p":["high"],"e":null,"o":"allow_sometimes","a":true}`
	if err := json.Unmarshal([]byte(in), &w); err != nil {
		t.Fatalf("enum decoding failed: %v", err)
	}
	if w.K != "teleport" || w.O != "allow_sometimes" {
		t.Errorf("unknown enum values not kept: %+v", w)
	}
	if w.S != "" || w.R != "" || w.P != "" || w.E != "" || w.A != "" {
		t.Errorf("non-strings should read as zero: %+v", w)
	}
}
