package acp

import (
	"context"
	"encoding/json"
	"errors"
)

// Document events keep an NES agent informed of the editor's documents
// (document/didOpen, didChange, didClose, didSave, didFocus). They are
// notifications scoped to an NES session (from StartNES), sent only when the
// agent's nes.events.document capability lists them: otherwise
// ErrNotSupported and nothing is sent.
//
// Unstable: follows schema.unstable.json; may change.

// DidOpenDocumentNotification is the params of document/didOpen.
type DidOpenDocumentNotification struct {
	SessionID  string          `json:"sessionId"`
	URI        string          `json:"uri"`
	LanguageID string          `json:"languageId"`
	Version    int64           `json:"version"`
	Text       string          `json:"text"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// DidChangeDocumentNotification is the params of document/didChange.
type DidChangeDocumentNotification struct {
	SessionID      string                           `json:"sessionId"`
	URI            string                           `json:"uri"`
	Version        int64                            `json:"version"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
	Meta           json.RawMessage                  `json:"_meta,omitempty"`
}

// TextDocumentContentChangeEvent is one change: Text replaces Range, or
// the whole document when Range is nil.
type TextDocumentContentChangeEvent struct {
	Range *Range          `json:"range,omitempty"`
	Text  string          `json:"text"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// DidCloseDocumentNotification is the params of document/didClose.
type DidCloseDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidSaveDocumentNotification is the params of document/didSave.
type DidSaveDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidFocusDocumentNotification is the params of document/didFocus.
type DidFocusDocumentNotification struct {
	SessionID    string          `json:"sessionId"`
	URI          string          `json:"uri"`
	Version      int64           `json:"version"`
	Position     Position        `json:"position"`
	VisibleRange Range           `json:"visibleRange"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// documentEvents returns the document events the agent wants, or nil.
func (c *Client) documentEvents() *NESDocumentEventCapabilities {
	n := c.init.AgentCapabilities.NES
	if n == nil || n.Events == nil {
		return nil
	}
	return n.Events.Document
}

func (c *Client) sendDocumentEvent(ctx context.Context, method string, wanted bool, sessionID, uri string, params any) error {
	if !wanted {
		return notSupported(method, "nes.events.document."+method[len("document/"):])
	}
	if sessionID == "" || uri == "" {
		return callError(method, errors.New("a session id and a uri are required"))
	}
	return c.notify(ctx, method, params)
}

// DidOpenDocument sends document/didOpen.
func (c *Client) DidOpenDocument(ctx context.Context, n *DidOpenDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidOpen, d != nil && d.DidOpen != nil, n.SessionID, n.URI, n)
}

// DidChangeDocument sends document/didChange. When the agent asked for
// full sync, there must be exactly one change, without a range (the whole
// new text); otherwise the call fails and nothing is sent.
func (c *Client) DidChangeDocument(ctx context.Context, n *DidChangeDocumentNotification) error {
	d := c.documentEvents()
	wanted := d != nil && d.DidChange != nil
	if wanted && d.DidChange.SyncKind == TextDocumentSyncFull &&
		(len(n.ContentChanges) != 1 || n.ContentChanges[0].Range != nil) {
		return callError(MethodDocumentDidChange, errors.New("the agent asked for full sync: send one change holding the whole text, without a range"))
	}
	if n.ContentChanges == nil {
		m := *n
		m.ContentChanges = []TextDocumentContentChangeEvent{}
		n = &m
	}
	return c.sendDocumentEvent(ctx, MethodDocumentDidChange, wanted, n.SessionID, n.URI, n)
}

// DidCloseDocument sends document/didClose.
func (c *Client) DidCloseDocument(ctx context.Context, n *DidCloseDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidClose, d != nil && d.DidClose != nil, n.SessionID, n.URI, n)
}

// DidSaveDocument sends document/didSave.
func (c *Client) DidSaveDocument(ctx context.Context, n *DidSaveDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidSave, d != nil && d.DidSave != nil, n.SessionID, n.URI, n)
}

// DidFocusDocument sends document/didFocus.
func (c *Client) DidFocusDocument(ctx context.Context, n *DidFocusDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidFocus, d != nil && d.DidFocus != nil, n.SessionID, n.URI, n)
}
