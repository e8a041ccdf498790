package acp

import (
	"slices"

	"github.com/acpclient/acp/schema"
)

// The session-level fold: how each kind that changes SessionState outside
// a turn's own fold (fold.go) is applied — commands, mode, config options,
// session info, usage, the plan and its operations, notices, compaction,
// subagents (a child's entry), v2's agent-owned terminals. One function per
// kind, each a pure function of the state and the update: they run on the
// reader goroutine under the session's lock and in SessionFold alike, copy
// what snapshots may share instead of writing into it, and never call user
// code. Where to add a session-level kind: foldSessionUpdate, here, and
// replacesState if it replaces rather than adds. v2's joins of background
// work to what it names are in background_v2.go.

// CompactionState is what the agent said about its latest context
// compaction: its id, status, error and summary (the compaction_update's
// summary, or the compaction_summary_chunk blocks in order).
type CompactionState struct {
	CompactionID string                  `json:"compactionId"`
	Status       schema.CompactionStatus `json:"status,omitempty"`
	Error        string                  `json:"error,omitempty"`
	Summary      []schema.ContentBlock   `json:"summary,omitempty"`
}

// foldPlanOrNoticeUpdate folds one of these kinds into st and reports
// whether u was one.
func foldPlanOrNoticeUpdate(st *SessionState, u schema.Update) bool {
	switch u := u.(type) {
	case *schema.PlanUpdate:
		foldPlanUpdate(st, u)
	case *schema.PlanRemoved:
		foldPlanRemoved(st, u)
	case *schema.Notice:
		foldNotice(st, u)
	case *schema.CompactionUpdate:
		foldCompactionUpdate(st, u)
	case *schema.CompactionSummaryChunk:
		foldCompactionSummaryChunk(st, u)
	default:
		return false
	}
	return true
}

// foldPlanUpdate creates or replaces, in Plans, the plan of the update's
// id (a new id goes last), and makes it the current one: PlanContent holds
// it whatever its type, and Plan its entries (none for a file or markdown
// plan). Plans is copied, never written into: snapshots share it.
func foldPlanUpdate(st *SessionState, u *schema.PlanUpdate) {
	id := u.Plan.PlanID()
	i := slices.IndexFunc(st.Plans, func(p schema.PlanContent) bool { return p.PlanID() == id })
	if _, unknown := u.Plan.(*schema.UnknownPlanContent); unknown {
		// An unknown type has no id to track it by: it is the current
		// plan, and Plans keeps only the plans it can tell apart.
		i = -2
	}
	switch {
	case i >= 0:
		plans := slices.Clone(st.Plans)
		plans[i] = u.Plan
		st.Plans = plans
	case i == -1:
		st.Plans = append(slices.Clip(st.Plans), u.Plan)
	}
	st.PlanContent = u.Plan
	st.Plan = nil
	if items, ok := u.Plan.(*schema.PlanItems); ok {
		st.Plan = planEntries(items.Entries)
	}
}

// foldPlanRemoved drops the plan of this id from Plans, and clears the
// current plan when it is the one removed; an unknown id changes nothing.
func foldPlanRemoved(st *SessionState, u *schema.PlanRemoved) {
	if i := slices.IndexFunc(st.Plans, func(p schema.PlanContent) bool { return p.PlanID() == u.PlanID }); i >= 0 {
		st.Plans = slices.Delete(slices.Clone(st.Plans), i, i+1)
		if len(st.Plans) == 0 {
			st.Plans = nil
		}
	}
	if st.PlanContent != nil && st.PlanContent.PlanID() == u.PlanID {
		st.PlanContent, st.Plan = nil, nil
	}
}

// foldNotice keeps the latest notice; every notice stays on the change
// feed and in the turn's Updates.
func foldNotice(st *SessionState, u *schema.Notice) {
	st.Notice = u
}

// foldCompactionUpdate records a compaction's status. An update of another
// compaction id starts afresh; a summary replaces the one gathered so far.
func foldCompactionUpdate(st *SessionState, u *schema.CompactionUpdate) {
	c := compactionFor(st, u.CompactionID)
	c.Status = u.Status
	c.Error = derefOr(u.Error)
	if u.Summary != nil {
		// Clipped: a later chunk must copy, never append into the update's
		// array, which every fold of this update shares.
		c.Summary = slices.Clip(u.Summary)
	}
	st.Compaction = c
}

// foldCompactionSummaryChunk appends one block to the compaction's summary.
func foldCompactionSummaryChunk(st *SessionState, u *schema.CompactionSummaryChunk) {
	c := compactionFor(st, u.CompactionID)
	c.Summary = append(c.Summary, u.Content)
	st.Compaction = c
}

// compactionFor returns a copy of the session's compaction state when it is
// the one with this id, else a fresh one, so that the fold never writes
// through a pointer a snapshot was taken from.
func compactionFor(st *SessionState, id string) *CompactionState {
	if st.Compaction != nil && st.Compaction.CompactionID == id {
		c := *st.Compaction
		return &c
	}
	return &CompactionState{CompactionID: id}
}

// replacesState reports whether u is a session-level kind that replaces
// part of the session's state rather than adding to it: such updates are
// applied even past the budget (a mode change must not be lost), the rest
// — messages, thoughts, tool calls, compaction summary chunks, unknown
// kinds — are dropped there.
func replacesState(u schema.Update) bool {
	switch u.(type) {
	case *schema.AvailableCommandsUpdate, *schema.CurrentModeUpdate, *schema.ConfigOptionUpdate, *schema.SessionInfoUpdate,
		*schema.UsageUpdate, *schema.Plan, *schema.PlanUpdate, *schema.PlanRemoved, *schema.Notice, *schema.CompactionUpdate, *schema.SubagentUpdate, *schema.StateUpdate:
		return true
	}
	return false
}

// foldSessionUpdate folds the session-level kinds (commands, mode, config
// options, session info, usage, plan) into st and reports whether u was
// one.
func foldSessionUpdate(st *SessionState, u schema.Update) bool {
	switch u := u.(type) {
	case *schema.AvailableCommandsUpdate:
		st.Commands = u.AvailableCommands
	case *schema.CurrentModeUpdate:
		if st.Modes == nil {
			st.Modes = &schema.SessionModeState{}
		} else {
			m := *st.Modes
			st.Modes = &m
		}
		st.Modes.CurrentModeID = u.CurrentModeID
	case *schema.ConfigOptionUpdate:
		st.ConfigOptions = u.ConfigOptions
	case *schema.SessionInfoUpdate:
		if u.Title.Present {
			st.Title = derefOr(u.Title.Value)
		}
		if u.UpdatedAt.Present {
			st.UpdatedAt = derefOr(u.UpdatedAt.Value)
		}
	case *schema.UsageUpdate:
		st.Usage = u
	case *schema.Plan:
		st.Plan, st.PlanContent = planEntries(u.Entries), nil
	case *schema.SubagentUpdate:
		foldSubagent(st, u)
		refreshSubagent(st, u.SessionID)
	case *schema.StateUpdate:
		st.Activity = newActivity(st, u) // background_v2.go
	case *schema.TerminalUpdate:
		foldTerminal(st, u.TerminalID, func(t *AgentTerminal) {
			if u.Command != nil {
				t.Command = *u.Command
			}
			if u.Cwd != nil {
				t.Cwd = *u.Cwd
			}
			if u.Output != nil {
				// Clipped: a later chunk's append allocates, never
				// writing into the update's array (which every fold of
				// the log shares).
				t.Output = u.Output[:len(u.Output):len(u.Output)]
			}
			if u.ExitStatus != nil {
				t.Exit = u.ExitStatus
			}
			if u.Cancellable != nil {
				t.Cancellable = *u.Cancellable
			}
		})
		refreshTerminal(st, u.TerminalID)
	case *schema.TerminalOutputChunk:
		foldTerminal(st, u.TerminalID, func(t *AgentTerminal) {
			// Appending past the length never changes bytes an earlier
			// snapshot holds.
			t.Output = append(t.Output, u.Data...)
		})
		refreshTerminal(st, u.TerminalID)
	default:
		return foldPlanOrNoticeUpdate(st, u)
	}
	return true
}

// patch folds one subagent_update into sa.
func (sa *Subagent) patch(u *schema.SubagentUpdate) {
	if u.Title.Present {
		sa.Title = derefOr(u.Title.Value)
	}
	if u.Description.Present {
		sa.Description = derefOr(u.Description.Value)
	}
	if u.Capabilities.Present {
		sa.Capabilities = u.Capabilities.Value
	}
	if u.State.Present {
		sa.State = u.State.Value
	}
	if u.CWD != nil {
		sa.CWD = *u.CWD
	}
	if u.ClearAdditionalDirectories {
		sa.AdditionalDirectories = nil // cleared: unset, the parent's apply
	} else if u.AdditionalDirectories != nil {
		// [] stays a non-nil empty list: the agent reported none.
		sa.AdditionalDirectories = slices.Clip(u.AdditionalDirectories)
	}
	sa.Meta = patchMeta(sa.Meta, u.Meta)
}

// foldSubagent folds a subagent_update into the parent's state, copying
// the list so snapshots never change. Announcements past
// Limits.MaxSubagentSessions live children are dropped before they get
// here, and a released child's entry is removed (EventSubagentReleased), so
// the list holds at most that many entries.
func foldSubagent(st *SessionState, u *schema.SubagentUpdate) {
	subs := slices.Clone(st.Subagents)
	i := slices.IndexFunc(subs, func(sa Subagent) bool { return sa.SessionID == u.SessionID })
	if i < 0 {
		subs = append(subs, Subagent{SessionID: u.SessionID})
		i = len(subs) - 1
	}
	subs[i].patch(u)
	st.Subagents = subs
}

// foldTerminal applies set to the terminal id of st, added when new. The
// list is copied: earlier snapshots share the old one.
func foldTerminal(st *SessionState, id string, set func(*AgentTerminal)) {
	terms := make([]AgentTerminal, len(st.Terminals), len(st.Terminals)+1)
	copy(terms, st.Terminals)
	i := -1
	for j := range terms {
		if terms[j].TerminalID == id {
			i = j
			break
		}
	}
	if i < 0 {
		if len(terms) >= AgentTerminalsMax {
			terms = terms[len(terms)-AgentTerminalsMax+1:]
		}
		terms = append(terms, AgentTerminal{TerminalID: id})
		i = len(terms) - 1
	}
	set(&terms[i])
	terms[i].boundOutput()
	st.Terminals = terms
}

func derefOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
