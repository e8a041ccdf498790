package acp

import "slices"

// What the client keeps, and for how long. A turn's folded state (messages,
// tool calls, plan, outcome) is kept for as long as the turn is: until
// Turn.Release, Session.Release or Session.Close. A turn's log — its events
// and updates, 16 bytes an event plus, for updates other than plain text
// chunks (whose text is their message's), the decoded update; about 2.5
// bytes a chunk for a run of plain text chunks of one message (turnlog.go)
// — is kept
// while the turn runs and then only for the Limits.TurnLogs most recent
// ended turns. What a
// session's ended turns keep in all is bounded by Limits.MaxEndedTurnBytes:
// past it the oldest are released.

// retainLocked applies the retention policy when t ends, and returns the
// turns it released to keep the session's ended turns within
// Limits.MaxEndedTurnBytes. s.mu is held.
func (s *Session) retainLocked(t *Turn) (released int) {
	s.retained.bytes += t.budget.kept
	if t.forgotten {
		t.forgetLocked()
		return 0
	}
	s.retained.logged = append(s.retained.logged, t)
	keep := s.c.opts.Limits.TurnLogs
	if keep < 0 {
		keep = 0
	}
	for len(s.retained.logged) > keep {
		s.retained.logged[0].releaseLogLocked()
		s.retained.logged[0] = nil
		s.retained.logged = s.retained.logged[1:]
	}
	return s.releaseEndedLocked(t)
}

// releaseEndedLocked releases the oldest ended turns, as Turn.Release
// does, while the session's ended turns keep more than
// Limits.MaxEndedTurnBytes; last, the turn that just ended, stays. Each
// release is an EventTurnReleased in the session's feed. s.mu is held.
func (s *Session) releaseEndedLocked(last *Turn) (released int) {
	ceiling := s.c.opts.Limits.MaxEndedTurnBytes
	for i := 0; s.retained.bytes > ceiling && i < len(s.turns); {
		old := s.turns[i]
		if old == last || !old.life.ended {
			i++
			continue
		}
		old.forgotten = true
		old.forgetLocked() // removes it from s.turns
		s.logLocked(sentry{kind: entTurnReleased, turn: old})
		released++
	}
	return released
}

// releaseLogLocked drops the turn's log; its fold stays, compacted. While
// an iterator reads the log, the release waits for the last one to stop:
// a reader that started never loses an event.
func (t *Turn) releaseLogLocked() {
	if t.log.release() {
		t.releasedLocked()
	}
}

// releasedLocked drops what goes with the log once it is released.
func (t *Turn) releasedLocked() {
	t.metas = nil
	t.log.dropRuns()
	t.fold.compact()
}

// leave ends an iterator's reading of the log, releasing it if the
// release waited for that.
func (t *Turn) leave() {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.log.leave() {
		t.releasedLocked()
	}
}

// forgetLocked drops the turn's log and fold and removes it from its
// session's list. s.mu is held and the turn has ended.
func (t *Turn) forgetLocked() {
	s := t.s
	s.retained.bytes -= t.budget.kept
	t.releaseLogLocked()
	t.fold = fold{} // a log still read keeps the messages it refers to
	if i := slices.Index(s.turns, t); i >= 0 {
		s.turns = slices.Delete(s.turns, i, i+1)
	}
	if i := slices.Index(s.retained.logged, t); i >= 0 {
		s.retained.logged = slices.Delete(s.retained.logged, i, i+1)
	}
}

// Release tells the client that nobody needs the turn's state any more: its
// log and folded state are dropped and it leaves Session.Turns; its
// outcome (Wait, Err, and the StopReason and Cancelled of State) stays.
// Readers of Events then get an EventReleased. Releasing a running turn
// takes effect when it ends, so its consumers see it to the end. Releasing
// twice does nothing.
func (t *Turn) Release() {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.forgotten {
		return
	}
	t.forgotten = true
	if t.life.ended {
		t.forgetLocked()
	}
}

// CurrentTurn returns the running turn, or nil between turns.
func (s *Session) CurrentTurn() *Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// Release forgets the session on this client, without telling the agent
// (Close does both): Client.Session no longer returns it, later calls that
// need it (Prompt, SetMode, SetConfigOption, Close) fail locally with an
// error wrapping ErrSessionClosed, and updates the agent still sends for its
// id are treated as for an unknown session — except while a running turn
// is cancelled: it is cancelled first, as by [Turn.Cancel], and what the
// agent still sends for it is folded into it until it ends. The handle keeps what was folded (State,
// Turns) and the client keeps nothing of it: memory goes when the caller
// drops the handle. Releasing twice does nothing.
func (s *Session) Release() {
	if t := s.CurrentTurn(); t != nil {
		t.Cancel()
	}
	s.mu.Lock()
	s.closed = true
	running := s.turn != nil
	s.notifyLocked()
	s.mu.Unlock()
	if !running {
		s.c.unregister(s)
	} // else the turn's end unregisters it
}

// ReleaseHistory drops the raw log of what arrived outside turns
// (SessionState.Outside: a session/load replay, updates between turns); the
// folded History stays, compacted. Later updates outside turns are logged
// again from there. A UI that has rendered a long replay calls it to keep
// only the folded conversation.
//
// The session's feed gets an EventOutsideTrimmed for what was dropped, so
// a [SessionFold] still reproduces State.
func (s *Session) ReleaseHistory() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trimOutsideLocked(len(s.state.Outside))
	s.history.compact()
}

// trimOutsideLocked drops the oldest n entries of SessionState.Outside and
// logs it for the feed.
func (s *Session) trimOutsideLocked(n int) {
	if n <= 0 {
		return
	}
	s.state.Outside = trimOutside(s.state.Outside, n)
	s.logLocked(sentry{kind: entOutsideTrimmed, n: n})
}
