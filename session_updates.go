package acp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/schema"
)

// How an agent's session/update notifications reach a session: routed by
// session id on the reader goroutine (held for an id not registered yet,
// within Limits.MaxOrphanSessions and MaxOrphanBytes), folded into the
// running turn or the session's history in wire order, and counted against
// Limits.MaxTurnBytes.

// apply is the update pipeline of a session, on the reader goroutine, one
// named stage after another (the client's stages before it, in
// Client.onUpdate: decode, screen, route):
//
//  1. accept: a restart's replay of what the session already holds is
//     dropped (acceptLocked, reconcile.go);
//  2. normalise: a v2 upsert becomes the whole update the model folds
//     (normaliseLocked, fold_v2.go);
//  3. charge, fold, record: the update's cost is charged to its budget,
//     folded into the turn or the session, and logged as events
//     (applyLocked);
//  4. advance: a v2 state_update moves the turn's lifecycle
//     (advanceLocked, turn_v2.go);
//
// then, with s.mu released: 5. observe (the Observer hears of it), 6.
// finish (a turn the update ended ends), 7. act (what crossing a budget
// asks for: diagnostics, a cancel). Stages 1–4 run under s.mu, so a
// reader of the state sees an update whole or not at all; 5–7 run after,
// since they call user code or take other locks. meta is the
// notification's own _meta, kept on the update's events; size is the
// notification's length, counted against Limits.MaxTurnBytes when it is
// more than what the update retains (see cost.go).
func (s *Session) apply(u schema.Update, meta json.RawMessage, size int) {
	s.mu.Lock()
	if !s.acceptLocked(u) {
		s.mu.Unlock()
		return
	}
	u = s.normaliseLocked(u)
	over := s.applyLocked(u, meta, size)
	watched := s.turn // the turn the update was the agent's news of
	idle := s.advanceLocked(u)
	s.mu.Unlock()
	if watched != nil {
		watched.obs.update(u)
	}
	if idle != nil {
		// Ended here, on the reader, before the next line: every update
		// before the idle is the turn's, every one after it the session's.
		idle.finish(func(l *turnLife) {
			l.agentEnded(agentAnswer{stop: idle.v2.stop, usage: idle.v2.usage})
			l.out.AgentError = idle.v2.err
		})
	}
	over.act(s.c)
}

// acceptLocked reports whether u is news: false for a restart's replay of
// what the session has already folded (reconcile.go).
func (s *Session) acceptLocked(u schema.Update) bool {
	return s.restore.recon == nil || s.restore.recon.keep(u)
}

// normaliseLocked turns a v2 upsert into the whole update the model folds
// (v1 updates are whole already).
func (s *Session) normaliseLocked(u schema.Update) schema.Update {
	if s.c.version == 2 {
		return s.upsertLocked(u)
	}
	return u
}

// advanceLocked moves the running turn's v2 lifecycle on a state_update
// and returns the turn it ended, if any.
func (s *Session) advanceLocked(u schema.Update) *Turn {
	if st, ok := u.(*schema.StateUpdate); ok && s.c.version == 2 {
		return s.turnStateLocked(st)
	}
	return nil
}

// overBudget is what crossing Limits.MaxTurnBytes asks for once s.mu is
// released: a turn to cancel, diagnostics to report.
type overBudget struct {
	cancel *Turn
	msgs   []string
}

func (o overBudget) act(c *Client) {
	for _, m := range o.msgs {
		c.diag(DiagLimitExceeded, m, nil)
	}
	if o.cancel != nil {
		o.cancel.Cancel()
	}
}

// chargeLocked counts size bytes against Limits.MaxTurnBytes: the running
// turn t's budget, or the session's for what arrives outside turns (t nil).
// size is what the caller will keep, as costLocked estimates it, or the
// notification's length if that is more. past reports that what they carry
// may no longer grow the state: past twice the limit in a turn (the turn,
// cancelled when it crossed the limit, may wind down until then), past the
// limit outside turns. A caller that folds it anyway calls keptLocked.
func (s *Session) chargeLocked(t *Turn, size int64) (past bool, over overBudget) {
	if s.sub.budget != nil {
		// A child: its tree's budget first (subagents.go).
		if msg, past := s.chargeTreeLocked(size); past {
			if msg != "" {
				over.msgs = append(over.msgs, msg)
			}
			return true, over
		}
	}
	limit := s.c.opts.Limits.MaxTurnBytes
	if t == nil {
		s.outside.charge(size, limit)
		return s.outside.charged > limit, over
	}
	if t.budget.charge(size, limit) {
		over.cancel = t
		over.msgs = append(over.msgs, fmt.Sprintf("cancelling a turn of session %s: its updates reached %d bytes, over Limits.MaxTurnBytes (%d)", agenttext.Item(s.id), t.budget.charged, limit))
	}
	return t.budget.pastTwice(limit), over
}

// keptLocked records that t (nil: the time outside turns) keeps what was
// charged as size: the sum is what Limits.MaxEndedTurnBytes counts once
// the turn has ended.
func keptLocked(t *Turn, size int64) {
	if t != nil {
		t.budget.keep(size)
	}
}

// costLocked estimates the heap that folding u keeps (see cost.go): the
// decoded update (none for a turn's plain text chunk) and its _meta, its
// entry in the turn's log or in Outside and the session's log, and what the
// fold creates for it. s.mu is held.
func (s *Session) costLocked(t *Turn, u schema.Update, meta json.RawMessage) int64 {
	n := metaCost(meta)
	if t == nil {
		return n + updateCost(u) + costOutside + costSessionEntry + s.history.foldCost(u)
	}
	n += costEntry + t.fold.foldCost(u)
	if meta != nil {
		n += costMetaEntry
	}
	switch u.(type) {
	case *schema.ToolCall, *schema.ToolCallUpdate:
		n += costToolEntry + updateCost(u)
	default:
		if plainText(u) == textNone {
			n += costBoxed + updateCost(u)
		} // else a plain text chunk keeps no update: see entry
	}
	if replacesState(u) {
		n += costSessionEntry // it is in the session's log too
	}
	return n
}

// droppedLocked counts something dropped past the budget and returns the
// diagnostic to report, if any: the first drop of a turn (the total comes
// when it ends), and the 1st, 2nd, 4th, 8th... outside turns.
func (s *Session) droppedLocked(t *Turn) string {
	if s.treeOverLocked() {
		return "" // chargeTreeLocked reported it
	}
	limit := s.c.opts.Limits.MaxTurnBytes
	if t != nil {
		if t.budget.drop() == 1 {
			return fmt.Sprintf("dropping what a turn of session %s still sends: it has sent %d bytes, over twice Limits.MaxTurnBytes (%d)", agenttext.Item(s.id), t.budget.charged, limit)
		}
		return ""
	}
	if n := s.outside.drop(); n&(n-1) == 0 {
		return fmt.Sprintf("dropped %d updates outside turns for session %s: they reached %d bytes, over Limits.MaxTurnBytes (%d); the session's History and Outside stop growing", n, agenttext.Item(s.id), s.outside.charged, limit)
	}
	return ""
}

// applyLocked folds one update, or drops it when it is over
// Limits.MaxTurnBytes (see there), and says what to do about the limit.
func (s *Session) applyLocked(u schema.Update, meta json.RawMessage, size int) overBudget {
	t := s.turn
	charge := max(int64(size), s.costLocked(t, u, meta))
	past, over := s.chargeLocked(t, charge)
	if past {
		if !replacesState(u) {
			if m := s.droppedLocked(t); m != "" {
				over.msgs = append(over.msgs, m)
			}
			s.notifyLocked()
			return over
		}
		// Applied to the session's state only: not to the turn, History or
		// Outside. The event says so, for SessionFold to do the same.
		act := s.foldSessionLocked(u)
		s.logLocked(sentry{kind: entAgent, u: u, act: act, turn: t, meta: meta, overBudget: true, cost: charge})
		return over
	}
	keptLocked(t, charge)
	session := foldSessionUpdate(&s.state, u)
	act := s.joinActivityLocked(u)
	if t != nil {
		t.applyLocked(u, meta)
		if session {
			s.logLocked(sentry{kind: entAgent, u: u, act: act, turn: t, meta: meta, cost: charge})
		} else if id := toolCallID(u); id != "" && listsToolCall(&s.state, id) {
			// A listed background tool call changed: the session's
			// Activity follows it, so its feed carries the change
			// (background_v2.go).
			tc, _ := t.fold.tools.get(id)
			refreshToolCall(&s.state, tc)
			s.logLocked(sentry{kind: entAgent, u: u, tc: tc, turn: t, meta: meta, cost: costSessionEntry})
		}
	} else {
		// Trimmed in batches, so the copy costs O(1) per update, and before
		// the update is logged, so the update's event is its last.
		if keep := s.c.opts.Limits.OutsideLog; len(s.state.Outside)+1 >= 2*keep {
			s.trimOutsideLocked(len(s.state.Outside) + 1 - keep)
		}
		s.state.Outside = append(s.state.Outside, OutsideUpdate{Update: u, Replay: s.loading, Late: !s.loading && s.started > 0})
		tc := s.history.apply(u)
		if tc != nil {
			refreshToolCall(&s.state, tc)
		}
		s.logLocked(sentry{kind: entAgent, u: u, act: act, tc: tc, replay: s.loading, meta: meta, cost: charge})
	}
	s.notifyLocked()
	return over
}

// foldSessionLocked is foldSessionUpdate on the session's own state, with
// the join only the live session can make (joinActivityLocked); it
// returns the Activity a state_update made, for its event. s.mu is held.
func (s *Session) foldSessionLocked(u schema.Update) *Activity {
	foldSessionUpdate(&s.state, u)
	return s.joinActivityLocked(u)
}

func derefOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

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
// other update is decoded (schema.DecodeNotification), screened (what does
// not decode is kept as unknown and reported; a background list is cut to
// its bound; subagent traffic is checked against the tree), and routed by
// session id to its session, or kept as an orphan until the session is
// registered.
func (c *Client) onUpdate(params []byte, peek jsonscan.Update) {
	if peek.Chunk != jsonscan.ChunkNone && c.applyPlainText(params, &peek) {
		return
	}
	n, err := schema.DecodeNotification(c.version, params)
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
	c.mu.Lock()
	s := c.routing.sessions[sid]
	if s == nil {
		reason := c.keepOrphanLocked(sid, u, meta, len(params))
		c.mu.Unlock()
		if reason != "" {
			c.diagIn(sid, DiagLimitExceeded, "dropped an update for unknown session "+agenttext.Quote(sid)+": "+reason, nil)
		}
		return
	}
	c.mu.Unlock()
	s.childStateV2(u)
	s.apply(u, meta, len(params))
	s.mirrorChildStateV2(u)
	if child != nil {
		child.applySubagentState(u.(*schema.SubagentUpdate))
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
	c.routing.sessions[s.id] = s
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
			o.act(c)
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
	sid, raw, k := peek.SessionID, peek.Text, uint8(peek.Chunk)
	var id []byte
	if peek.MsgID != nil {
		var ok bool
		if id, ok = jsonscan.Plain(peek.MsgID); !ok {
			return false // an escaped id: rare, decoded
		}
	}
	var plain []byte
	var text string
	isPlain := peek.TextPlain
	if isPlain {
		plain = raw[1 : len(raw)-1]
	} else {
		var ok bool
		if text, ok = jsonscan.Unquote(raw); !ok {
			return false
		}
	}
	c.mu.Lock()
	s := c.routing.sessions[string(sid)]
	c.mu.Unlock()
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
	if isPlain {
		n = len(plain)
		if plain == nil {
			plain = raw[1:1] // empty, but not nil: appendText's choice
		}
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
	s.mu.Unlock()
	over.act(c)
	return true
}
