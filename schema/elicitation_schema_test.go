package schema

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// formSchema uses every property kind the schema defines, in a deliberate
// order, plus what must stay unknown and fields of the wrong type.
const formSchema = `{
  "type": "object",
  "title": "Deploy",
  "description": "Where and how to deploy",
  "properties": {
    "name":     {"type": "string", "title": "Name", "description": "Your name", "minLength": 2, "maxLength": 5, "default": "Ada"},
    "email":    {"type": "string", "format": "email", "pattern": "@example\\.com$"},
    "when":     {"type": "string", "format": "date"},
    "strategy": {"type": "string", "enum": ["safe", 7, "fast"], "default": "safe"},
    "region":   {"type": "string", "oneOf": [{"const": "eu", "title": "Europe", "description": "Frankfurt"}, {"const": "us"}, {"const": "ap", "title": "Asia"}]},
    "ratio":    {"type": "number", "minimum": 0, "maximum": 1.5, "default": 0.5},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3.0},
    "confirm":  {"type": "boolean", "title": "Sure?", "default": true},
    "tags":     {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a", 1]},
    "zones":    {"type": "array", "items": {"anyOf": [{"const": "z1", "title": "Zone 1"}, {"const": "z2", "title": "Zone 2"}]}},
    "color":    {"type": "_x/color", "palette": "web"},
    "broken":   {"type": "array"},
    "noopts":   {"type": "string", "enum": [1, 2]},
    "lenient":  {"type": "string", "minLength": "3", "maxLength": -1, "title": 5},
    "untyped":  {"title": "no type"}
  },
  "required": ["name", "confirm", 3, "region"]
}`

func TestParseElicitationSchema(t *testing.T) {
	s, err := ParseElicitationSchema(json.RawMessage(formSchema))
	if err != nil {
		t.Fatal(err)
	}
	unknown := func(typ, raw string) *ElicitationUnknownProperty {
		return &ElicitationUnknownProperty{Type: typ, Raw: json.RawMessage(raw)}
	}
	want := &ElicitationSchema{
		Title: "Deploy", Description: "Where and how to deploy",
		Required: []string{"name", "confirm", "region"},
		Fields: []ElicitationField{
			{Name: "name", Required: true, Property: &ElicitationString{Title: "Name", Description: "Your name", MinLength: ptr(2), MaxLength: ptr(5), Default: ptr("Ada")}},
			{Name: "email", Property: &ElicitationString{Format: ElicitationFormatEmail, Pattern: `@example\.com$`}},
			{Name: "when", Property: &ElicitationString{Format: ElicitationFormatDate}},
			{Name: "strategy", Property: &ElicitationString{Enum: []string{"safe", "fast"}, Default: ptr("safe")}},
			{Name: "region", Required: true, Property: &ElicitationString{OneOf: []ElicitationOption{{Const: "eu", Title: "Europe", Description: "Frankfurt"}, {Const: "ap", Title: "Asia"}}}},
			{Name: "ratio", Property: &ElicitationNumber{Minimum: ptr(0.0), Maximum: ptr(1.5), Default: ptr(0.5)}},
			{Name: "replicas", Property: &ElicitationInteger{Minimum: ptr[int64](1), Maximum: ptr[int64](9), Default: ptr[int64](3)}},
			{Name: "confirm", Required: true, Property: &ElicitationBoolean{Title: "Sure?", Default: ptr(true)}},
			{Name: "tags", Property: &ElicitationMultiSelect{MinItems: ptr(1), MaxItems: ptr(2), Enum: []string{"a", "b", "c"}, Default: []string{"a"}}},
			{Name: "zones", Property: &ElicitationMultiSelect{AnyOf: []ElicitationOption{{Const: "z1", Title: "Zone 1"}, {Const: "z2", Title: "Zone 2"}}}},
			{Name: "color", Property: unknown("_x/color", `{"type": "_x/color", "palette": "web"}`)},
			{Name: "broken", Property: unknown("array", `{"type": "array"}`)},
			{Name: "noopts", Property: unknown("string", `{"type": "string", "enum": [1, 2]}`)},
			{Name: "lenient", Property: &ElicitationString{}},
			{Name: "untyped", Property: unknown("", `{"title": "no type"}`)},
		},
	}
	// The compiled patterns and the client's bookkeeping are unexported.
	if d := cmp.Diff(want, s, cmpopts.IgnoreUnexported(ElicitationSchema{}, ElicitationString{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := s.Field("region").Property.(*ElicitationString).Options(); len(got) != 2 || got[1].Title != "Asia" {
		t.Errorf("region options %+v", got)
	}
	if got := s.Field("tags").Property.(*ElicitationMultiSelect).Options(); len(got) != 3 || got[0].Const != "a" || got[0].Title != "a" {
		t.Errorf("tags options %+v", got)
	}
	wantDefaults := map[string]any{"name": "Ada", "strategy": "safe", "ratio": 0.5, "replicas": int64(3), "confirm": true, "tags": []string{"a"}}
	if d := cmp.Diff(wantDefaults, s.Defaults()); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

func TestParseElicitationSchemaEdges(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"properties":`} {
		if _, err := ParseElicitationSchema(json.RawMessage(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	// Lenient at the top: wrong-typed title, properties and required.
	s, err := ParseElicitationSchema(json.RawMessage(`{"type":"nope","title":1,"properties":[1],"required":"name"}`))
	if err != nil || len(s.Fields) != 0 || s.Title != "" || s.Required != nil {
		t.Errorf("got %+v, %v", s, err)
	}
	// A duplicate property name: the last one wins, in the first's place.
	s, _ = ParseElicitationSchema(json.RawMessage(`{"properties":{"a":{"type":"string"},"b":{"type":"boolean"},"a":{"type":"integer"},"\u0063":{"type":"number"}}}`))
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name+":"+f.Property.PropertyType())
	}
	if d := cmp.Diff([]string{"a:integer", "b:boolean", "c:number"}, names); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	r := &CreateElicitationRequest{Mode: ElicitationModeURL, URL: "https://x"}
	if _, err := r.Schema(); err == nil {
		t.Error("url mode has a schema")
	}
}

func TestElicitationValidate(t *testing.T) {
	s, err := ParseElicitationSchema(json.RawMessage(formSchema))
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]any{"name": "Ada", "confirm": false, "region": "eu"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []ElicitationFieldError // nil: valid
	}{
		{"minimal", ok, nil},
		{"missing required", map[string]any{"name": "Ada", "region": nil}, []ElicitationFieldError{{"region", "is required"}, {"confirm", "is required"}}},
		{"code points", with("name", "éééé"), nil},
		{"too short", with("name", "A"), []ElicitationFieldError{{"name", "is shorter than 2 characters"}}},
		{"too long", with("name", "Adaline"), []ElicitationFieldError{{"name", "is longer than 5 characters"}}},
		{"not a string", with("name", 5), []ElicitationFieldError{{"name", "is not a string"}}},
		{"email", with("email", "ada@example.com"), nil},
		{"bad email", with("email", "Ada <ada@example.com>"), []ElicitationFieldError{{"email", "is not a valid email"}}},
		{"pattern", with("email", "ada@other.org"), []ElicitationFieldError{{"email", "does not match the pattern"}}},
		{"date", with("when", "2026-11-30"), nil},
		{"bad date", with("when", "30/11/2026"), []ElicitationFieldError{{"when", "is not a valid date"}}},
		{"enum", with("strategy", "fast"), nil},
		{"not in enum", with("strategy", "reckless"), []ElicitationFieldError{{"strategy", "is not one of the options"}}},
		{"not in oneOf", with("region", "us"), []ElicitationFieldError{{"region", "is not one of the options"}}},
		{"number int", with("ratio", 1), nil},
		{"number json", with("ratio", json.Number("1.25")), nil},
		{"number big", with("ratio", 2.0), []ElicitationFieldError{{"ratio", "is greater than 1.5"}}},
		{"number neg", with("ratio", float32(-1)), []ElicitationFieldError{{"ratio", "is less than 0"}}},
		{"number string", with("ratio", "1"), []ElicitationFieldError{{"ratio", "is not a number"}}},
		{"integer", with("replicas", uint8(9)), nil},
		{"integral float", with("replicas", 4.0), nil},
		{"fraction", with("replicas", 4.5), []ElicitationFieldError{{"replicas", "is not an integer"}}},
		{"integer low", with("replicas", 0), []ElicitationFieldError{{"replicas", "is less than 1"}}},
		{"boolean", with("confirm", "yes"), []ElicitationFieldError{{"confirm", "is not a boolean"}}},
		{"tags", with("tags", []string{"a", "c"}), nil},
		{"tags any", with("tags", []any{"b"}), nil},
		{"tags none", with("tags", []string{}), []ElicitationFieldError{{"tags", "selects fewer than 1 options"}}},
		{"tags many", with("tags", []string{"a", "b", "c"}), []ElicitationFieldError{{"tags", "selects more than 2 options"}}},
		{"tags twice", with("tags", []string{"a", "a"}), []ElicitationFieldError{{"tags", "selects an option twice"}}},
		{"tags other", with("tags", []string{"d"}), []ElicitationFieldError{{"tags", "selects a value that is not one of the options"}}},
		{"tags kind", with("tags", "a"), []ElicitationFieldError{{"tags", "is not a list of strings"}}},
		{"zones", with("zones", []string{"z2"}), nil},
		{"custom", with("color", "#fff"), nil},
		{"custom kind", with("color", map[string]any{}), []ElicitationFieldError{{"color", "is not a string, number, boolean or list of strings"}}},
		{"extra", with("zzz", 1, "aaa", 2), []ElicitationFieldError{{"aaa", "is not a field of the form"}, {"zzz", "is not a field of the form"}}},
	} {
		err := s.Validate(tc.values)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ae *ElicitationAnswerError
		if !errors.As(err, &ae) {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, ae.Fields); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestElicitationAccept(t *testing.T) {
	s, err := ParseElicitationSchema(json.RawMessage(formSchema))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Accept(map[string]any{"name": "Ada", "confirm": true, "region": "eu", "replicas": 4.0, "ratio": json.Number("0.25"), "tags": []any{"b"}, "email": nil})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"confirm":true,"name":"Ada","ratio":0.25,"region":"eu","replicas":4,"tags":["b"]}`
	if resp.Action != ElicitationAccept || string(resp.Content) != want {
		t.Errorf("got %s %s, want %s", resp.Action, resp.Content, want)
	}
	if err := s.ValidateContent(resp.Content); err != nil {
		t.Errorf("own answer: %v", err)
	}
	if _, err := s.Accept(map[string]any{"name": "A"}); err == nil || err.Error() != `acp: the elicitation answer does not match the requested schema: "name" is shorter than 2 characters; "region" is required; "confirm" is required` {
		t.Errorf("error %v", err)
	}
	for _, c := range []string{`[]`, `{"name":`, `"x"`} {
		if s.ValidateContent(json.RawMessage(c)) == nil {
			t.Errorf("content %s accepted", c)
		}
	}
}

// A property named with bytes that are not UTF-8 reads as encoding/json
// reads names (each bad byte U+FFFD): so the required list, decoded that
// way, names it, and an answer the client encodes passes its own check.
// (Found by FuzzParseElicitationSchema: "\xd8" kept raw, answered as
// "\ufffd", refused as no field of the form.)
func TestElicitationFieldNameNotUTF8(t *testing.T) {
	s, err := ParseElicitationSchema(json.RawMessage("{\"properties\":{\"\xd8\xd9\":{\"type\":\"string\",\"default\":\"x\"}},\"required\":[\"\xd8\xd9\"]}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fields) != 1 || s.Fields[0].Name != "\ufffd\ufffd" || !s.Fields[0].Required {
		t.Fatalf("fields %+v, want one required field named \"\\ufffd\\ufffd\"", s.Fields)
	}
	resp, err := s.Accept(s.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateContent(resp.Content); err != nil {
		t.Errorf("Accept made %s, which fails: %v", resp.Content, err)
	}
}

func FuzzParseElicitationSchema(f *testing.F) {
	f.Add([]byte(formSchema))
	f.Add([]byte(`{"properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}}}`))
	f.Add([]byte(`{"properties":{"s":{"type":"string","pattern":"^(a{2,5}|[\\pL-]*)+$","default":"aa"},"t":{"type":"string","pattern":"(?=x)"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseElicitationSchema(b)
		if err != nil {
			return
		}
		// The schema's own defaults never crash the validator, and an
		// accepted answer always passes its own check.
		if resp, err := s.Accept(s.Defaults()); err == nil {
			if err := s.ValidateContent(resp.Content); err != nil {
				t.Fatalf("Accept made %s, which fails: %v", resp.Content, err)
			}
		}
	})
}
