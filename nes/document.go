package nes

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// Document events keep an NES agent informed of the editor's documents
// (document/didOpen, didChange, didClose, didSave, didFocus). They are
// notifications scoped to an NES session, sent only when the agent's
// nes.events.document capability lists them: otherwise the call fails
// with acp.ErrNotSupported and nothing is sent. A notification has no
// answer: a nil error means it was written, not that the agent read it.

// DidOpenDocumentNotification is the params of document/didOpen.
// SessionID is set by [Session.DidOpen].
//
// Unstable: follows schema.unstable.json; may change.
type DidOpenDocumentNotification struct {
	SessionID  string          `json:"sessionId"`
	URI        string          `json:"uri"`
	LanguageID string          `json:"languageId"`
	Version    int64           `json:"version"`
	Text       string          `json:"text"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// DidChangeDocumentNotification is the params of document/didChange.
// SessionID is set by [Session.DidChange].
//
// Unstable: follows schema.unstable.json; may change.
type DidChangeDocumentNotification struct {
	SessionID      string                           `json:"sessionId"`
	URI            string                           `json:"uri"`
	Version        int64                            `json:"version"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
	Meta           json.RawMessage                  `json:"_meta,omitempty"`
}

// TextDocumentContentChangeEvent is one change: Text replaces Range, or
// the whole document when Range is nil.
//
// Unstable: follows schema.unstable.json; may change.
type TextDocumentContentChangeEvent struct {
	Range *Range          `json:"range,omitempty"`
	Text  string          `json:"text"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// DidCloseDocumentNotification is the params of document/didClose.
// SessionID is set by [Session.DidClose].
//
// Unstable: follows schema.unstable.json; may change.
type DidCloseDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidSaveDocumentNotification is the params of document/didSave.
// SessionID is set by [Session.DidSave].
//
// Unstable: follows schema.unstable.json; may change.
type DidSaveDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidFocusDocumentNotification is the params of document/didFocus.
// SessionID is set by [Session.DidFocus].
//
// Unstable: follows schema.unstable.json; may change.
type DidFocusDocumentNotification struct {
	SessionID    string          `json:"sessionId"`
	URI          string          `json:"uri"`
	Version      int64           `json:"version"`
	Position     Position        `json:"position"`
	VisibleRange Range           `json:"visibleRange"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// DidOpen sends document/didOpen.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) DidOpen(ctx context.Context, n *DidOpenDocumentNotification) error {
	d := documentEvents(s.c)
	m := *n
	m.SessionID = s.id
	return s.sendDocumentEvent(ctx, schema.MethodDocumentDidOpen, d != nil && d.DidOpen != nil, m.URI, &m)
}

// DidChange sends document/didChange. When the agent asked for full sync,
// there must be exactly one change, without a range (the whole new text);
// otherwise the call fails and nothing is sent.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) DidChange(ctx context.Context, n *DidChangeDocumentNotification) error {
	d := documentEvents(s.c)
	wanted := d != nil && d.DidChange != nil
	if wanted && d.DidChange.SyncKind == schema.TextDocumentSyncFull &&
		(len(n.ContentChanges) != 1 || n.ContentChanges[0].Range != nil) {
		return methodError(schema.MethodDocumentDidChange, errors.New("the agent asked for full sync: send one change holding the whole text, without a range"))
	}
	m := *n
	m.SessionID = s.id
	if m.ContentChanges == nil {
		m.ContentChanges = []TextDocumentContentChangeEvent{}
	}
	return s.sendDocumentEvent(ctx, schema.MethodDocumentDidChange, wanted, m.URI, &m)
}

// DidClose sends document/didClose.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) DidClose(ctx context.Context, n *DidCloseDocumentNotification) error {
	d := documentEvents(s.c)
	m := *n
	m.SessionID = s.id
	return s.sendDocumentEvent(ctx, schema.MethodDocumentDidClose, d != nil && d.DidClose != nil, m.URI, &m)
}

// DidSave sends document/didSave.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) DidSave(ctx context.Context, n *DidSaveDocumentNotification) error {
	d := documentEvents(s.c)
	m := *n
	m.SessionID = s.id
	return s.sendDocumentEvent(ctx, schema.MethodDocumentDidSave, d != nil && d.DidSave != nil, m.URI, &m)
}

// DidFocus sends document/didFocus.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) DidFocus(ctx context.Context, n *DidFocusDocumentNotification) error {
	d := documentEvents(s.c)
	m := *n
	m.SessionID = s.id
	return s.sendDocumentEvent(ctx, schema.MethodDocumentDidFocus, d != nil && d.DidFocus != nil, m.URI, &m)
}

// documentEvents returns the document events the agent wants, or nil.
func documentEvents(c *acp.Client) *schema.NESDocumentEventCapabilities {
	n := c.InitializeResponse().AgentCapabilities.NES
	if n == nil || n.Events == nil {
		return nil
	}
	return n.Events.Document
}

// sendDocumentEvent sends one document event the agent wants (wanted), for
// a named document.
func (s *Session) sendDocumentEvent(ctx context.Context, method string, wanted bool, uri string, params any) error {
	if !wanted {
		return notSupported(method, "nes.events.document."+method[len("document/"):])
	}
	if s.id == "" || uri == "" {
		return methodError(method, errors.New("a session id and a uri are required"))
	}
	return s.c.Notify(ctx, method, params)
}
