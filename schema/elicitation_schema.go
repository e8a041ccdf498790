package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/acpclient/acp/internal/jsonscan"
)

// ElicitationSchema is the typed form of a form-mode elicitation's
// requestedSchema (see [ElicitationRequest.Schema]): a flat object
// whose properties are strings, numbers, integers, booleans, single-select
// enums (strings with Enum or OneOf) and multi-select enums. Build the
// answer with [ElicitationSchema.Accept], which checks the values first.
//
// A schema is a plain value: what the agent sent, nothing else. Its
// checks are pure functions of it, which compile the patterns they match
// at each call; [ElicitationSchema.Compile] returns a validator that
// compiles them once. The form a client serves keeps such a validator,
// once per request, and a handler checks against it with
// [ElicitationRequest.Accept] and [ElicitationRequest.Validate].
//
// Decoding is lenient like the rest of the package: an optional field of
// the wrong type reads as absent, an invalid enum option is dropped, and a
// property of a type this package does not know — or of a known type too
// malformed to show (a multi-select without options) — is kept raw as an
// *ElicitationUnknownProperty.
type ElicitationSchema struct {
	Title       string
	Description string
	// Fields are the schema's properties, in the order the agent sent them.
	Fields []ElicitationField
	// Required is the schema's list of required property names, as sent.
	Required []string
	Meta     json.RawMessage
	// AnyValue: a field of an unknown (custom or future) type takes any
	// JSON value, as ACP v2's ElicitationContentValue allows (its Other
	// branch, "preserved as sent"); v1 allows only the listed kinds. A
	// client sets it on the form of a v2 agent's request;
	// ParseElicitationSchema (v1) leaves it false.
	AnyValue bool
}

// ElicitationField is one property of an [ElicitationSchema].
type ElicitationField struct {
	Name     string
	Required bool // Name is in the schema's required list
	Property ElicitationProperty
}

// Field returns the field with the given name, or nil.
func (s *ElicitationSchema) Field(name string) *ElicitationField {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i]
		}
	}
	return nil
}

// ElicitationProperty is the schema of one form field:
//
//   - *ElicitationString ("string"; a single-select enum when Enum or
//     OneOf is set)
//   - *ElicitationNumber ("number")
//   - *ElicitationInteger ("integer")
//   - *ElicitationBoolean ("boolean")
//   - *ElicitationMultiSelect ("array")
//   - *ElicitationUnknownProperty (any other type, raw JSON kept; it must
//     not be rendered as a known input control)
type ElicitationProperty interface {
	// PropertyType is the JSON Schema "type" the agent sent.
	PropertyType() string
	isElicitationProperty()
}

// ElicitationFormat is a string property's format. Values other than the
// constants are kept; they constrain nothing this package checks.
type ElicitationFormat string

// String formats.
const (
	ElicitationFormatEmail    ElicitationFormat = "email"
	ElicitationFormatURI      ElicitationFormat = "uri"
	ElicitationFormatDate     ElicitationFormat = "date"      // YYYY-MM-DD
	ElicitationFormatDateTime ElicitationFormat = "date-time" // RFC 3339
)

// ElicitationOption is a titled enum option: the value to send (Const) and
// what to show (Title, Description). Const and Title are required; an
// option without them is dropped when decoding.
type ElicitationOption struct {
	Const       string          `json:"const"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationString is a string field; with Enum (plain values) or OneOf
// (titled options) it is a single-select enum. A nil bound is no bound;
// lengths count Unicode code points. Pattern is the agent's regular
// expression (ECMA-262 syntax); [ElicitationSchema.Validate] checks it only
// when Go's regexp package accepts it.
type ElicitationString struct {
	Title       string
	Description string
	MinLength   *int
	MaxLength   *int
	Pattern     string
	Format      ElicitationFormat
	Default     *string
	Enum        []string
	OneOf       []ElicitationOption
	Meta        json.RawMessage
}

// Options returns the choices of a single-select enum (titled ones as sent,
// plain values titled with themselves), or nil for a free string.
func (p *ElicitationString) Options() []ElicitationOption {
	if len(p.OneOf) > 0 {
		return p.OneOf
	}
	return plainOptions(p.Enum)
}

// ElicitationNumber is a floating-point field; bounds are inclusive.
type ElicitationNumber struct {
	Title       string
	Description string
	Minimum     *float64
	Maximum     *float64
	Default     *float64
	Meta        json.RawMessage
}

// ElicitationInteger is an integer field; bounds are inclusive.
type ElicitationInteger struct {
	Title       string
	Description string
	Minimum     *int64
	Maximum     *int64
	Default     *int64
	Meta        json.RawMessage
}

// ElicitationBoolean is a yes/no field.
type ElicitationBoolean struct {
	Title       string
	Description string
	Default     *bool
	Meta        json.RawMessage
}

// ElicitationMultiSelect is a multi-select enum ("type": "array"): the
// answer is a list of option values. Enum holds plain values (items of type
// string), AnyOf titled options; exactly one is set.
type ElicitationMultiSelect struct {
	Title       string
	Description string
	MinItems    *int
	MaxItems    *int
	Enum        []string
	AnyOf       []ElicitationOption
	Default     []string
	Meta        json.RawMessage
}

// Options returns the choices, titled ones as sent and plain values titled
// with themselves.
func (p *ElicitationMultiSelect) Options() []ElicitationOption {
	if len(p.AnyOf) > 0 {
		return p.AnyOf
	}
	return plainOptions(p.Enum)
}

// ElicitationUnknownProperty is a property this package cannot show: a
// custom or future type (Type), or a known one without what it needs. Raw is
// the property's schema as sent.
type ElicitationUnknownProperty struct {
	Type string
	Raw  json.RawMessage
}

func (*ElicitationString) PropertyType() string            { return "string" }
func (*ElicitationNumber) PropertyType() string            { return "number" }
func (*ElicitationInteger) PropertyType() string           { return "integer" }
func (*ElicitationBoolean) PropertyType() string           { return "boolean" }
func (*ElicitationMultiSelect) PropertyType() string       { return "array" }
func (p *ElicitationUnknownProperty) PropertyType() string { return p.Type }

func (*ElicitationString) isElicitationProperty()          {}
func (*ElicitationNumber) isElicitationProperty()          {}
func (*ElicitationInteger) isElicitationProperty()         {}
func (*ElicitationBoolean) isElicitationProperty()         {}
func (*ElicitationMultiSelect) isElicitationProperty()     {}
func (*ElicitationUnknownProperty) isElicitationProperty() {}

func plainOptions(values []string) []ElicitationOption {
	if len(values) == 0 {
		return nil
	}
	out := make([]ElicitationOption, len(values))
	for i, v := range values {
		out[i] = ElicitationOption{Const: v, Title: v}
	}
	return out
}

// Schema decodes RequestedSchema. It fails when the request is not in form
// mode, when its schema is not a JSON object, or when the schema is over
// the limit on patterns (see [ParseElicitationSchema]). A handler calls
// [ElicitationRequest.Schema] instead, which does not decode it again.
func (r *CreateElicitationRequest) Schema() (*ElicitationSchema, error) {
	if r.Mode != ElicitationModeForm {
		return nil, errors.New("acp: elicitation mode " + strconv.Quote(string(r.Mode)) + " has no requested schema")
	}
	return ParseElicitationSchema(r.RequestedSchema)
}

// ParseElicitationSchema decodes a requestedSchema (see [ElicitationSchema]
// for how leniently) and measures its patterns. It fails when raw is not a
// JSON object, and with an error wrapping [ErrLimitExceeded] when the
// patterns of the schema's string fields hold more than 4096 bytes or
// compile to more than 4096 instructions together (the default of
// [Limits].MaxElicitationPatternBytes, which a client applies to the
// requests it serves).
func ParseElicitationSchema(raw json.RawMessage) (*ElicitationSchema, error) {
	return ParseElicitationSchemaLimit(raw, DefaultElicitationPatternBytes)
}

// ParseElicitationSchemaLimit is [ParseElicitationSchema] with
// maxPatternBytes, not [DefaultElicitationPatternBytes], as the bound on
// the patterns' bytes and compiled instructions (a client passes its
// Limits.MaxElicitationPatternBytes); zero or less means the default.
func ParseElicitationSchemaLimit(raw json.RawMessage, maxPattern int) (*ElicitationSchema, error) {
	if maxPattern <= 0 {
		maxPattern = DefaultElicitationPatternBytes
	}
	const typ = "elicitation schema"
	var w struct {
		Title       wireStr          `json:"title"`
		Description wireStr          `json:"description"`
		Properties  wireRaw          `json:"properties"`
		Required    wireList[string] `json:"required"`
		Meta        wireMeta         `json:"_meta"`
	}
	if err := jsonObject(raw); err != nil {
		return nil, errDecode(typ, err)
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, errDecode(typ, err)
	}
	s := &ElicitationSchema{Title: w.Title.v, Description: w.Description.v, Required: w.Required.v, Meta: w.Meta.raw()}
	required := make(map[string]bool, len(s.Required))
	for _, n := range s.Required {
		required[n] = true
	}
	index := make(map[string]int)
	budget := &patternBudget{max: maxPattern}
	sc := jsonscan.NewObj(w.Properties.v, true)
	for {
		key, plain, val, ok := sc.Next()
		if !ok {
			break
		}
		// A name with escapes, or with bytes that are not UTF-8, reads as
		// encoding/json reads it (each bad byte U+FFFD), as the required
		// list does: an answer encoded with encoding/json then names the
		// field the schema names.
		name := string(key)
		if (!plain || !utf8.Valid(key)) && json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &name) != nil {
			continue
		}
		prop, err := decodeElicitationProperty(name, val, budget)
		if err != nil {
			return nil, err
		}
		f := ElicitationField{Name: name, Required: required[name], Property: prop}
		if i, dup := index[name]; dup { // the last one wins, as in encoding/json
			s.Fields[i] = f
			continue
		}
		index[name] = len(s.Fields)
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

// decodeElicitationProperty decodes one property schema; see
// [ElicitationSchema] for what becomes unknown. It charges a string
// field's pattern to the budget, and fails only when that is over it.
func decodeElicitationProperty(name string, raw []byte, budget *patternBudget) (ElicitationProperty, error) {
	p := decodeElicitationPropertyRaw(raw)
	if sp, ok := p.(*ElicitationString); ok && sp.Pattern != "" {
		if err := budget.charge(name, sp.Pattern); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func decodeElicitationPropertyRaw(raw []byte) ElicitationProperty {
	unknown := func(t string) ElicitationProperty {
		return &ElicitationUnknownProperty{Type: t, Raw: rawCopy(raw)}
	}
	tv, found, err := jsonFindKey(raw, "type")
	if err != nil || !found {
		return unknown("")
	}
	t, ok := jsonString(tv)
	if !ok {
		return unknown("")
	}
	var c struct {
		Title       wireStr  `json:"title"`
		Description wireStr  `json:"description"`
		Meta        wireMeta `json:"_meta"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return unknown(t)
	}
	switch t {
	case "string":
		var w struct {
			MinLength wireInt                     `json:"minLength"`
			MaxLength wireInt                     `json:"maxLength"`
			Pattern   wireStr                     `json:"pattern"`
			Format    wireStr                     `json:"format"`
			Default   wireStr                     `json:"default"`
			Enum      wireList[string]            `json:"enum"`
			OneOf     wireList[ElicitationOption] `json:"oneOf"`
		}
		if json.Unmarshal(raw, &w) != nil {
			return unknown(t)
		}
		// An enum whose options were all invalid is not a free string.
		if (w.Enum.ok || w.OneOf.ok) && len(w.Enum.v) == 0 && len(w.OneOf.v) == 0 {
			return unknown(t)
		}
		return &ElicitationString{Title: c.Title.v, Description: c.Description.v,
			MinLength: w.MinLength.count(), MaxLength: w.MaxLength.count(), Pattern: w.Pattern.v,
			Format: ElicitationFormat(w.Format.v), Default: w.Default.ptr(),
			Enum: nonEmpty(w.Enum.v), OneOf: nonEmpty(w.OneOf.v), Meta: c.Meta.raw()}
	case "number":
		var w struct {
			Minimum wireOpt[float64] `json:"minimum"`
			Maximum wireOpt[float64] `json:"maximum"`
			Default wireOpt[float64] `json:"default"`
		}
		if json.Unmarshal(raw, &w) != nil {
			return unknown(t)
		}
		return &ElicitationNumber{Title: c.Title.v, Description: c.Description.v,
			Minimum: w.Minimum.ptr(), Maximum: w.Maximum.ptr(), Default: w.Default.ptr(), Meta: c.Meta.raw()}
	case "integer":
		var w struct {
			Minimum wireInt `json:"minimum"`
			Maximum wireInt `json:"maximum"`
			Default wireInt `json:"default"`
		}
		if json.Unmarshal(raw, &w) != nil {
			return unknown(t)
		}
		return &ElicitationInteger{Title: c.Title.v, Description: c.Description.v,
			Minimum: w.Minimum.ptr(), Maximum: w.Maximum.ptr(), Default: w.Default.ptr(), Meta: c.Meta.raw()}
	case "boolean":
		var w struct {
			Default wireOpt[bool] `json:"default"`
		}
		if json.Unmarshal(raw, &w) != nil {
			return unknown(t)
		}
		return &ElicitationBoolean{Title: c.Title.v, Description: c.Description.v, Default: w.Default.ptr(), Meta: c.Meta.raw()}
	case "array":
		var w struct {
			MinItems wireInt          `json:"minItems"`
			MaxItems wireInt          `json:"maxItems"`
			Items    wireRaw          `json:"items"`
			Default  wireList[string] `json:"default"`
		}
		if json.Unmarshal(raw, &w) != nil {
			return unknown(t)
		}
		var items struct {
			Type  wireStr                     `json:"type"`
			Enum  wireList[string]            `json:"enum"`
			AnyOf wireList[ElicitationOption] `json:"anyOf"`
		}
		if jsonObject(w.Items.v) != nil || json.Unmarshal(w.Items.v, &items) != nil {
			return unknown(t)
		}
		p := &ElicitationMultiSelect{Title: c.Title.v, Description: c.Description.v,
			MinItems: w.MinItems.count(), MaxItems: w.MaxItems.count(), Default: nonEmpty(w.Default.v), Meta: c.Meta.raw()}
		switch {
		case items.Type.seen && items.Type.v == "string" && len(items.Enum.v) > 0:
			p.Enum = items.Enum.v
		case !items.Type.seen && len(items.AnyOf.v) > 0:
			p.AnyOf = items.AnyOf.v
		default: // custom item types, or no usable option
			return unknown(t)
		}
		return p
	}
	return unknown(t)
}

func nonEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// wireInt is an optional int64 that never fails: an integral JSON number
// in range, else absent. count reads it as a bound (minLength, maxItems).
type wireInt struct {
	v  int64
	ok bool
}

func (w *wireInt) UnmarshalJSON(b []byte) error {
	w.v, w.ok = jsonInteger(b)
	return nil
}

func (w wireInt) ptr() *int64 {
	if !w.ok {
		return nil
	}
	v := w.v
	return &v
}

// count reads the integer as a non-negative count; a negative or too large
// value reads as absent (no bound).
func (w wireInt) count() *int {
	if !w.ok || w.v < 0 || w.v > math.MaxInt32 {
		return nil
	}
	n := int(w.v)
	return &n
}

// jsonInteger reads an integral JSON number ("3", "3.0", "3e2") that fits in
// an int64.
func jsonInteger(b []byte) (int64, bool) {
	var n json.Number
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] == '"' || json.Unmarshal(b, &n) != nil {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// Defaults returns the default value of every field that declares one, as
// the values of [ElicitationSchema.Accept] take them: a form SHOULD start
// from them.
func (s *ElicitationSchema) Defaults() map[string]any {
	out := make(map[string]any)
	for _, f := range s.Fields {
		switch p := f.Property.(type) {
		case *ElicitationString:
			if p.Default != nil {
				out[f.Name] = *p.Default
			}
		case *ElicitationNumber:
			if p.Default != nil {
				out[f.Name] = *p.Default
			}
		case *ElicitationInteger:
			if p.Default != nil {
				out[f.Name] = *p.Default
			}
		case *ElicitationBoolean:
			if p.Default != nil {
				out[f.Name] = *p.Default
			}
		case *ElicitationMultiSelect:
			if p.Default != nil {
				out[f.Name] = append([]string(nil), p.Default...)
			}
		}
	}
	return out
}
