package schema

import "encoding/json"

// The capabilities of next-edit suggestions (NES) that initialize carries:
// the agent's nes capability and its choice of position encoding, and the
// client's offer (ClientOptions.PositionEncodings). They stay in package acp
// because AgentCapabilities and ClientCapabilities hold them; the feature
// itself (nes/start, nes/suggest, document sync) is package
// github.com/acpclient/acp/nes.

// PositionEncodingKind is how the character offset of an NES position
// (nes.Position) counts.
//
// Unstable: follows schema.unstable.json; may change.
type PositionEncodingKind string

// Unstable: follows schema.unstable.json; may change.
const (
	PositionUTF16 PositionEncodingKind = "utf-16" // UTF-16 code units (the default)
	PositionUTF32 PositionEncodingKind = "utf-32" // Unicode code points
	PositionUTF8  PositionEncodingKind = "utf-8"  // bytes
)

// NESCapabilities is the agent's nes capability: which document events it
// wants, and (raw) which context it uses in nes/suggest.
//
// Unstable: follows schema.unstable.json; may change.
type NESCapabilities struct {
	Events  *NESEventCapabilities `json:"events,omitempty"`
	Context json.RawMessage       `json:"context,omitempty"`
	Meta    json.RawMessage       `json:"_meta,omitempty"`
}

// NESEventCapabilities lists the events the agent wants.
//
// Unstable: follows schema.unstable.json; may change.
type NESEventCapabilities struct {
	Document *NESDocumentEventCapabilities `json:"document,omitempty"`
	Meta     json.RawMessage               `json:"_meta,omitempty"`
}

// NESDocumentEventCapabilities: each non-nil field lets the client send
// that document/* notification.
//
// Unstable: follows schema.unstable.json; may change.
type NESDocumentEventCapabilities struct {
	DidOpen   *Capability                       `json:"didOpen,omitempty"`
	DidChange *NESDocumentDidChangeCapabilities `json:"didChange,omitempty"`
	DidClose  *Capability                       `json:"didClose,omitempty"`
	DidSave   *Capability                       `json:"didSave,omitempty"`
	DidFocus  *Capability                       `json:"didFocus,omitempty"`
	Meta      json.RawMessage                   `json:"_meta,omitempty"`
}

// NESDocumentDidChangeCapabilities says how document/didChange reports
// changes: TextDocumentSyncFull (the whole text each time) or
// TextDocumentSyncIncremental (ranges).
//
// Unstable: follows schema.unstable.json; may change.
type NESDocumentDidChangeCapabilities struct {
	SyncKind TextDocumentSyncKind `json:"syncKind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// TextDocumentSyncKind is how document changes are sent.
//
// Unstable: follows schema.unstable.json; may change.
type TextDocumentSyncKind string

// Unstable: follows schema.unstable.json; may change.
const (
	TextDocumentSyncFull        TextDocumentSyncKind = "full"
	TextDocumentSyncIncremental TextDocumentSyncKind = "incremental"
)
