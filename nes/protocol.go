package nes

import (
	"encoding/json"

	"github.com/acpclient/acp/internal/wirejson"
)

// The wire types of next-edit suggestions, in the 1.21.0 shapes the module
// speaks for NES (internal/schemagen/frozen.json says why). Their decoders
// are generated into nes_gen.go; the requests and notifications the client
// only sends have none. The capability types the agent announces in
// initialize (schema.NESCapabilities, schema.PositionEncodingKind, ...) stay in
// package acp, because schema.AgentCapabilities carries them.

// Position is a zero-based line and character offset, the character
// counted in the negotiated encoding ([PositionEncoding]).
//
// Unstable: follows schema.unstable.json; may change.
type Position struct {
	Line      uint32          `json:"line"`
	Character uint32          `json:"character"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Range is a span of a document, End exclusive.
//
// Unstable: follows schema.unstable.json; may change.
type Range struct {
	Start Position        `json:"start"`
	End   Position        `json:"end"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// WorkspaceFolder is a folder of the editor's workspace.
//
// Unstable: follows schema.unstable.json; may change.
type WorkspaceFolder struct {
	URI  string          `json:"uri"`
	Name string          `json:"name"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Repository names the workspace's repository.
//
// Unstable: follows schema.unstable.json; may change.
type Repository struct {
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	RemoteURL string          `json:"remoteUrl"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// StartRequest is the params of nes/start.
//
// Unstable: follows schema.unstable.json; may change.
type StartRequest struct {
	WorkspaceURI     string            `json:"workspaceUri,omitempty"`
	WorkspaceFolders []WorkspaceFolder `json:"workspaceFolders,omitempty"`
	Repository       *Repository       `json:"repository,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// StartResponse is the result of nes/start: the NES session's id, which
// the document events and suggestion requests name.
//
// Unstable: follows schema.unstable.json; may change.
type StartResponse struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// TriggerKind is why a suggestion is asked for.
//
// Unstable: follows schema.unstable.json; may change.
type TriggerKind string

// Unstable: follows schema.unstable.json; may change.
const (
	TriggerAutomatic  TriggerKind = "automatic"
	TriggerDiagnostic TriggerKind = "diagnostic"
	TriggerManual     TriggerKind = "manual"
)

// SuggestRequest is the params of nes/suggest. Context is the optional
// NESSuggestContext of the schema (recent files, edit history, ...), sent
// as given. SessionID is set by [Session.Suggest].
//
// Unstable: follows schema.unstable.json; may change.
type SuggestRequest struct {
	SessionID   string          `json:"sessionId"`
	URI         string          `json:"uri"`
	Version     int64           `json:"version"`
	Position    Position        `json:"position"`
	Selection   *Range          `json:"selection,omitempty"`
	TriggerKind TriggerKind     `json:"triggerKind"`
	Context     json.RawMessage `json:"context,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`

	// AllowURI, if set, is asked about each suggestion whose uri is not
	// URI: true keeps it. Nil keeps only suggestions for URI itself. It is
	// not sent; Suggest calls it on its own goroutine before it returns.
	// The schema lets an agent suggest edits, jumps and renames in other
	// files (and a search and replace over a folder), so an editor that
	// wants those allows the documents it is willing to show, e.g. the
	// open ones inside its workspace.
	AllowURI func(uri string) bool `json:"-"`
}

// SuggestResponse is the result of nes/suggest.
//
// Unstable: follows schema.unstable.json; may change.
type SuggestResponse struct {
	Suggestions []Suggestion    `json:"suggestions"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Suggestion is one suggestion, told apart on the wire by "kind":
// *EditSuggestion ("edit"), *JumpSuggestion ("jump"), *RenameSuggestion
// ("rename"), *SearchAndReplaceSuggestion ("searchAndReplace"), or
// *UnknownSuggestion (kept raw).
//
// Unstable: follows schema.unstable.json; may change.
type Suggestion interface {
	// SuggestionID is the id to accept or reject it by ("" when unknown).
	SuggestionID() string
	isSuggestion()
}

// EditSuggestion proposes text edits to one document.
//
// Unstable: follows schema.unstable.json; may change.
type EditSuggestion struct {
	ID             string          `json:"id"`
	URI            string          `json:"uri"`
	Edits          []TextEdit      `json:"edits"`
	CursorPosition *Position       `json:"cursorPosition,omitempty"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// TextEdit replaces Range with NewText.
//
// Unstable: follows schema.unstable.json; may change.
type TextEdit struct {
	Range   Range           `json:"range"`
	NewText string          `json:"newText"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// JumpSuggestion proposes moving the cursor.
//
// Unstable: follows schema.unstable.json; may change.
type JumpSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// RenameSuggestion proposes renaming the symbol at Position.
//
// Unstable: follows schema.unstable.json; may change.
type RenameSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	NewName  string          `json:"newName"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// SearchAndReplaceSuggestion proposes a search and replace in a document.
//
// Unstable: follows schema.unstable.json; may change.
type SearchAndReplaceSuggestion struct {
	ID      string          `json:"id"`
	URI     string          `json:"uri"`
	Search  string          `json:"search"`
	Replace string          `json:"replace"`
	IsRegex bool            `json:"isRegex,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnknownSuggestion is a suggestion of a kind this package does not know.
//
// Unstable: follows schema.unstable.json; may change.
type UnknownSuggestion struct {
	Kind string
	Raw  json.RawMessage
}

func (s *EditSuggestion) SuggestionID() string             { return s.ID }
func (s *JumpSuggestion) SuggestionID() string             { return s.ID }
func (s *RenameSuggestion) SuggestionID() string           { return s.ID }
func (s *SearchAndReplaceSuggestion) SuggestionID() string { return s.ID }
func (*UnknownSuggestion) SuggestionID() string            { return "" }

func (*EditSuggestion) isSuggestion()             {}
func (*JumpSuggestion) isSuggestion()             {}
func (*RenameSuggestion) isSuggestion()           {}
func (*SearchAndReplaceSuggestion) isSuggestion() {}
func (*UnknownSuggestion) isSuggestion()          {}

// RejectReason is why a suggestion was rejected.
//
// Unstable: follows schema.unstable.json; may change.
type RejectReason string

// Unstable: follows schema.unstable.json; may change.
const (
	ReasonRejected  RejectReason = "rejected"
	ReasonIgnored   RejectReason = "ignored"
	ReasonReplaced  RejectReason = "replaced"
	ReasonCancelled RejectReason = "cancelled"
)

// AcceptNotification is the params of nes/accept.
//
// Unstable: follows schema.unstable.json; may change.
type AcceptNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// RejectNotification is the params of nes/reject.
//
// Unstable: follows schema.unstable.json; may change.
type RejectNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Reason    RejectReason    `json:"reason,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CloseRequest is the params of nes/close.
//
// Unstable: follows schema.unstable.json; may change.
type CloseRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// The MarshalJSON methods write the "kind" the union is told apart by, so a
// suggestion encodes as the agent sent it (traces, JSON output).

func (s EditSuggestion) MarshalJSON() ([]byte, error) {
	type body EditSuggestion
	s.Edits = wirejson.OrEmpty(s.Edits)
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"edit", body(s)})
}

func (s JumpSuggestion) MarshalJSON() ([]byte, error) {
	type body JumpSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"jump", body(s)})
}

func (s RenameSuggestion) MarshalJSON() ([]byte, error) {
	type body RenameSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"rename", body(s)})
}

func (s SearchAndReplaceSuggestion) MarshalJSON() ([]byte, error) {
	type body SearchAndReplaceSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"searchAndReplace", body(s)})
}

// MarshalJSON returns Raw unchanged (or a bare {"kind":...} when Raw is empty).
func (s UnknownSuggestion) MarshalJSON() ([]byte, error) {
	return wirejson.MarshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Kind string `json:"kind"`
		}{s.Kind})
	})
}
