package acp

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// How an agent's session/update notifications reach a session: routed by
// session id on the reader goroutine (held for an id not registered yet,
// within Limits.MaxOrphanSessions and MaxOrphanBytes), folded into the
// running turn or the session's history in wire order, and counted against
// Limits.MaxTurnBytes.

// apply folds one update, in wire order, on the reader goroutine. meta is
// the notification's own _meta, kept on the update's events; size is the
// notification's length, counted against Limits.MaxTurnBytes.
func (s *Session) apply(u Update, meta json.RawMessage, size int) {
	s.mu.Lock()
	over := s.applyLocked(u, meta, size)
	s.mu.Unlock()
	over.act(s.c)
}

// overBudget is what crossing Limits.MaxTurnBytes asks for once s.mu is
// released: a turn to cancel, a diagnostic to report.
type overBudget struct {
	cancel *Turn
	msg    string
}

func (o overBudget) act(c *Client) {
	if o.msg != "" {
		c.diag(string(DiagLimitExceeded), o.msg, nil)
	}
	if o.cancel != nil {
		o.cancel.Cancel()
	}
}

// applyLocked folds one update, or drops it when it is over
// Limits.MaxTurnBytes (see there), and says what to do about the limit.
func (s *Session) applyLocked(u Update, meta json.RawMessage, size int) (over overBudget) {
	budget := s.c.opts.Limits.MaxTurnBytes
	session := foldSessionUpdate(&s.state, u)
	if t := s.turn; t != nil {
		t.bytes += int64(size)
		switch {
		case t.bytes > 2*budget:
			// Past the allowance for winding down: what would grow the
			// turn is dropped; session-level kinds replace, never grow.
			if t.dropped++; t.dropped == 1 {
				over.msg = fmt.Sprintf("dropping the updates of a cancelled turn of session %s: it has sent %d bytes, over twice Limits.MaxTurnBytes (%d)", s.id, t.bytes, budget)
			}
			if session {
				s.logLocked(sentry{kind: entAgent, u: u, turn: t, meta: meta})
			} else {
				s.notifyLocked()
			}
			return over
		case t.bytes > budget && !t.overBudget:
			t.overBudget = true
			over.cancel = t
			over.msg = fmt.Sprintf("cancelling a turn of session %s: its updates reached %d bytes, over Limits.MaxTurnBytes (%d)", s.id, t.bytes, budget)
		}
		t.applyLocked(u, meta)
		if session {
			s.logLocked(sentry{kind: entAgent, u: u, turn: t, meta: meta})
		}
	} else if s.histBytes += int64(size); s.histBytes > budget && !session {
		if s.histDropped++; s.histDropped&(s.histDropped-1) == 0 { // 1, 2, 4, 8...
			over.msg = fmt.Sprintf("dropped %d updates outside turns for session %s: they reached %d bytes, over Limits.MaxTurnBytes (%d); the session's History stops growing", s.histDropped, s.id, s.histBytes, budget)
		}
		s.notifyLocked()
		return over
	} else {
		// Trimmed in batches, so the copy costs O(1) per update, and before
		// the update is logged, so the update's event is its last.
		if keep := s.c.opts.Limits.OutsideLog; len(s.state.Outside)+1 >= 2*keep {
			s.trimOutsideLocked(len(s.state.Outside) + 1 - keep)
		}
		s.state.Outside = append(s.state.Outside, OutsideUpdate{Update: u, Replay: s.loading, Late: !s.loading && s.started > 0})
		tc := s.history.apply(u)
		s.logLocked(sentry{kind: entAgent, u: u, tc: tc, replay: s.loading, meta: meta})
	}
	s.notifyLocked()
	return over
}

// foldSessionUpdate folds the session-level kinds (commands, mode, config
// options, session info, usage, plan) into st and reports whether u was
// one.
func foldSessionUpdate(st *SessionState, u Update) bool {
	switch u := u.(type) {
	case *AvailableCommandsUpdate:
		st.Commands = u.AvailableCommands
	case *CurrentModeUpdate:
		if st.Modes == nil {
			st.Modes = &SessionModeState{}
		} else {
			m := *st.Modes
			st.Modes = &m
		}
		st.Modes.CurrentModeID = u.CurrentModeID
	case *ConfigOptionUpdate:
		st.ConfigOptions = u.ConfigOptions
	case *SessionInfoUpdate:
		if u.Title.Present {
			st.Title = derefOr(u.Title.Value)
		}
		if u.UpdatedAt.Present {
			st.UpdatedAt = derefOr(u.UpdatedAt.Value)
		}
	case *UsageUpdate:
		st.Usage = u
	case *Plan:
		st.Plan, st.PlanContent = u.Entries, nil
	default:
		return foldUnstableUpdate(st, u)
	}
	return true
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
	u    Update
	meta json.RawMessage // the notification's own _meta
	size int
}

// onUpdate is the wire's hook for session/update, on the reader goroutine.
func (c *Client) onUpdate(params []byte) {
	sid, u, meta, err := decodeNotificationMeta(params)
	if err != nil {
		c.diag("bad_update", "kept a session/update that did not decode as unknown: "+err.Error(), params)
	}
	if u == nil {
		return
	}
	if uu, ok := u.(*UnknownUpdate); ok {
		c.diag("unknown_update", "kept an update of unknown kind "+uu.Kind, nil)
	}
	c.mu.Lock()
	s := c.sessions[sid]
	if s == nil {
		reason := c.keepOrphanLocked(sid, u, meta, len(params))
		c.mu.Unlock()
		if reason != "" {
			c.diag("limit_exceeded", "dropped an update for unknown session "+strconv.Quote(sid)+": "+reason, nil)
		}
		return
	}
	c.mu.Unlock()
	s.apply(u, meta, len(params))
}

// keepOrphanLocked keeps an update for a session id not registered yet, or
// says which limit it is over. c.mu is held.
func (c *Client) keepOrphanLocked(sid string, u Update, meta json.RawMessage, size int) string {
	l := c.opts.Limits
	list, known := c.orphans[sid]
	switch {
	case !known && len(c.orphans) >= l.MaxOrphanSessions:
		return fmt.Sprintf("updates are already kept for %d unknown session ids (Limits.MaxOrphanSessions)", l.MaxOrphanSessions)
	case c.orphanBytes+size > l.MaxOrphanBytes:
		return fmt.Sprintf("updates kept for unknown sessions would exceed %d bytes (Limits.MaxOrphanBytes)", l.MaxOrphanBytes)
	case len(list) >= maxOrphans:
		return fmt.Sprintf("%d updates are already kept for it", maxOrphans)
	}
	c.orphans[sid] = append(list, orphan{u, meta, size})
	c.orphanBytes += size
	return ""
}

// register makes a session known, applying updates that arrived for its id
// before it was (in their order, before any later update).
func (c *Client) register(s *Session) {
	c.mu.Lock()
	old := c.sessions[s.id]
	c.sessions[s.id] = s
	orphans := c.orphans[s.id]
	delete(c.orphans, s.id)
	for _, o := range orphans {
		c.orphanBytes -= o.size
	}
	if len(orphans) > 0 {
		// s is not visible to anyone yet, so taking its lock under c.mu
		// cannot invert the c.mu-before-s.mu order. Holding c.mu keeps
		// onUpdate from applying a newer update first.
		s.mu.Lock()
		var over []overBudget
		for _, o := range orphans {
			over = append(over, s.applyLocked(o.u, o.meta, o.size))
		}
		s.mu.Unlock()
		defer func() {
			for _, o := range over {
				o.act(c)
			}
		}()
	}
	c.mu.Unlock()
	if old != nil && old != s {
		// Loading a session again: the old handle gets no more updates;
		// wake whoever watches it.
		old.mu.Lock()
		old.notifyLocked()
		old.mu.Unlock()
	}
}
