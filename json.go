package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/jsonscan"
)

// This file holds the JSON building blocks shared by the wire types.
//
// Decoding policy, mirroring the schema's x-deserialize-* marks:
//
//   - Optional fields (default-on-error) decode through the wire* types below,
//     which never fail: a value of the wrong JSON type reads as "not sent".
//   - Lists marked skip-invalid-items decode through wireList, which drops the
//     elements that do not decode and keeps the rest.
//   - Required fields and discriminators are strict: a missing or malformed one
//     makes the enclosing object fail, so a known variant is never half-decoded
//     and never mistaken for another one.
//   - Unknown fields are ignored; unknown variants are kept as raw JSON.
//
// Every wire* type records whether its key was present (seen), so a required
// field can be told apart from a merely malformed one.

// Field is a three-state JSON field: absent (Present false), null (Present
// true, Value nil) or a value. It exists for the one stable v1 type with patch
// semantics, [SessionInfoUpdate], where null clears a value and an absent key
// leaves it unchanged.
//
// Field implements IsZero, so a containing struct tags it `json:",omitzero"`
// to leave an absent field out. Its MarshalJSON writes null for a present
// field without a value. Its UnmarshalJSON is strict (a value that is not a T
// is an error); the types that hold a Field decode it leniently themselves.
type Field[T any] struct {
	Present bool
	Value   *T
}

// SetField returns a present Field holding v.
func SetField[T any](v T) Field[T] { return Field[T]{Present: true, Value: &v} }

// NullField returns a present Field holding JSON null.
func NullField[T any]() Field[T] { return Field[T]{Present: true} }

// IsZero reports whether the field is absent (used by `omitzero`).
func (f Field[T]) IsZero() bool { return !f.Present }

// MarshalJSON encodes the value, or null when there is none. Absence cannot
// be expressed by a value's own encoder; the container omits the key.
func (f Field[T]) MarshalJSON() ([]byte, error) {
	if f.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*f.Value)
}

// UnmarshalJSON marks the field present; null leaves Value nil.
func (f *Field[T]) UnmarshalJSON(b []byte) error {
	if jsonIsNull(b) {
		*f = Field[T]{Present: true}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Field[T]{Present: true, Value: &v}
	return nil
}

// wireField decodes a Field leniently: a malformed value reads as absent
// (default-on-error; the default of a patch field is "unchanged").
type wireField[T any] struct{ f Field[T] }

func (w *wireField[T]) UnmarshalJSON(b []byte) error {
	var f Field[T]
	if f.UnmarshalJSON(b) != nil {
		f = Field[T]{}
	}
	w.f = f
	return nil
}

// wireStr is a string field that never fails: ok only when a JSON string was
// sent. Strings without escapes are taken without a second parse, which
// matters on the session/update hot path.
type wireStr struct {
	v        string
	ok, seen bool
}

func (w *wireStr) UnmarshalJSON(b []byte) error {
	w.v, w.ok = jsonString(b)
	w.seen = true
	return nil
}

func (w wireStr) ptr() *string {
	if !w.ok {
		return nil
	}
	s := w.v
	return &s
}

// wireOpt is a field of any type that never fails: ok only when the value
// decoded as a T (null is "not sent").
type wireOpt[T any] struct {
	v        T
	ok, seen bool
}

func (w *wireOpt[T]) UnmarshalJSON(b []byte) error {
	var v T
	w.seen = true
	if jsonIsNull(b) || json.Unmarshal(b, &v) != nil {
		w.v, w.ok = v, false
		return nil
	}
	w.v, w.ok = v, true
	return nil
}

func (w wireOpt[T]) ptr() *T {
	if !w.ok {
		return nil
	}
	v := w.v
	return &v
}

// wireList is a list that skips invalid items and reads a non-array (null
// included) as absent. A present array, even an empty one or one whose items
// were all dropped, yields a non-nil slice: for patch types "[]" means
// "replace with nothing", which differs from absent.
type wireList[T any] struct {
	v        []T
	ok, seen bool
}

func (w *wireList[T]) UnmarshalJSON(b []byte) error {
	w.seen = true
	w.v, w.ok = nil, false
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		return nil
	}
	var items []wireItem[T]
	if json.Unmarshal(b, &items) != nil {
		return nil
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if it.ok {
			out = append(out, it.v)
		}
	}
	w.v, w.ok = out, true
	return nil
}

type wireItem[T any] struct {
	v  T
	ok bool
}

// A null item is invalid too: no list in the schema has nullable items, and
// encoding/json would otherwise turn it into a zero value.
func (w *wireItem[T]) UnmarshalJSON(b []byte) error {
	w.ok = !jsonIsNull(b) && json.Unmarshal(b, &w.v) == nil
	return nil
}

// wireMeta keeps _meta as raw JSON, but only when it is an object (the schema
// types it object|null with default-on-error).
type wireMeta json.RawMessage

func (w *wireMeta) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '{' {
		*w = append(wireMeta(nil), b...)
	} else {
		*w = nil
	}
	return nil
}

func (w wireMeta) raw() json.RawMessage { return json.RawMessage(w) }

// wireRaw keeps any JSON value as raw bytes (a copy: the input buffer is not
// ours to keep); null reads as absent.
type wireRaw struct {
	v    json.RawMessage
	seen bool
}

func (w *wireRaw) UnmarshalJSON(b []byte) error {
	w.seen = true
	if jsonIsNull(b) {
		w.v = nil
		return nil
	}
	w.v = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// wireObject keeps a JSON object as raw bytes (a copy); null reads as
// absent, and any other value is an error, for an optional object the
// package passes on without decoding (inner MCP params).
type wireObject struct {
	v   json.RawMessage
	err error
}

func (w *wireObject) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	w.v, w.err = nil, nil
	switch {
	case jsonIsNull(b):
	case len(b) > 0 && b[0] == '{':
		w.v = append(json.RawMessage(nil), b...)
	default:
		w.err = errors.New("not an object")
	}
	return nil
}

// wireAny keeps any JSON value, null included, for values where null is
// meaningful (a JSON-RPC request id may be null).
type wireAny struct {
	v    json.RawMessage
	seen bool
}

func (w *wireAny) UnmarshalJSON(b []byte) error {
	w.seen = true
	w.v = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// errMissing reports a required field that is absent or not of its type.
func errMissing(typ, field string) error {
	return fmt.Errorf("acp: %s: missing or invalid required field %q", typ, field)
}

// errDecode wraps a JSON error with the type being decoded.
func errDecode(typ string, err error) error {
	return fmt.Errorf("acp: %s: %w", typ, err)
}

var (
	errNotObject = errors.New("not a JSON object")
	errSyntax    = errors.New("invalid JSON")
)

func jsonIsNull(b []byte) bool {
	return string(bytes.TrimSpace(b)) == "null"
}

// jsonString decodes a JSON string; ok is false for any other JSON value.
func jsonString(b []byte) (string, bool) {
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

// jsonDiscriminator finds the top-level key of a JSON object and returns its
// string value unescaped. For the common case of a plain string the result
// aliases data, so `switch string(v)` costs no allocation. found is false when
// the key is absent or null (the schema's unions read a null discriminator
// as an absent one); err is set when data is not an object or the value is
// neither a string nor null. The scan does not validate the rest of data: the decoder that
// runs next does.
func jsonDiscriminator(data []byte, key string) (v []byte, found bool, err error) {
	raw, found, err := jsonFindKey(data, key)
	if err != nil || !found {
		return nil, found, err
	}
	if in, ok := jsonscan.Plain(raw); ok {
		return in, true, nil
	}
	if jsonIsNull(raw) {
		return nil, false, nil
	}
	s, ok := jsonString(raw)
	if !ok {
		return nil, true, fmt.Errorf("%q is not a string", key)
	}
	return []byte(s), true, nil
}

// jsonFindKey returns the raw value of the first occurrence of key at the
// top level of the JSON object data (see jsonscan.FindKey).
func jsonFindKey(data []byte, key string) (val []byte, found bool, err error) {
	return jsonscan.FindKey(data, key)
}

// jsonHasKey reports whether the JSON object data has key at its top level;
// false when data is not an object.
func jsonHasKey(data []byte, key string) bool {
	return jsonscan.HasKey(data, key)
}

// jsonObject checks that b is a syntactically valid JSON object, for unknown
// variants whose bytes are kept and later re-sent unchanged.
func jsonObject(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errNotObject
	}
	if !json.Valid(b) {
		return errSyntax
	}
	return nil
}

// rawCopy returns a trimmed copy of b, so kept raw JSON never aliases a
// reused read buffer.
func rawCopy(b []byte) json.RawMessage {
	return append(json.RawMessage(nil), bytes.TrimSpace(b)...)
}

// marshalRaw re-sends a kept raw value unchanged, or fallback when there is
// none (an Unknown variant built by hand). The MarshalJSON methods built on it
// return Raw byte for byte; note that encoding/json then compacts what a
// MarshalJSON returns and, unless the Encoder has SetEscapeHTML(false),
// escapes <, > and & in it, so the bytes on the wire are only identical when
// Raw is compact and HTML-free or the encoder is told not to escape.
func marshalRaw(raw json.RawMessage, fallback func() ([]byte, error)) ([]byte, error) {
	if len(raw) == 0 {
		return fallback()
	}
	return raw, nil
}

// orEmpty makes a required list encode as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// enumString is how every enum decodes: any JSON string is kept, even an
// unknown one; any other JSON value reads as the zero value, never an error.
func enumString(b []byte) string {
	s, _ := jsonString(b)
	return s
}

// wireStrict is a field without x-deserialize-default-on-error: it records
// the error of a malformed value for the enclosing decoder to report,
// instead of failing mid-object. null reads as absent (ok false, no error).
type wireStrict[T any] struct {
	v        T
	ok, seen bool
	err      error
}

func (w *wireStrict[T]) UnmarshalJSON(b []byte) error {
	var v T
	w.seen = true
	w.v, w.ok, w.err = v, false, nil
	if jsonIsNull(b) {
		return nil
	}
	if w.err = json.Unmarshal(b, &v); w.err == nil {
		w.v, w.ok = v, true
	}
	return nil
}

// ptr is the value, or nil when it was absent or null.
func (w wireStrict[T]) ptr() *T {
	if !w.ok {
		return nil
	}
	v := w.v
	return &v
}

// errField reports a field whose value is malformed.
func errField(typ, field string, err error) error {
	return fmt.Errorf("acp: %s: field %q: %w", typ, field, err)
}
