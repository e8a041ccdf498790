// Package v2wire holds the wire types of ACP v2, generated from the v2
// schema of the pinned SDK (wire_gen.go, see internal/schemagen), and the
// two hand-written types they are built of. It is internal: users see only
// the model of package acp, which the client maps these types onto.
package v2wire

import (
	"bytes"
	"encoding/json"
)

// Raw is a JSON value kept as its bytes: a union the client dispatches on
// its discriminator, _meta, or a free-form object.
type Raw = json.RawMessage

// Patch is an optional field of a v2 upsert that may be null: omitted
// (Set false) leaves the stored value unchanged, null (Set, Null) clears
// it, and a value (Set, not Null) replaces it.
type Patch[T any] struct {
	Set  bool
	Null bool
	V    T
}

// IsZero makes omitzero omit an unset Patch.
func (p Patch[T]) IsZero() bool { return !p.Set }

// UnmarshalJSON is called only when the key is present.
func (p *Patch[T]) UnmarshalJSON(b []byte) error {
	p.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		p.Null = true
		return nil
	}
	return json.Unmarshal(b, &p.V)
}

// MarshalJSON writes null or the value.
func (p Patch[T]) MarshalJSON() ([]byte, error) {
	if p.Null {
		return []byte("null"), nil
	}
	return json.Marshal(p.V)
}
