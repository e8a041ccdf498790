package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ElicitationAnswerError is an answer that does not match the requested
// schema: one entry per field at fault, in the schema's field order, then
// names the schema does not have. The reasons never quote the user's
// values.
type ElicitationAnswerError struct {
	Fields []ElicitationFieldError
}

// ElicitationFieldError is one field of an [ElicitationAnswerError].
type ElicitationFieldError struct {
	Field  string
	Reason string // e.g. "is required", "is not one of the options"
}

func (e *ElicitationAnswerError) Error() string {
	var b strings.Builder
	b.WriteString("acp: the elicitation answer does not match the requested schema: ")
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strconv.Quote(f.Field))
		b.WriteByte(' ')
		b.WriteString(f.Reason)
	}
	return b.String()
}

// Accept checks values against the schema (see [ElicitationSchema.Validate])
// and returns the accept answer carrying them as content. On a mismatch it
// returns the *ElicitationAnswerError and no answer, so nothing that does
// not match the form is ever sent.
//
// In a client's Create handler, [ElicitationRequest.Accept] does the same
// against the form the client serves, whose patterns it compiled once.
func (s *ElicitationSchema) Accept(values map[string]any) (*CreateElicitationResponse, error) {
	return s.accept(values, nil)
}

func (s *ElicitationSchema) accept(values map[string]any, ps patterns) (*CreateElicitationResponse, error) {
	content, err := s.check(values, ps)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("acp: encoding the elicitation answer: %w", err)
	}
	return &CreateElicitationResponse{Action: ElicitationAccept, Content: b}, nil
}

// Validate checks an answer's values against the schema: every required
// field is present and every value fits its field —
//
//   - string: a Go string within MinLength and MaxLength (in code points),
//     matching Pattern (when Go's regexp accepts it) and Format (email,
//     uri: an absolute URI, date: YYYY-MM-DD, date-time: RFC 3339), and one
//     of the options for a single-select enum;
//   - number: any Go integer or float type or a json.Number, finite,
//     within Minimum and Maximum;
//   - integer: the same, with an integral value that fits in an int64;
//   - boolean: a bool;
//   - multi-select: a []string (or a []any of strings, as encoding/json
//     decodes) of distinct options, within MinItems and MaxItems;
//   - a field of an unknown type takes any of these kinds unchecked (the
//     caller may know the custom type) — and, with AnyValue (the form of a
//     v2 agent's request), any JSON value at all, as v2's
//     ElicitationContentValue allows; a name the schema does not have is
//     refused.
//
// A nil value counts as absent. The error is an *ElicitationAnswerError.
// Validate compiles the patterns it matches at each call; to check many
// answers, [ElicitationSchema.Compile] them once.
func (s *ElicitationSchema) Validate(values map[string]any) error {
	_, err := s.check(values, nil)
	return err
}

// ElicitationValidator checks answers against an [ElicitationSchema] with
// the schema's patterns compiled once, when [ElicitationSchema.Compile]
// made it, rather than at each check: a form that checks what the user
// types, or a client that checks each answer to the form it serves, pays
// for the patterns once. It reads the schema live: a pattern changed since
// is compiled at each check, as the schema's own checks do.
type ElicitationValidator struct {
	schema   *ElicitationSchema
	patterns patterns
}

// Compile compiles the patterns of s's string fields and returns the
// validator that checks answers against s with them.
func (s *ElicitationSchema) Compile() *ElicitationValidator {
	return &ElicitationValidator{schema: s, patterns: compilePatterns(s)}
}

// Validate is [ElicitationSchema.Validate], with the compiled patterns.
func (v *ElicitationValidator) Validate(values map[string]any) error {
	_, err := v.schema.check(values, v.patterns)
	return err
}

// ValidateContent is [ElicitationSchema.ValidateContent], with the
// compiled patterns.
func (v *ElicitationValidator) ValidateContent(content json.RawMessage) error {
	return v.schema.validateContent(content, v.patterns)
}

// Accept is [ElicitationSchema.Accept], with the compiled patterns.
func (v *ElicitationValidator) Accept(values map[string]any) (*CreateElicitationResponse, error) {
	return v.schema.accept(values, v.patterns)
}

// ValidateContent is [ElicitationSchema.Validate] for raw content, as kept
// in [CreateElicitationResponse].Content: it must be a JSON object (absent
// content is an empty answer).
func (s *ElicitationSchema) ValidateContent(content json.RawMessage) error {
	return s.validateContent(content, nil)
}

func (s *ElicitationSchema) validateContent(content json.RawMessage, ps patterns) error {
	values := map[string]any{}
	if len(bytes.TrimSpace(content)) > 0 && !jsonIsNull(content) {
		dec := json.NewDecoder(bytes.NewReader(content))
		dec.UseNumber()
		if err := dec.Decode(&values); err != nil {
			return &ElicitationAnswerError{Fields: []ElicitationFieldError{{Field: "", Reason: "content is not a JSON object"}}}
		}
	}
	_, err := s.check(values, ps)
	return err
}

// check checks values and returns them normalised for encoding; ps are
// the compiled patterns, if any (see patterns).
func (s *ElicitationSchema) check(values map[string]any, ps patterns) (map[string]any, error) {
	var errs []ElicitationFieldError
	out := make(map[string]any, len(values))
	required := make(map[string]bool, len(s.Required))
	for _, n := range s.Required {
		required[n] = true
	}
	known := make(map[string]bool, len(s.Fields))
	for _, f := range s.Fields {
		known[f.Name] = true
		v, ok := values[f.Name]
		if !ok || v == nil {
			if required[f.Name] {
				errs = append(errs, ElicitationFieldError{f.Name, "is required"})
			}
			continue
		}
		norm, reason := checkElicitationValue(f.Property, v, s.AnyValue, ps)
		if reason != "" {
			errs = append(errs, ElicitationFieldError{f.Name, reason})
			continue
		}
		out[f.Name] = norm
	}
	// Required names without a property: the schema is inconsistent, and
	// no value could be checked, so the answer cannot satisfy it.
	for _, n := range s.Required {
		if !known[n] && values[n] == nil {
			errs = append(errs, ElicitationFieldError{n, "is required"})
		}
	}
	var extra []string
	for n := range values {
		if !known[n] && values[n] != nil {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	for _, n := range extra {
		errs = append(errs, ElicitationFieldError{n, "is not a field of the form"})
	}
	if len(errs) > 0 {
		return nil, &ElicitationAnswerError{Fields: errs}
	}
	return out, nil
}

// checkElicitationValue returns v normalised for encoding, or why it does
// not fit p. anyValue: a field of an unknown type takes any JSON value
// (a v2 agent's form). ps matches patterns.
func checkElicitationValue(p ElicitationProperty, v any, anyValue bool, ps patterns) (any, string) {
	switch p := p.(type) {
	case *ElicitationString:
		s, ok := v.(string)
		if !ok {
			return nil, "is not a string"
		}
		n := utf8.RuneCountInString(s)
		switch {
		case p.MinLength != nil && n < *p.MinLength:
			return nil, fmt.Sprintf("is shorter than %d characters", *p.MinLength)
		case p.MaxLength != nil && n > *p.MaxLength:
			return nil, fmt.Sprintf("is longer than %d characters", *p.MaxLength)
		}
		if (len(p.Enum) > 0 || len(p.OneOf) > 0) && !newOptionSet(p.Enum, p.OneOf, 1).has(s) {
			return nil, "is not one of the options"
		}
		if !formatOK(p.Format, s) {
			return nil, "is not a valid " + string(p.Format)
		}
		if p.Pattern != "" && !ps.match(p, s) {
			return nil, "does not match the pattern"
		}
		return s, ""
	case *ElicitationNumber:
		f, ok := numberValue(v)
		switch {
		case !ok:
			return nil, "is not a number"
		case p.Minimum != nil && f < *p.Minimum:
			return nil, "is less than " + strconv.FormatFloat(*p.Minimum, 'g', -1, 64)
		case p.Maximum != nil && f > *p.Maximum:
			return nil, "is greater than " + strconv.FormatFloat(*p.Maximum, 'g', -1, 64)
		}
		return f, ""
	case *ElicitationInteger:
		i, ok := integerValue(v)
		switch {
		case !ok:
			return nil, "is not an integer"
		case p.Minimum != nil && i < *p.Minimum:
			return nil, "is less than " + strconv.FormatInt(*p.Minimum, 10)
		case p.Maximum != nil && i > *p.Maximum:
			return nil, "is greater than " + strconv.FormatInt(*p.Maximum, 10)
		}
		return i, ""
	case *ElicitationBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, "is not a boolean"
		}
		return b, ""
	case *ElicitationMultiSelect:
		list, ok := stringList(v)
		if !ok {
			return nil, "is not a list of strings"
		}
		opts := newOptionSet(p.Enum, p.AnyOf, len(list))
		seen := make(map[string]bool, len(list))
		for _, s := range list {
			if seen[s] {
				return nil, "selects an option twice"
			}
			seen[s] = true
			if !opts.has(s) {
				return nil, "selects a value that is not one of the options"
			}
		}
		switch {
		case p.MinItems != nil && len(list) < *p.MinItems:
			return nil, fmt.Sprintf("selects fewer than %d options", *p.MinItems)
		case p.MaxItems != nil && len(list) > *p.MaxItems:
			return nil, fmt.Sprintf("selects more than %d options", *p.MaxItems)
		}
		return list, ""
	}
	// An unknown property: any content value kind, unchecked.
	switch v := v.(type) {
	case string, bool:
		return v, ""
	}
	if i, ok := integerValue(v); ok {
		return i, ""
	}
	if f, ok := numberValue(v); ok {
		return f, ""
	}
	if list, ok := stringList(v); ok {
		return list, ""
	}
	if anyValue {
		// v2: any other JSON value, preserved as sent (the agent checks
		// it against the property it defined).
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "is not a JSON value"
		}
		return json.RawMessage(b), ""
	}
	return nil, "is not a string, number, boolean or list of strings"
}

// optionSet answers whether a value is one of a field's options (the
// titled ones, or the plain values when there are none, as Options reads
// them) in time linear in the
// options, however many values are looked up: an agent may send thousands
// of options, and a multi-select answer may select each of them.
type optionSet struct {
	plain []string
	opts  []ElicitationOption
	set   map[string]struct{} // when more than one value is looked up
}

func newOptionSet(plain []string, opts []ElicitationOption, lookups int) optionSet {
	o := optionSet{plain: plain}
	if len(opts) > 0 {
		o.plain, o.opts = nil, opts
	}
	if lookups > 1 {
		o.set = make(map[string]struct{}, len(o.plain)+len(o.opts))
		for _, v := range o.plain {
			o.set[v] = struct{}{}
		}
		for _, v := range o.opts {
			o.set[v.Const] = struct{}{}
		}
	}
	return o
}

func (o optionSet) has(v string) bool {
	if o.set != nil {
		_, ok := o.set[v]
		return ok
	}
	return slices.Contains(o.plain, v) || slices.ContainsFunc(o.opts, func(x ElicitationOption) bool { return x.Const == v })
}

func formatOK(f ElicitationFormat, s string) bool {
	switch f {
	case ElicitationFormatEmail:
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	case ElicitationFormatURI:
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	case ElicitationFormatDate:
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case ElicitationFormatDateTime:
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	}
	return true
}

// numberValue reads any Go number (or json.Number) as a finite float64.
func numberValue(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		x, err := n.Float64()
		if err != nil {
			return 0, false
		}
		f = x
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f = float64(rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			f = float64(rv.Uint())
		case reflect.Float32, reflect.Float64:
			f = rv.Float()
		default:
			return 0, false
		}
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// integerValue reads any Go integer, an integral float or a json.Number as
// an int64.
func integerValue(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		return jsonInteger([]byte(n))
	case string, bool, nil:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// stringList reads a []string or a []any of strings.
func stringList(v any) ([]string, bool) {
	switch l := v.(type) {
	case []string:
		return append([]string{}, l...), true
	case []any:
		out := make([]string, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}
