package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"iter"
	"slices"
)

// A session's events are the changes to its SessionState, numbered from 1
// in the order applied: every update the agent sent outside a turn (with
// Replay set during session/load), the session-level updates it sent
// inside one (commands, mode, config options, session info, usage, plan,
// and the unstable plan_update, plan_removed, notice and compaction kinds;
// Turn says which), a permission request's toolCall patch outside a turn,
// the local results of SetMode and SetConfigOption (origin local), what a
// session/new, load, resume or fork result or SetModel set (EventSetup),
// the start of each turn (EventTurnStart), a v2 agent's update inside a
// turn to a tool call its latest state_update lists as background work
// (so SessionState.Activity follows it; Event.ToolCall is the tool call
// after it), each restart of the agent the session was brought back from
// (EventRestarted), each released child whose entry left Subagents
// (EventSubagentReleased), and what was dropped from the
// front of SessionState.Outside (EventOutsideTrimmed). Folding them with a
// [SessionFold] reproduces
// [Session.State]. A turn's own changes (its messages, tool calls, cancel
// marks, end) are on the turn's events; see [Turn.Events].

// Kinds of session log entries, after the turn's.
const (
	entSetup uint8 = entEnd + 1 + iota
	entTurnStart
	entOutsideTrimmed
	entTurnReleased
	entRestarted
	entSubagentReleased
)

// SessionSetup is what creating a session, or a session/new, load or
// resume result, set in its state: the fields that are non-zero.
type SessionSetup struct {
	SessionID             string                       `json:"sessionId,omitempty"`
	Cwd                   string                       `json:"cwd,omitempty"`
	AdditionalDirectories []string                     `json:"additionalDirectories,omitempty"`
	Modes                 *schema.SessionModeState     `json:"modes,omitempty"`
	ConfigOptions         []schema.SessionConfigOption `json:"configOptions,omitempty"`
	// Models is the legacy model selection the result set, or the local
	// result of SetModel. Unstable, as SessionModelState.
	Models *schema.SessionModelState `json:"models,omitempty"`
	// Meta is the result's _meta.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// ParentSessionID is set on a child session's setup: the session
	// that announced it.
	ParentSessionID string `json:"parentSessionId,omitempty"`
}

// sentry is one event of a session's log.
type sentry struct {
	u     schema.Update
	meta  json.RawMessage // the notification's own _meta, for agent updates
	tc    *ToolCallState
	turn  *Turn
	setup *SessionSetup
	// restart is what an entRestarted says.
	restart *SessionRestart
	// sub is the entry an entSubagentReleased removed.
	sub *Subagent
	// act is, for a state_update, the Activity it made (Event.Activity).
	act    *Activity
	kind   uint8
	replay bool
	n      int // entries trimmed, for entOutsideTrimmed
	// cost is what the entry keeps, for an agent update or permission
	// request: what it was charged against Limits.MaxTurnBytes.
	cost int64
	// overBudget: an agent update applied to the session's state only,
	// past Limits.MaxTurnBytes (Event.OverBudget).
	overBudget bool
}

// logLocked appends an event to the session's log, dropping the oldest
// beyond Limits.SessionLog events or half Limits.MaxTurnBytes of what they
// keep (as MaxTurnBytes counts it). It drops in batches, so the cost stays
// O(1) per event: when the log holds twice SessionLog events, down to
// SessionLog, and when it keeps more than half MaxTurnBytes, down to a
// quarter; the latest event always stays. The bytes matter for updates past the budget that replace session
// state (a plan, commands...): they are applied whatever the budget, and
// the log is all that keeps them. s.mu is held, or s is not visible yet.
func (s *Session) logLocked(e sentry) {
	s.log.append(e)
	s.log.bytes += e.cost
	l := s.c.opts.Limits
	if n := s.log.len(); n >= 2*l.SessionLog || s.log.bytes > l.MaxTurnBytes/2 {
		drop := 0
		for first := s.log.base + 1; drop < n-1 && (n-drop > l.SessionLog || s.log.bytes > l.MaxTurnBytes/4); drop++ {
			s.log.bytes -= s.log.at(first + uint64(drop)).cost
		}
		s.log.dropFront(drop)
	}
	s.notifyLocked()
}

func (s *Session) event(seq uint64, e sentry) Event {
	ev := Event{Seq: seq, Update: e.u, Meta: e.meta, ToolCall: e.tc, Turn: e.turn, Setup: e.setup, Restart: e.restart, Subagent: e.sub, Activity: e.act, Replay: e.replay, Trimmed: e.n, OverBudget: e.overBudget}
	ev.Kind, ev.Origin = entryKind(e.kind)
	return ev
}

// Events returns an iterator over the session's events with a sequence
// number greater than after (see above for what they are): it yields those
// already applied, then follows new ones, in order, until ctx ends, the
// consumer stops, or the session is closed or its connection ends and every
// event was yielded. Any number of goroutines may range over it at once,
// each at its own pace; the reader goroutine never waits for them.
//
// The session keeps its last Limits.SessionLog events. A reader that asks
// for older ones (it resumed from an old number, or fell that far behind)
// gets an EventReleased whose Session is the state as of its Seq, and then
// the events after it.
func (s *Session) Events(ctx context.Context, after uint64) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		next := after + 1
		for {
			s.mu.Lock()
			if next <= s.log.base && next <= s.log.seq {
				st := s.stateLocked()
				seq, histKind := s.log.seq, s.history.lastKind
				s.mu.Unlock()
				if !yield(Event{Seq: seq, Kind: EventReleased, Session: &st, histKind: histKind}) {
					return
				}
				next = seq + 1
				continue
			}
			batch := s.log.from(next)
			closed := s.closed
			changed := s.changedLocked()
			s.mu.Unlock()
			for _, e := range batch {
				if !yield(s.event(next, e)) {
					return
				}
				next++
			}
			if len(batch) > 0 {
				continue
			}
			if closed {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			case <-s.c.life.done:
				s.mu.Lock()
				more := next <= s.log.seq
				s.mu.Unlock()
				if !more {
					return
				}
			}
		}
	}
}

// SessionFold folds a session's events into its state, with the client's
// rules: applying every event from the first (or from an EventReleased) in
// order gives what [Session.State] returns after the last of them. The zero
// value is ready to use. A SessionFold is not safe for concurrent use.
//
// Events that went through JSON lose one detail an EventReleased carries in
// process, the kind of the last update folded into History: a fold that
// resumes from such an event while Outside is empty (after
// Session.ReleaseHistory) may start a new message with the next id-less
// chunk where the session continued the last one.
type SessionFold struct {
	st   SessionState
	hist fold
	seq  uint64
}

// Apply folds one event.
func (sf *SessionFold) Apply(ev Event) {
	sf.seq = ev.Seq
	st := &sf.st
	switch ev.Kind {
	case EventUpdate:
		if ev.Update == nil {
			return
		}
		switch ev.Origin {
		case OriginAgent, "":
			foldSessionUpdate(st, ev.Update)
			if ev.Activity != nil {
				// The live session's join, which includes the tool calls
				// of the turns' folds this fold does not have.
				st.Activity = ev.Activity
			}
			if ev.Turn == nil && !ev.OverBudget {
				st.Outside = append(st.Outside, OutsideUpdate{Update: ev.Update, Replay: ev.Replay, Late: !ev.Replay && st.Turns > 0})
				sf.hist.apply(ev.Update)
			}
			if ev.ToolCall != nil {
				refreshToolCall(st, ev.ToolCall) // background_v2.go
			}
		case OriginPermission:
			if u, ok := ev.Update.(*schema.ToolCallUpdate); ok {
				sf.hist.tools.update(u)
			}
		case OriginLocal:
			foldSessionUpdate(st, ev.Update)
		}
	case EventSetup:
		if su := ev.Setup; su != nil {
			if su.SessionID != "" {
				st.SessionID = su.SessionID
			}
			if su.Cwd != "" {
				st.Cwd = su.Cwd
			}
			if su.AdditionalDirectories != nil {
				st.AdditionalDirectories = su.AdditionalDirectories
			}
			if su.Modes != nil {
				st.Modes = su.Modes
			}
			if su.ConfigOptions != nil {
				st.ConfigOptions = su.ConfigOptions
			}
			if su.Models != nil {
				st.Models = su.Models
			}
			if su.Meta != nil {
				st.Meta = su.Meta
			}
			if su.ParentSessionID != "" {
				st.ParentSessionID = su.ParentSessionID
			}
		}
	case EventTurnStart:
		st.Turns++
	case EventRestarted:
		st.Restarts++
	case EventSubagentReleased:
		if ev.Subagent != nil {
			releaseSubagent(st, ev.Subagent.SessionID) // subagents.go
		}
	case EventOutsideTrimmed:
		st.Outside = trimOutside(st.Outside, ev.Trimmed)
	case EventReleased:
		if ev.Session != nil {
			sf.st = *ev.Session
			sf.hist = foldFrom(ev.Session.History, ev.Session.Outside)
			if ev.histKind != "" {
				sf.hist.lastKind = ev.histKind
			}
		}
	}
}

// trimOutside drops the first n entries of outside, into a new array so the
// dropped updates can be collected.
func trimOutside(outside []OutsideUpdate, n int) []OutsideUpdate {
	if n >= len(outside) {
		return nil
	}
	return slices.Clone(outside[max(n, 0):])
}

// Seq returns the sequence number of the last event applied.
func (sf *SessionFold) Seq() uint64 { return sf.seq }

// State returns the folded state.
func (sf *SessionFold) State() SessionState {
	st := sf.st
	clipSessionState(&st)
	st.History = sf.hist.state()
	return st
}

// foldFrom rebuilds a fold from its snapshot. The only thing a snapshot
// does not show is the kind of the last update, which decides whether an
// id-less chunk continues the last message: it is that of the last update
// outside a turn.
func foldFrom(st TurnState, outside []OutsideUpdate) fold {
	var f fold
	restore := func(l *msgList, msgs []Message) {
		for _, m := range msgs {
			acc := &msgAcc{id: m.MessageID, order: m.Order, blocks: [][]byte{[]byte(m.Text)}, size: len(m.Text), content: slices.Clone(m.Content)}
			l.l = append(l.l, acc)
			if m.MessageID != "" {
				if l.byID == nil {
					l.byID = map[string]*msgAcc{}
				}
				l.byID[m.MessageID] = acc
			}
		}
	}
	restore(&f.messages, st.Messages)
	restore(&f.thoughts, st.Thoughts)
	restore(&f.user, st.UserMessages)
	for _, tc := range st.ToolCalls {
		c := tc
		f.tools.put(&c)
		c.Order = tc.Order // put numbered it afresh; the snapshot's stands
	}
	f.smsgs.restore(st.SessionMessages)
	f.tools.items = len(st.Messages) + len(st.Thoughts) + len(st.UserMessages) + len(st.ToolCalls) + len(st.SessionMessages)
	f.plan, f.planID = st.Plan, st.PlanID
	if n := len(outside); n > 0 {
		f.lastKind = outside[n-1].Update.UpdateKind()
	}
	return f
}
