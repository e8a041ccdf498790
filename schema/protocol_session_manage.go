package schema

import "encoding/json"

// Wire types of session archive, status and title (schema 1.29.0,
// unstable); the client's side is in session_manage.go.
//
// Unstable: follows schema.unstable.json; may change.

// ArchiveSessionRequest is the params of session/archive: hide a session
// from the default session/list, keeping it and its history.
//
// Unstable: follows schema.unstable.json; may change.
type ArchiveSessionRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ArchiveSessionResponse is the result of session/archive.
//
// Unstable: follows schema.unstable.json; may change.
type ArchiveSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// UnarchiveSessionRequest is the params of session/unarchive: return an
// archived session to the default session/list, with the same id.
//
// Unstable: follows schema.unstable.json; may change.
type UnarchiveSessionRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// UnarchiveSessionResponse is the result of session/unarchive.
//
// Unstable: follows schema.unstable.json; may change.
type UnarchiveSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionArchiveFilter is ListSessionsRequest.Archived: which sessions
// session/list returns by archive state. Values the schema does not list
// are kept.
//
// Unstable: follows schema.unstable.json; may change.
type SessionArchiveFilter string

// Unstable: follows schema.unstable.json; may change.
const (
	ArchiveExclude SessionArchiveFilter = "exclude" // not archived (the default)
	ArchiveInclude SessionArchiveFilter = "include" // both
	ArchiveOnly    SessionArchiveFilter = "only"    // archived only
)

// SessionStatusRequest is the params of session/status.
//
// Unstable: follows schema.unstable.json; may change.
type SessionStatusRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SessionStatusResponse is the result of session/status: a snapshot of
// whether the agent has the session in memory.
//
// Unstable: follows schema.unstable.json; may change.
type SessionStatusResponse struct {
	Status SessionStatus   `json:"status"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// SessionStatus is whether the agent has a session in memory. A value the
// schema does not list is kept, and means [SessionSaved] (IsOpen reports
// false for it).
//
// Unstable: follows schema.unstable.json; may change.
type SessionStatus string

// Unstable: follows schema.unstable.json; may change.
const (
	// SessionOpen: the agent has the session in memory, for some
	// connection; this client must still load or resume it before use
	// unless it opened it on this connection.
	SessionOpen SessionStatus = "open"
	// SessionSaved: the agent knows the session and can load or resume it.
	SessionSaved SessionStatus = "saved"
)

// IsOpen reports whether the status is [SessionOpen]; any other value,
// known or not, counts as saved, as the schema says.
//
// Unstable: follows schema.unstable.json; may change.
func (s SessionStatus) IsOpen() bool { return s == SessionOpen }

// SetSessionTitleRequest is the params of session/set_title. Title is
// required; the agent may normalize it (see SetSessionTitleResponse).
//
// Unstable: follows schema.unstable.json; may change.
type SetSessionTitleRequest struct {
	SessionID string          `json:"sessionId"`
	Title     string          `json:"title"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionTitleResponse is the result of session/set_title: the title
// the agent stored, which callers should show rather than the one sent.
//
// Unstable: follows schema.unstable.json; may change.
type SetSessionTitleResponse struct {
	Title string          `json:"title"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}
