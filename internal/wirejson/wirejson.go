// Package wirejson holds the JSON building blocks of the generated wire
// decoders (protocol_gen.go in package acp, nes_gen.go in package nes, and
// whatever internal/schemagen writes next): lenient field types that never
// fail, the strict field type that records its error, and the helpers a
// decoder calls to find a discriminator, keep raw JSON and word its errors.
// They are exported so that a decoder generated into any package of the
// module can use them; being internal, they are no API of the module.
//
// Decoding policy, mirroring the schema's x-deserialize-* marks:
//
//   - Optional fields (default-on-error) decode through Str, Opt, Meta and
//     Raw, which never fail: a value of the wrong JSON type reads as "not
//     sent".
//   - Lists marked skip-invalid-items decode through List, which drops the
//     elements that do not decode and keeps the rest.
//   - Required fields and discriminators are strict: a missing or malformed
//     one makes the enclosing object fail, so a known variant is never
//     half-decoded and never mistaken for another one.
//   - Unknown fields are ignored; unknown variants are kept as raw JSON.
//
// Every field type records whether its key was present (Seen), so a
// required field can be told apart from a merely malformed one.
//
// Each rule is written once, as a function (String, Lenient, SkipInvalid,
// MetaOf, RawValue, ObjectOf, StrictOf); the field types are those
// functions behind an UnmarshalJSON, so hand-written decoders that keep
// field types of their own still follow the same rules.
//
// Errors keep the "acp: " prefix the module's errors carry, so a decode
// error reads the same whichever package the decoder was generated into.
package wirejson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/jsonscan"
)

// Str is a string field that never fails: OK only when a JSON string was
// sent. Strings without escapes are taken without a second parse, which
// matters on the session/update hot path.
type Str struct {
	V        string
	OK, Seen bool
}

func (w *Str) UnmarshalJSON(b []byte) error {
	w.V, w.OK = String(b)
	w.Seen = true
	return nil
}

// Ptr is the value, or nil when no string was sent.
func (w Str) Ptr() *string {
	if !w.OK {
		return nil
	}
	s := w.V
	return &s
}

// Opt is a field of any type that never fails: OK only when the value
// decoded as a T (null is "not sent").
type Opt[T any] struct {
	V        T
	OK, Seen bool
}

func (w *Opt[T]) UnmarshalJSON(b []byte) error {
	w.V, w.OK = Lenient[T](b)
	w.Seen = true
	return nil
}

// Ptr is the value, or nil when it was absent, null or malformed.
func (w Opt[T]) Ptr() *T {
	if !w.OK {
		return nil
	}
	v := w.V
	return &v
}

// Lenient decodes b as a T; ok is false for null or a value that is not a
// T. v is then what encoding/json made of b before it gave up (the zero T
// for null), which a caller that reads V without checking OK gets as the
// default: the generated decoders of non-pointer fields do.
func Lenient[T any](b []byte) (v T, ok bool) {
	if IsNull(b) || json.Unmarshal(b, &v) != nil {
		return v, false
	}
	return v, true
}

// List is a list that skips invalid items and reads a non-array (null
// included) as absent. A present array, even an empty one or one whose
// items were all dropped, yields a non-nil slice: for patch types "[]"
// means "replace with nothing", which differs from absent.
type List[T any] struct {
	V        []T
	OK, Seen bool
}

func (w *List[T]) UnmarshalJSON(b []byte) error {
	w.V, w.OK = SkipInvalid[T](b)
	w.Seen = true
	return nil
}

// SkipInvalid decodes the JSON array b, dropping the items that are not a
// T (null items included: no list in the schema has nullable items, and
// encoding/json would otherwise turn one into a zero value). ok is false,
// and the slice nil, when b is not an array.
func SkipInvalid[T any](b []byte) ([]T, bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		return nil, false
	}
	var items []item[T]
	if json.Unmarshal(b, &items) != nil {
		return nil, false
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if it.ok {
			out = append(out, it.v)
		}
	}
	return out, true
}

type item[T any] struct {
	v  T
	ok bool
}

func (w *item[T]) UnmarshalJSON(b []byte) error {
	w.ok = !IsNull(b) && json.Unmarshal(b, &w.v) == nil
	return nil
}

// Meta keeps _meta as raw JSON, but only when it is an object (the schema
// types it object|null with default-on-error).
type Meta json.RawMessage

func (w *Meta) UnmarshalJSON(b []byte) error {
	*w = Meta(MetaOf(b))
	return nil
}

// Raw returns the kept object, or nil.
func (w Meta) Raw() json.RawMessage { return json.RawMessage(w) }

// MetaOf returns a copy of b when it is a JSON object, else nil.
func MetaOf(b []byte) json.RawMessage {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '{' {
		return append(json.RawMessage(nil), b...)
	}
	return nil
}

// MetaOnly decodes a type that has nothing but _meta. It never fails:
// agents answer null, {} or, in doc examples, other shapes for empty
// results. The generated decoders of _meta-only params and results use it.
func MetaOnly(b []byte) json.RawMessage {
	var w struct {
		Meta Meta `json:"_meta"`
	}
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	return w.Meta.Raw()
}

// Raw keeps any JSON value as raw bytes (a copy: the input buffer is not
// ours to keep); null reads as absent.
type Raw struct {
	V    json.RawMessage
	Seen bool
}

func (w *Raw) UnmarshalJSON(b []byte) error {
	w.V = RawValue(b)
	w.Seen = true
	return nil
}

// RawValue returns a trimmed copy of b, or nil when b is null.
func RawValue(b []byte) json.RawMessage {
	if IsNull(b) {
		return nil
	}
	return RawCopy(b)
}

// Object keeps a JSON object as raw bytes (a copy); null reads as absent,
// and any other value is an error (Err), for an optional object the module
// passes on without decoding (inner MCP params).
type Object struct {
	V   json.RawMessage
	Err error
}

func (w *Object) UnmarshalJSON(b []byte) error {
	w.V, w.Err = ObjectOf(b)
	return nil
}

// ObjectOf returns a copy of the JSON object b, nil for null, and an error
// for any other value.
func ObjectOf(b []byte) (json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	switch {
	case IsNull(b):
		return nil, nil
	case len(b) > 0 && b[0] == '{':
		return append(json.RawMessage(nil), b...), nil
	}
	return nil, errors.New("not an object")
}

// Any keeps any JSON value, null included, for values where null is
// meaningful (a JSON-RPC request id may be null).
type Any struct {
	V    json.RawMessage
	Seen bool
}

func (w *Any) UnmarshalJSON(b []byte) error {
	w.V = RawCopy(b)
	w.Seen = true
	return nil
}

// Strict is a field without x-deserialize-default-on-error: it records the
// error of a malformed value for the enclosing decoder to report, instead
// of failing mid-object. null reads as absent (OK false, no error).
type Strict[T any] struct {
	V        T
	OK, Seen bool
	Err      error
}

func (w *Strict[T]) UnmarshalJSON(b []byte) error {
	w.V, w.OK, w.Err = StrictOf[T](b)
	w.Seen = true
	return nil
}

// Ptr is the value, or nil when it was absent or null.
func (w Strict[T]) Ptr() *T {
	if !w.OK {
		return nil
	}
	v := w.V
	return &v
}

// StrictOf decodes b as a T: ok for a T, the decoding error for any other
// value but null, which is neither.
func StrictOf[T any](b []byte) (v T, ok bool, err error) {
	if IsNull(b) {
		return v, false, nil
	}
	if err = json.Unmarshal(b, &v); err != nil {
		var zero T
		return zero, false, err
	}
	return v, true, nil
}

// ErrMissing reports a required field that is absent or not of its type.
func ErrMissing(typ, field string) error {
	return fmt.Errorf("acp: %s: missing or invalid required field %q", typ, field)
}

// ErrDecode wraps a JSON error with the type being decoded.
func ErrDecode(typ string, err error) error {
	return fmt.Errorf("acp: %s: %w", typ, err)
}

// ErrField reports a field whose value is malformed.
func ErrField(typ, field string, err error) error {
	return fmt.Errorf("acp: %s: field %q: %w", typ, field, err)
}

var (
	// ErrNotObject is CheckObject's error for a value that is not an object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrSyntax is CheckObject's error for an object that is not valid JSON.
	ErrSyntax = errors.New("invalid JSON")
)

// IsNull reports whether b is JSON null.
func IsNull(b []byte) bool {
	return string(bytes.TrimSpace(b)) == "null"
}

// String decodes a JSON string; ok is false for any other JSON value.
func String(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if in, ok := jsonscan.Plain(b); ok {
		return string(in), true
	}
	if len(b) == 0 || b[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

// Discriminator finds the top-level key of a JSON object and returns its
// string value unescaped. For the common case of a plain string the result
// aliases data, so `switch string(v)` costs no allocation. found is false
// when the key is absent or null (the schema's unions read a null
// discriminator as an absent one); err is set when data is not an object or
// the value is neither a string nor null. The scan does not validate the
// rest of data: the decoder that runs next does.
func Discriminator(data []byte, key string) (v []byte, found bool, err error) {
	raw, found, err := jsonscan.FindKey(data, key)
	if err != nil || !found {
		return nil, found, err
	}
	if in, ok := jsonscan.Plain(raw); ok {
		return in, true, nil
	}
	if IsNull(raw) {
		return nil, false, nil
	}
	s, ok := String(raw)
	if !ok {
		return nil, true, fmt.Errorf("%q is not a string", key)
	}
	return []byte(s), true, nil
}

// FindKey returns the raw value of the first occurrence of key at the top
// level of the JSON object data (see jsonscan.FindKey).
func FindKey(data []byte, key string) (val []byte, found bool, err error) {
	return jsonscan.FindKey(data, key)
}

// HasKey reports whether the JSON object data has key at its top level;
// false when data is not an object.
func HasKey(data []byte, key string) bool {
	return jsonscan.HasKey(data, key)
}

// CheckObject checks that b is a syntactically valid JSON object, for
// unknown variants whose bytes are kept and later re-sent unchanged.
func CheckObject(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return ErrNotObject
	}
	if !json.Valid(b) {
		return ErrSyntax
	}
	return nil
}

// RawCopy returns a trimmed copy of b, so kept raw JSON never aliases a
// reused read buffer.
func RawCopy(b []byte) json.RawMessage {
	return append(json.RawMessage(nil), bytes.TrimSpace(b)...)
}

// MarshalRaw re-sends a kept raw value unchanged, or fallback when there is
// none (an Unknown variant built by hand). The MarshalJSON methods built on
// it return Raw byte for byte; note that encoding/json then compacts what a
// MarshalJSON returns and, unless the Encoder has SetEscapeHTML(false),
// escapes <, > and & in it, so the bytes on the wire are only identical
// when Raw is compact and HTML-free or the encoder is told not to escape.
func MarshalRaw(raw json.RawMessage, fallback func() ([]byte, error)) ([]byte, error) {
	if len(raw) == 0 {
		return fallback()
	}
	return raw, nil
}

// OrEmpty makes a required list encode as [] rather than null.
func OrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Enum is how every enum decodes: any JSON string is kept, even an unknown
// one; any other JSON value reads as the zero value, never an error.
func Enum(b []byte) string {
	s, _ := String(b)
	return s
}
