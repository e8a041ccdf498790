package acp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/schema"
)

// How an agent's session/update notifications reach a session: the
// client's stages of the update pipeline, on the reader goroutine. Each
// update is decoded (or, a plain text chunk, folded from the wire bytes),
// screened and routed by session id to Session.apply (session_apply.go,
// where the whole pipeline is listed), or held for an id not registered
// yet, within Limits.MaxOrphanSessions and MaxOrphanBytes.

// maxOrphans bounds what is kept for one session id that is never
// registered (an agent talking about a session from session/list, say);
// Limits.MaxOrphanSessions and MaxOrphanBytes bound the total.
const maxOrphans = 10000

// orphan is an update for a session id not registered yet, with the size of
// its notification (what it costs to keep, roughly).
type orphan struct {
	u    schema.Update
	meta json.RawMessage // the notification's own _meta
	size int
}

// onUpdate is the wire's hook for session/update, on the reader goroutine:
// the client's stages of the update pipeline, before the session's own
// (Session.apply). peek is what the reader's one pass over the line read
// of params (jsonscan.Peek). A plain text chunk for a running turn is
// folded from the wire bytes (applyPlainText) and skips them all; any
// other update is decoded (schema.DecodeNotification, from what the peek
// found: decodePeeked), screened (what does
// not decode is kept as unknown and reported; a background list is cut to
// its bound; subagent traffic is checked against the tree), and routed by
// session id to its session, or kept as an orphan until the session is
// registered.
func (c *Client) onUpdate(params []byte, peek jsonscan.Update) {
	if peek.Chunk != jsonscan.ChunkNone && c.applyPlainText(params, &peek) {
		return
	}
	// The route is looked up before the decode, so that the notification's
	// session id is the session's own string, not a copy of the wire's.
	s := c.route(peek.SessionID)
	var known string
	if s != nil {
		known = s.id
	}
	n, err := decodePeeked(c.version, params, peek, known)
	sid, u, meta := n.SessionID, n.Update, n.Meta
	if err != nil {
		c.diagIn(sid, DiagBadUpdate, "kept a session/update that did not decode as unknown: "+agenttext.Text(err.Error()), params)
	}
	if u == nil {
		return
	}
	if uu, ok := u.(*schema.UnknownUpdate); ok {
		c.diagIn(sid, DiagUnknownUpdate, "kept an update of unknown kind "+agenttext.Item(uu.Kind), nil)
	}
	if n := capBackground(u); n > 0 {
		c.diagIn(sid, DiagLimitExceeded, fmt.Sprintf("dropped %d items of a state_update's background list past BackgroundWorkMax (%d)", n, BackgroundWorkMax), nil)
	}
	ok, child := c.checkSubagentTraffic(sid, u)
	if !ok {
		return
	}
	if _, announces := u.(*schema.SubagentUpdate); s == nil || s.id != sid || announces {
		// Not found by the peek's id (an orphan, an id the peek did not
		// read), or the screen may have registered a session: looked up
		// again, and an orphan kept, under one hold of c.mu.
		c.mu.Lock()
		if s = c.routing.sessions[sid]; s == nil {
			reason := c.keepOrphanLocked(sid, u, meta, len(params))
			c.mu.Unlock()
			if reason != "" {
				c.diagIn(sid, DiagLimitExceeded, "dropped an update for unknown session "+agenttext.Quote(sid)+": "+reason, nil)
			}
			return
		}
		c.mu.Unlock()
	}
	s.childStateV2(u)
	c.act(s.apply(u, meta, len(params)))
	s.mirrorChildStateV2(u)
	if child != nil {
		child.applySubagentState(u.(*schema.SubagentUpdate))
	}
}

// decodePeeked is schema.DecodeNotification for params Peek has read:
// schema's decoder that takes what the peek found instead of walking
// params again (jsonscan.DecodePeeked).
var decodePeeked = jsonscan.DecodePeeked.(func(int, []byte, jsonscan.Update, string) (schema.SessionNotification, error))

// route returns c.routing.sessions[id], as a lookup under c.mu would
// at the moment of the call, but while the sessions are as they were at
// the last lookup (an agent's updates, one session's after another's), it
// reads two atomics and compares the id: no lock, no hash. That lookup was
// c.mu's hottest use, at a lock and an unlock for every update the reader
// folds, on a cache line other goroutines write.
//
// Why a hit is right: last is written before lastGen, both under c.mu, so
// the last read here is the one lastGen was stored with or a later one; a
// later one was looked up at a gen no smaller, so when lastGen is still
// the current gen, the last read was looked up at the current gen, and no
// session has been set or deleted since.
func (c *Client) route(id []byte) *Session {
	r := &c.routing
	g := r.lastGen.Load()
	if s := r.last.Load(); s != nil && g == r.gen.Load() && s.id == string(id) {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := r.sessions[string(id)]
	if s != nil {
		r.last.Store(s)
		r.lastGen.Store(r.gen.Load())
	}
	return s
}

// setLocked and deleteLocked are the only changes to sessions: each counts
// one in gen, so that no earlier lookup of route's is used again. c.mu is
// held.
func (r *clientRouting) setLocked(id string, s *Session) {
	r.sessions[id] = s
	r.gen.Add(1)
}

func (r *clientRouting) deleteLocked(id string) {
	delete(r.sessions, id)
	r.gen.Add(1)
	if s := r.last.Load(); s != nil && s.id == id {
		r.last.Store(nil) // a closed session is not kept for the cache
	}
}

// keepOrphanLocked keeps an update for a session id not registered yet, or
// says which limit it is over. c.mu is held.
func (c *Client) keepOrphanLocked(sid string, u schema.Update, meta json.RawMessage, size int) string {
	l := c.opts.Limits
	list, known := c.routing.orphans[sid]
	switch {
	case !known && len(c.routing.orphans) >= l.MaxOrphanSessions:
		return fmt.Sprintf("updates are already kept for %d unknown session ids (Limits.MaxOrphanSessions)", l.MaxOrphanSessions)
	case c.routing.orphanBytes+size > l.MaxOrphanBytes:
		return fmt.Sprintf("updates kept for unknown sessions would exceed %d bytes (Limits.MaxOrphanBytes)", l.MaxOrphanBytes)
	case len(list) >= maxOrphans:
		return fmt.Sprintf("%d updates are already kept for it", maxOrphans)
	}
	c.routing.orphans[sid] = append(list, orphan{u, meta, size})
	c.routing.orphanBytes += size
	return ""
}

// register makes a session known, applying updates that arrived for its id
// before it was (in their order, before any later update).
func (c *Client) register(s *Session) {
	c.mu.Lock()
	after := c.registerLocked(s)
	c.mu.Unlock()
	after()
}

// registerLocked is register with c.mu held; the caller runs what it
// returns once c.mu is released.
func (c *Client) registerLocked(s *Session) (after func()) {
	old := c.routing.sessions[s.id]
	c.routing.setLocked(s.id, s)
	orphans := c.routing.orphans[s.id]
	delete(c.routing.orphans, s.id)
	for _, o := range orphans {
		c.routing.orphanBytes -= o.size
	}
	var over []overBudget
	if len(orphans) > 0 {
		// s is not visible to anyone yet, so taking its lock under c.mu
		// cannot invert the c.mu-before-s.mu order. Holding c.mu keeps
		// onUpdate from applying a newer update first.
		s.mu.Lock()
		for _, o := range orphans {
			over = append(over, s.applyLocked(o.u, o.meta, o.size))
		}
		s.mu.Unlock()
	}
	return func() {
		if old != nil && old != s {
			// Loading a session again: the old handle gets no more
			// updates; wake whoever watches it.
			old.mu.Lock()
			old.notifyLocked()
			old.mu.Unlock()
		}
		for _, o := range over {
			c.act(o)
		}
	}
}

// applyPlainText folds a plain text chunk (see plainText) for a session's
// running turn straight from its notification, the bulk of every turn: no
// update is decoded, its text is copied once, into its message. The chunk
// is what the reader's pass found (peek.Chunk set); params is not scanned
// again. It reports false, having changed nothing, for a chunk that
// arrives outside turns or for a session not registered, which take the
// general path; the state and events are the same either way.
func (c *Client) applyPlainText(params []byte, peek *jsonscan.Update) bool {
	var id []byte
	if peek.MsgID != nil {
		var ok bool
		if id, ok = jsonscan.Plain(peek.MsgID); !ok {
			return false // an escaped id: rare, decoded
		}
	}
	if raw := peek.Text; peek.TextPlain {
		return c.foldPlainText(params, peek, id, raw[1:len(raw)-1], "")
	}
	return c.applyEscapedText(params, peek, id)
}

// applyEscapedText is applyPlainText for a text with escapes (a newline, a
// quote): it decodes on the stack when the text fits, and the fold copies
// it into its message as it copies a plain one. It is a function of its own
// so that the plain path, the bulk of a turn, does not zero the buffer
// (512 bytes, about 10 ns a chunk).
//
//go:noinline
func (c *Client) applyEscapedText(params []byte, peek *jsonscan.Update, id []byte) bool {
	const onStack = 512
	raw := peek.Text
	if len(raw) <= onStack {
		var buf [onStack]byte
		plain, ok := jsonscan.AppendUnquote(buf[:0], raw)
		if !ok {
			return false
		}
		return c.foldPlainText(params, peek, id, plain, "")
	}
	text, ok := jsonscan.Unquote(raw)
	if !ok {
		return false
	}
	return c.foldPlainText(params, peek, id, nil, text)
}

// foldPlainText folds the chunk peek found, its text decoded: in plain
// (which the fold copies; empty but never nil for an empty text) or, when
// plain is nil, in text, as fold.appendText takes it.
func (c *Client) foldPlainText(params []byte, peek *jsonscan.Update, id, plain []byte, text string) bool {
	sid, k := peek.SessionID, uint8(peek.Chunk)
	s := c.route(sid)
	if s == nil {
		return false
	}
	s.mu.Lock()
	t := s.turn
	if t == nil || t.obs != nil {
		// An observed turn takes the general path: its observer gets
		// every update as a value.
		s.mu.Unlock()
		return false
	}
	n := len(text)
	if plain != nil {
		n = len(plain)
	}
	var meta json.RawMessage
	if peek.Meta != nil {
		meta = bytes.Clone(peek.Meta) // kept on the events; params is the read buffer's
	}
	m := t.fold.targetBytes(t.fold.list(k), textKinds[k], id)
	cost := costEntry + textCost(m == nil, len(id), n) + metaCost(meta)
	if meta != nil {
		cost += costMetaEntry
	}
	charge := max(int64(len(params)), cost)
	// The chunk's readers are woken when the reader has dispatched its
	// read, with the other chunks of it (notifier, wake.go).
	t.updated.hold()
	s.changed.hold()
	past, over := s.chargeLocked(t, charge)
	if past {
		if msg := s.droppedLocked(t); msg != "" {
			over.msgs = append(over.msgs, msg)
		}
	} else {
		keptLocked(t, charge)
		t.applyTextLocked(k, m, id, plain, text, meta)
	}
	s.notifyLocked()
	owesTurn, owesSession := t.updated.unhold(), s.changed.unhold()
	s.mu.Unlock()
	if owesTurn {
		c.wakes.add(s, &t.updated)
	}
	if owesSession {
		c.wakes.add(s, &s.changed)
	}
	c.act(over)
	return true
}
