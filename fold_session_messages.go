package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"slices"
	"unsafe"
)

// Messages between sessions (session_message, session_message_chunk):
// folded, like the agent's own messages, into the state of the turn (or
// the history) of the session they arrive on — the enclosing session's
// transcript, where their messageId lives — one InterSessionMessage per
// messageId, in the order each started.

// InterSessionMessage is a message from one session to another, as the
// session_message upserts and session_message_chunk updates of one
// messageId built it.
type InterSessionMessage struct {
	MessageID string `json:"messageId"`
	// SenderSessionID and RecipientSessionID name the sessions ("" when
	// not given or cleared); SenderMessageID and RecipientMessageID link
	// the same message's view in the other session's transcript.
	SenderSessionID    string `json:"senderSessionId,omitempty"`
	RecipientSessionID string `json:"recipientSessionId,omitempty"`
	SenderMessageID    string `json:"senderMessageId,omitempty"`
	RecipientMessageID string `json:"recipientMessageId,omitempty"`
	// Content is the message's blocks, in order: a session_message's list
	// replaces them, a chunk appends one. TextOf gives a block's text.
	Content []schema.ContentBlock `json:"content,omitempty"`
	Meta    json.RawMessage       `json:"_meta,omitempty"`
	// Order is the message's place among the fold's items (see
	// [Message].Order).
	Order int `json:"order"`
}

// Text is the concatenation of the message's text blocks.
func (m *InterSessionMessage) Text() string {
	var n int
	for _, b := range m.Content {
		if t, ok := b.(*schema.TextContent); ok {
			n += len(t.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range m.Content {
		if t, ok := b.(*schema.TextContent); ok {
			buf = append(buf, t.Text...)
		}
	}
	return string(buf)
}

// sessMsgs is a fold's messages between sessions, indexed by messageId.
// An entry is replaced, never changed, once a snapshot may share it: a
// snapshot copies the values, and their Content slices are clipped.
type sessMsgs struct {
	l    []*InterSessionMessage
	byID map[string]*InterSessionMessage
}

// sessMsg returns the message of id, a new one (numbered as the fold's
// next item) when there is none.
func (f *fold) sessMsg(id string) *InterSessionMessage {
	if m := f.smsgs.byID[id]; m != nil {
		return m
	}
	m := &InterSessionMessage{MessageID: id, Order: f.tools.nextOrder()}
	f.smsgs.l = append(f.smsgs.l, m)
	if f.smsgs.byID == nil {
		f.smsgs.byID = map[string]*InterSessionMessage{}
	}
	f.smsgs.byID[id] = m
	return m
}

// applySessionMessage folds an upsert: see SessionMessage for the rules.
func (f *fold) applySessionMessage(u *schema.SessionMessage) {
	f.visits++
	m := f.sessMsg(u.MessageID)
	patch := func(dst *string, v schema.Field[string]) {
		if v.Present {
			*dst = derefOr(v.Value)
		}
	}
	patch(&m.SenderSessionID, u.SenderSessionID)
	patch(&m.RecipientSessionID, u.RecipientSessionID)
	patch(&m.SenderMessageID, u.SenderMessageID)
	patch(&m.RecipientMessageID, u.RecipientMessageID)
	if u.Content != nil {
		// A new array: a snapshot may share the old one.
		m.Content = slices.Clip(slices.Clone(u.Content))
		if len(m.Content) == 0 {
			m.Content = nil
		}
	}
	if u.Meta != nil {
		m.Meta = u.Meta
	}
}

// applySessionMessageChunk appends a chunk's block. Appending past the
// length a snapshot clipped never writes what it shows.
func (f *fold) applySessionMessageChunk(u *schema.SessionMessageChunk) {
	f.visits++
	m := f.sessMsg(u.MessageID)
	m.Content = append(m.Content, u.Content)
}

func (l *sessMsgs) snapshot() []InterSessionMessage {
	if len(l.l) == 0 {
		return nil
	}
	out := make([]InterSessionMessage, len(l.l))
	for i, m := range l.l {
		out[i] = *m
		out[i].Content = slices.Clip(m.Content)
	}
	return out
}

// restore rebuilds the list from a snapshot (foldFrom).
func (l *sessMsgs) restore(msgs []InterSessionMessage) {
	for _, m := range msgs {
		c := m
		c.Content = slices.Clip(slices.Clone(m.Content))
		l.l = append(l.l, &c)
		if l.byID == nil {
			l.byID = map[string]*InterSessionMessage{}
		}
		l.byID[c.MessageID] = &c
	}
}

// cost is what folding a session message update for id adds to the fold
// besides the update itself (counted by updateCost): a new entry, or a
// block appended.
func (l *sessMsgs) cost(id string) int64 {
	if _, ok := l.byID[id]; ok {
		return int64(unsafe.Sizeof(schema.ContentBlock(nil))) * 2
	}
	return allocSize(int64(unsafe.Sizeof(InterSessionMessage{}))) + costNewItem + allocSize(int64(len(id)))
}
