package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Replay cursors as values (ACP v2 session/resume replayFrom); how a
// session is resumed with one is in resume_v2.go.

// ReplayCursor is where a v2 session/resume replay begins, inclusive
// (schema v2 ReplayFrom): an opaque JSON object with a string "type". The
// zero value is the start cursor, {"type":"start"}. A cursor keeps the
// payload it was made from unchanged (Raw), so an unknown or custom one
// reaches the agent as given. Unstable: ACP v2 is in Preview; may change.
type ReplayCursor struct {
	raw json.RawMessage // nil: start
	typ string
}

// ReplayFromStart is the cursor that replays all retained history (the
// zero ReplayCursor). Unstable: ACP v2 is in Preview; may change.
func ReplayFromStart() ReplayCursor { return ReplayCursor{} }

// ParseReplayCursor makes a cursor of raw, a JSON object with a string
// "type" (other members are kept as they are). Unstable: ACP v2 is in
// Preview; may change.
func ParseReplayCursor(raw []byte) (ReplayCursor, error) {
	raw = bytes.TrimSpace(raw)
	var w struct {
		Type *string `json:"type"`
	}
	if len(raw) == 0 || raw[0] != '{' {
		return ReplayCursor{}, fmt.Errorf("acp: a replay cursor is a JSON object, not %.40q", raw)
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return ReplayCursor{}, fmt.Errorf("acp: replay cursor: %w", err)
	}
	if w.Type == nil || *w.Type == "" {
		return ReplayCursor{}, errors.New(`acp: a replay cursor needs a string "type"`)
	}
	return ReplayCursor{raw: bytes.Clone(raw), typ: *w.Type}, nil
}

// Type is the cursor's type: "start", or a custom ("_…") or future one.
func (c ReplayCursor) Type() string {
	if c.raw == nil {
		return "start"
	}
	return c.typ
}

// IsStart reports whether the cursor replays from the start.
func (c ReplayCursor) IsStart() bool { return c.Type() == "start" }

// Raw returns the cursor's payload as given ({"type":"start"} for the
// zero value); the caller must not modify it.
func (c ReplayCursor) Raw() json.RawMessage {
	if c.raw == nil {
		return json.RawMessage(`{"type":"start"}`)
	}
	return c.raw
}

// String is the payload.
func (c ReplayCursor) String() string { return string(c.Raw()) }

// MarshalJSON writes the payload unchanged.
func (c ReplayCursor) MarshalJSON() ([]byte, error) { return c.Raw(), nil }

// UnmarshalJSON reads a cursor as ParseReplayCursor does.
func (c *ReplayCursor) UnmarshalJSON(b []byte) error {
	v, err := ParseReplayCursor(b)
	if err != nil {
		return err
	}
	*c = v
	return nil
}
