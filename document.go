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
//
// Unstable: follows schema.unstable.json; may change.
type DidCloseDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidSaveDocumentNotification is the params of document/didSave.
//
// Unstable: follows schema.unstable.json; may change.
type DidSaveDocumentNotification struct {
	SessionID string          `json:"sessionId"`
	URI       string          `json:"uri"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DidFocusDocumentNotification is the params of document/didFocus.
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

// documentEvents returns the document events the agent wants, or nil.
func (c *Client) documentEvents() *NESDocumentEventCapabilities {
	n := c.agent().AgentCapabilities.NES
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

// didOpenDocument implements [Client.DidOpenDocument].
func (c *Client) didOpenDocument(ctx context.Context, n *DidOpenDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidOpen, d != nil && d.DidOpen != nil, n.SessionID, n.URI, n)
}

// didChangeDocument implements [Client.DidChangeDocument].
func (c *Client) didChangeDocument(ctx context.Context, n *DidChangeDocumentNotification) error {
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

// didCloseDocument implements [Client.DidCloseDocument].
func (c *Client) didCloseDocument(ctx context.Context, n *DidCloseDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidClose, d != nil && d.DidClose != nil, n.SessionID, n.URI, n)
}

// didSaveDocument implements [Client.DidSaveDocument].
func (c *Client) didSaveDocument(ctx context.Context, n *DidSaveDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidSave, d != nil && d.DidSave != nil, n.SessionID, n.URI, n)
}

// didFocusDocument implements [Client.DidFocusDocument].
func (c *Client) didFocusDocument(ctx context.Context, n *DidFocusDocumentNotification) error {
	d := c.documentEvents()
	return c.sendDocumentEvent(ctx, MethodDocumentDidFocus, d != nil && d.DidFocus != nil, n.SessionID, n.URI, n)
}
