package acp

import (
	"encoding/json"
	"slices"

	"github.com/acpclient/acp/schema"
)

// SessionState, the snapshot of a session as a whole, and how a live
// session takes one (Session.State). What folds into it is in
// fold_session.go.

// SessionState is a snapshot of what the agent told about the session as a
// whole. Snapshots are values, safe to keep: later updates never change
// one. They hold a raw log too (Outside), which a hand-written
// SessionState does not list: compare [SessionState.WithoutLog]
// with it (cmp.Diff, reflect.DeepEqual).
type SessionState struct {
	SessionID             string                       `json:"sessionId"`
	Cwd                   string                       `json:"cwd"`
	AdditionalDirectories []string                     `json:"additionalDirectories,omitempty"`
	Modes                 *schema.SessionModeState     `json:"modes,omitempty"`
	ConfigOptions         []schema.SessionConfigOption `json:"configOptions,omitempty"`
	// Models is the legacy model selection, when the agent offers one (see
	// SessionModelState; unstable).
	Models    *schema.SessionModelState `json:"models,omitempty"`
	Commands  []schema.AvailableCommand `json:"commands,omitempty"`
	Title     string                    `json:"title,omitempty"`
	UpdatedAt string                    `json:"updatedAt,omitempty"`
	// Usage is the latest usage_update (context window use and cost).
	Usage *schema.UsageUpdate `json:"usage,omitempty"`
	// Plan is the latest plan, whichever turn sent it: a plan update, or
	// the entries of a plan_update of type items. As in TurnState, nil
	// means no entries, whether no plan came or the latest had none.
	Plan []schema.PlanEntry `json:"plan,omitempty"`
	// PlanContent is the plan of the latest plan_update, until a
	// plan_removed of its id or a (legacy) plan update.
	PlanContent schema.PlanContent `json:"planContent,omitempty"`
	// Plans are the session's plans that plan_update created and
	// plan_removed has not removed, in the order they were created; an
	// update replaces its plan in place. (A plan of a type this package
	// does not know has no id to track it by: it is only PlanContent.)
	Plans []schema.PlanContent `json:"plans,omitempty"`
	// Notice is the latest notice update; Compaction what the agent said
	// about its latest context compaction.
	Notice     *schema.Notice   `json:"notice,omitempty"`
	Compaction *CompactionState `json:"compaction,omitempty"`
	// Activity is the session's activity as a v2 agent reports it: its
	// latest state_update (the foreground state) and the background work
	// it lists, joined to what each item names; nil until one arrives (and
	// always for a v1 agent). Unstable: ACP v2 is in Preview.
	Activity *Activity `json:"activity,omitempty"`
	// Terminals are the agent-owned terminals a v2 agent reported
	// (terminal_update, terminal_output_chunk), in the order first seen;
	// for display only. Unstable: ACP v2 is in Preview; may change.
	Terminals []AgentTerminal `json:"terminals,omitempty"`
	// Meta is the _meta of the session/new, load, resume or fork result
	// (an object, as the agent sent it; nil when it sent none).
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Turns counts the turns started in this session, released or not.
	Turns int `json:"turns"`
	// Restarts counts the restarts of the agent the session was brought
	// back from (ClientOptions.Restart): one per restart that restored it
	// (EventRestarted), not per attempt.
	Restarts int `json:"restarts,omitempty"`

	// ParentSessionID is, for a child session, the session whose
	// subagent_update announced it ("" otherwise).
	ParentSessionID string `json:"parentSessionId,omitempty"`
	// Subagents are the child sessions announced on this session, in the
	// order of their announcement, as the parent described them
	// (subagent_update, patch by patch).
	Subagents []Subagent `json:"subagents,omitempty"`

	// History folds the updates that arrived outside any turn: a
	// session/load replay, and updates an agent sent between turns.
	History TurnState `json:"history"`
	// Outside lists those updates in wire order, each marked as replayed
	// (during session/load) or late (after a turn had ended), since the
	// session started or Session.ReleaseHistory was last called: the
	// latest Limits.OutsideLog of them or more (see there).
	Outside []OutsideUpdate `json:"-"`
}

// OutsideUpdate is an update that arrived while no turn was running. There
// are three kinds, told apart by the flags:
//
//   - Replay: it arrived during session/load, before the agent answered —
//     the conversation being replayed.
//   - Late: it arrived after one of the session's turns had ended (an agent
//     still talking after its answer, or announcing something between
//     turns).
//   - neither: it arrived before the session's first turn and outside a
//     load — typically while session/new (or resume) had not answered yet
//     (agents announce their commands that early; such updates are held
//     for the session id and applied, in order, when the session is
//     registered), or between that answer and the first prompt.
type OutsideUpdate struct {
	Update schema.Update
	Replay bool
	Late   bool
}

// State returns a snapshot of the session's folded state. Its cost is
// O(the session's lists and its history's messages and tool calls); it
// copies no text.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked()
}

func (s *Session) stateLocked() SessionState {
	st := s.state
	clipSessionState(&st)
	st.Turns = s.started
	st.History = s.history.state()
	return st
}

// clipSessionState makes st's lists and mode its own: appending to a
// snapshot's slices never writes into the live state.
func clipSessionState(st *SessionState) {
	st.AdditionalDirectories = slices.Clip(st.AdditionalDirectories)
	if st.Modes != nil {
		m := *st.Modes
		st.Modes = &m
	}
	if st.Models != nil {
		m := *st.Models
		st.Models = &m
	}
	if st.Compaction != nil {
		c := *st.Compaction
		c.Summary = slices.Clip(c.Summary)
		st.Compaction = &c
	}
	st.ConfigOptions = slices.Clip(st.ConfigOptions)
	st.Commands = slices.Clip(st.Commands)
	st.Plan = slices.Clip(st.Plan)
	st.Outside = slices.Clip(st.Outside)
	st.Subagents = slices.Clip(st.Subagents)
}
