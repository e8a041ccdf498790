package acp

import (
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// The update pipeline: how one session/update becomes state and events, a
// list of named stages, one function each, run in this order on the reader
// goroutine. Each stage says what it may do and what it may not; keep it
// so, and a change lands in one stage.
//
// The client's stages (Client.onUpdate, session_updates.go; c.mu only to
// look the session up):
//
//	decode     schema.DecodeNotification makes the schema.Update. A plain
//	           text chunk for a running, unobserved turn is not decoded:
//	           Client.applyPlainText runs charge, fold and record on it
//	           inline, from the wire bytes, with the same budget calls.
//	screen     what did not decode is kept as unknown; a background list
//	           is cut to its bound; subagent traffic is checked against
//	           the tree. Reports diagnostics; changes no session.
//	route      to the session registered for the id, or kept as an orphan
//	           (applied by registerLocked, through applyLocked, once the
//	           session is registered). The session is looked up by the
//	           peek's id before decode, so the update carries the
//	           session's own id string, and again after screen, under
//	           the hold that keeps an orphan, for an id not found then
//	           or not the one decoded, and after a subagent_update.
//
// The session's stages (Session.apply, below), 1 to 6 under s.mu, so a
// reader of the state or the feed sees an update whole or not at all:
//
//  1. accept     acceptLocked: a restart's replay of what the session
//     already holds is dropped. Changes only the reconciler.
//  2. normalise  normaliseLocked: a v2 upsert becomes the whole update the
//     model folds. Reads the folds; changes nothing.
//  3. charge     chargeUpdateLocked: the update's cost (cost.go) is counted
//     against Limits.MaxTurnBytes (the turn's byteBudget, the session's
//     outside turns, a child's tree), which decides whether it folds.
//     Changes budgets only; what crossing a limit asks for (diagnostics,
//     a cancel) is returned for act, never done here.
//  4. fold       foldUpdateLocked: the state change, into SessionState
//     (foldSessionUpdate, fold_session.go) and the turn's fold or the
//     session's History (fold.go), with a cancelled turn's marks on the
//     tool call the update changed. Logs nothing and wakes nobody.
//  5. record     recordUpdateLocked: the update's events on the turn's log
//     and the session's, and its place in Outside (SessionState's raw log
//     of what arrived outside turns); wakes the readers. The only stage
//     that publishes; changes no folded state.
//  6. advance    advanceLocked: a v2 state_update moves the turn's
//     lifecycle (turn_v2.go). Returns the turn it ended; ends nothing.
//
// Then, with s.mu released, since they call user code or take other
// locks:
//
//  7. observe    the turn's Observer hears of the update.
//  8. finish     a turn the update ended ends (Session.endTurn).
//  9. act        what crossing the budget asked for: Client.act, run by
//     the client on what apply returns. A stage below the client decides;
//     the client reports and cancels, so nothing on the way calls back up
//     into it.
//
// After the session's stages, onUpdate mirrors a child's state into its
// parent (subagents.go); that is another session's pipeline, not a climb
// back into this one.

// apply runs the session's stages of the pipeline (see above) on one
// update, and returns what crossing the budget asks for, for the client
// to act on (Client.act) once apply has returned. meta is the notification's own _meta, kept on the update's
// events; size is the notification's length, counted against
// Limits.MaxTurnBytes when it is more than what the update retains (see
// cost.go).
func (s *Session) apply(u schema.Update, meta json.RawMessage, size int) overBudget {
	s.mu.Lock()
	if !s.acceptLocked(u) {
		s.mu.Unlock()
		return overBudget{}
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
		s.endTurn(idle, func(l *turnLife) {
			l.agentEnded(agentAnswer{stop: idle.v2.stop, usage: idle.v2.usage})
			l.out.AgentError = idle.v2.err
		})
	}
	return over
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

// applyLocked is stages 3 to 5, charge, fold and record, on an update that
// was accepted and normalised (or an orphan kept from before its session
// was registered), and returns what crossing the budget asks for.
func (s *Session) applyLocked(u schema.Update, meta json.RawMessage, size int) overBudget {
	t := s.turn
	ch := s.chargeUpdateLocked(t, max(int64(size), s.costLocked(t, u, meta)), replacesState(u))
	var f folded
	if ch.folds() {
		f = s.foldUpdateLocked(t, u, ch.past)
	}
	s.recordUpdateLocked(t, u, meta, ch, f)
	return ch.over
}

// advanceLocked moves the running turn's v2 lifecycle on a state_update
// and returns the turn it ended, if any.
func (s *Session) advanceLocked(u schema.Update) *Turn {
	if st, ok := u.(*schema.StateUpdate); ok && s.c.version == 2 {
		return s.turnStateLocked(st)
	}
	return nil
}

// charged is what the charge stage decided about one update.
type charged struct {
	cost int64 // what was charged: the update's cost, or its notification's length if more
	// past: the budget is spent (see chargeLocked). The update folds only
	// if it replaces session state (replaces), and then into the
	// session's state alone.
	past, replaces bool
	over           overBudget // for act
}

// folds reports whether the update folds at all: false for one dropped
// past the budget.
func (ch charged) folds() bool { return !ch.past || ch.replaces }

// chargeUpdateLocked is the charge stage: it charges cost to the running
// turn t's budget (nil: the session's, outside turns) and counts the
// update as kept or dropped. replaces says the update replaces session
// state (replacesState), which folds into SessionState whatever the
// budget: the session's state must not go stale, and its log is bounded
// on its own. s.mu is held.
func (s *Session) chargeUpdateLocked(t *Turn, cost int64, replaces bool) charged {
	ch := charged{cost: cost, replaces: replaces}
	ch.past, ch.over = s.chargeLocked(t, cost)
	switch {
	case !ch.past:
		keptLocked(t, cost)
	case !replaces:
		if m := s.droppedLocked(t); m != "" {
			ch.over.msgs = append(ch.over.msgs, m)
		}
	}
	return ch
}

// folded is what the fold stage did, for record to log.
type folded struct {
	session bool           // foldSessionUpdate changed SessionState
	act     *Activity      // the Activity a state_update made (joinActivityLocked)
	tc      *ToolCallState // the tool call the update changed in the turn or History
	// mark, markTC: the cancelled turn's mark on tc (markFoldLocked), to
	// log after the update's own event.
	mark   *schema.ToolCallUpdate
	markTC *ToolCallState
	// listed: a background tool call the session's Activity lists changed
	// in the turn; the Activity now holds listed (its state after mark).
	listed *ToolCallState
}

// foldUpdateLocked is the fold stage: u changes the session's state, and,
// unless sessionOnly (past the budget), the running turn t's fold, or the
// session's History outside turns. It logs nothing and wakes nobody.
// s.mu is held.
func (s *Session) foldUpdateLocked(t *Turn, u schema.Update, sessionOnly bool) (f folded) {
	f.session = foldSessionUpdate(&s.state, u)
	f.act = s.joinActivityLocked(u)
	if sessionOnly {
		return f
	}
	if t == nil {
		if f.tc = s.history.apply(u); f.tc != nil {
			refreshToolCall(&s.state, f.tc)
		}
		return f
	}
	f.tc = t.fold.apply(u)
	f.mark, f.markTC = t.markFoldLocked(f.tc)
	if !f.session {
		if id := toolCallID(u); id != "" && listsToolCall(&s.state, id) {
			// A listed background tool call changed: the session's
			// Activity follows it, so its feed carries the change
			// (background_v2.go).
			f.listed, _ = t.fold.tools.get(id)
			refreshToolCall(&s.state, f.listed)
		}
	}
	return f
}

// recordUpdateLocked is the record stage: the events of an update that
// was charged as ch and folded as f, in the order a feed's fold replays
// them (TurnFold, SessionFold): the turn's event of the update, then its
// mark, then the session's event. It changes no folded state. s.mu is
// held.
func (s *Session) recordUpdateLocked(t *Turn, u schema.Update, meta json.RawMessage, ch charged, f folded) {
	switch {
	case !ch.folds():
		// Dropped: no event; readers still wake, to see the counts.
	case ch.past:
		// Applied to the session's state only: not to the turn, History or
		// Outside. The event says so, for SessionFold to do the same.
		s.logLocked(sentry{kind: entAgent, u: u, act: f.act, turn: t, meta: meta, overBudget: true, cost: ch.cost})
		return // logLocked woke the readers
	case t != nil:
		t.recordLocked(u, meta, f.tc)
		if f.mark != nil {
			t.logLocked(entLocal, f.mark, f.markTC)
		}
		if f.session {
			s.logLocked(sentry{kind: entAgent, u: u, act: f.act, turn: t, meta: meta, cost: ch.cost})
		} else if f.listed != nil {
			s.logLocked(sentry{kind: entAgent, u: u, tc: f.listed, turn: t, meta: meta, cost: costSessionEntry})
		}
	default:
		// Trimmed in batches, so the copy costs O(1) per update, and before
		// the update is logged, so the update's event is its last.
		if keep := s.c.opts.Limits.OutsideLog; len(s.state.Outside)+1 >= 2*keep {
			s.trimOutsideLocked(len(s.state.Outside) + 1 - keep)
		}
		s.state.Outside = append(s.state.Outside, OutsideUpdate{Update: u, Replay: s.loading, Late: !s.loading && s.started > 0})
		s.logLocked(sentry{kind: entAgent, u: u, act: f.act, tc: f.tc, replay: s.loading, meta: meta, cost: ch.cost})
	}
	s.notifyLocked()
}

// overBudget is what crossing Limits.MaxTurnBytes asks for once s.mu is
// released: a turn to cancel, diagnostics to report.
type overBudget struct {
	cancel *Turn
	msgs   []string
}

// act is the act stage: it does what crossing the budget asked for, with
// no lock held.
func (c *Client) act(o overBudget) {
	for _, m := range o.msgs {
		c.diag(DiagLimitExceeded, m, nil)
	}
	if t := o.cancel; t != nil {
		t.s.cancelTurn(t)
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
