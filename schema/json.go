package schema

import (
	"encoding/json"

	"github.com/acpclient/acp/internal/wirejson"
)

// This file holds the JSON building blocks of the package's own decoders.
// The rules they follow (what never fails, what is strict, what a list
// drops) are written once, in internal/wirejson, which the generated
// decoders (protocol_gen.go) call directly. What stays here:
//
//   - Field, the three-state patch field of the public model, and
//     wireField, its lenient decoder (the generated code names it, since
//     Field is a type of this package);
//   - the wire* field types of the hand-written decoders (protocol_decode.go,
//     updates*.go, elicitation_schema.go, ...), each a thin shell over the
//     wirejson function that holds its rule, with unexported fields so that
//     those decoders read as before;
//   - short names for the wirejson helpers those decoders call.

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

// wireStr is wirejson.Str for the hand-written decoders.
type wireStr struct {
	v        string
	ok, seen bool
}

func (w *wireStr) UnmarshalJSON(b []byte) error {
	w.v, w.ok = wirejson.String(b)
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

// wireOpt is wirejson.Opt for the hand-written decoders.
type wireOpt[T any] struct {
	v        T
	ok, seen bool
}

func (w *wireOpt[T]) UnmarshalJSON(b []byte) error {
	w.v, w.ok = wirejson.Lenient[T](b)
	w.seen = true
	return nil
}

func (w wireOpt[T]) ptr() *T {
	if !w.ok {
		return nil
	}
	v := w.v
	return &v
}

// wireList is wirejson.List for the hand-written decoders.
type wireList[T any] struct {
	v        []T
	ok, seen bool
}

func (w *wireList[T]) UnmarshalJSON(b []byte) error {
	w.v, w.ok = wirejson.SkipInvalid[T](b)
	w.seen = true
	return nil
}

// wireMeta is wirejson.Meta for the hand-written decoders.
type wireMeta json.RawMessage

func (w *wireMeta) UnmarshalJSON(b []byte) error {
	*w = wireMeta(wirejson.MetaOf(b))
	return nil
}

func (w wireMeta) raw() json.RawMessage { return json.RawMessage(w) }

// wireRaw is wirejson.Raw for the hand-written decoders.
type wireRaw struct {
	v    json.RawMessage
	seen bool
}

func (w *wireRaw) UnmarshalJSON(b []byte) error {
	w.v = wirejson.RawValue(b)
	w.seen = true
	return nil
}

// wireAny is wirejson.Any for the hand-written decoders.
type wireAny struct {
	v    json.RawMessage
	seen bool
}

func (w *wireAny) UnmarshalJSON(b []byte) error {
	w.v = wirejson.RawCopy(b)
	w.seen = true
	return nil
}

// errMissing reports a required field that is absent or not of its type.
func errMissing(typ, field string) error { return wirejson.ErrMissing(typ, field) }

// errDecode wraps a JSON error with the type being decoded.
func errDecode(typ string, err error) error { return wirejson.ErrDecode(typ, err) }

func jsonIsNull(b []byte) bool { return wirejson.IsNull(b) }

// jsonString decodes a JSON string; ok is false for any other JSON value.
func jsonString(b []byte) (string, bool) { return wirejson.String(b) }

// jsonDiscriminator is wirejson.Discriminator: a top-level key's string
// value, aliasing data when it has no escapes.
func jsonDiscriminator(data []byte, key string) (v []byte, found bool, err error) {
	return wirejson.Discriminator(data, key)
}

// jsonFindKey returns the raw value of the first occurrence of key at the
// top level of the JSON object data.
func jsonFindKey(data []byte, key string) (val []byte, found bool, err error) {
	return wirejson.FindKey(data, key)
}

// jsonObject checks that b is a syntactically valid JSON object.
func jsonObject(b []byte) error { return wirejson.CheckObject(b) }

// rawCopy returns a trimmed copy of b.
func rawCopy(b []byte) json.RawMessage { return wirejson.RawCopy(b) }

// marshalRaw re-sends a kept raw value unchanged, or fallback when there is
// none (see wirejson.MarshalRaw for what encoding/json does to it).
func marshalRaw(raw json.RawMessage, fallback func() ([]byte, error)) ([]byte, error) {
	return wirejson.MarshalRaw(raw, fallback)
}

// orEmpty makes a required list encode as [] rather than null.
func orEmpty[T any](s []T) []T { return wirejson.OrEmpty(s) }
