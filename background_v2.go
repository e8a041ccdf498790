package acp

import "github.com/acpclient/acp/schema"

// Background work joined to what it names (ACP v2 state_update.background;
// schema BackgroundWork: "Items reference entities the Client already
// tracks", each announced before the first snapshot that lists it). A UI
// shows SessionState.Activity.Background as a list of running things, each
// with its title or command, status or output, and a cancel button:
// BackgroundItem.ToolCall, .Terminal and .Subagent give it that without a
// lookup, and BackgroundItem.Cancellable says whether the button works.
// The wire's items (BackgroundWork) only name the work; the join is the
// client's, so it lives in the client's types, Activity and
// BackgroundItem.
//
// The join must fold from the session's events alone (SessionFold), so:
//   - terminals and child sessions are session state: foldSessionUpdate
//     joins them when a state_update arrives (newActivity) and refreshes an
//     item at each terminal_update, terminal_output_chunk, subagent_update
//     or release of what it names, on both sides alike;
//   - tool calls live in the turns' folds, which SessionFold does not
//     have: the live session joins them into the Activity a state_update
//     made before it is logged (joinActivityLocked), and the update's event
//     carries that Activity (Event.Activity), which SessionFold takes; an
//     update to a listed tool call inside a turn is logged on the session
//     too, with the tool call as it now stands (Event.ToolCall), which both
//     sides copy into the item (refreshToolCall).
//
// Activity is never written in place once it is shared: earlier snapshots
// and the logged event share it, so a refresh copies the Activity and its
// list.

// Activity is a v2 session's aggregate activity as the client knows it
// (SessionState.Activity): the latest state_update and the background
// work it lists, each item joined to what it names. Unstable: ACP v2 is
// in Preview; may change.
type Activity struct {
	// State is the latest state_update as the agent sent it (bounded to
	// BackgroundWorkMax background items). It is a value: an Activity
	// always has one, and it is replaced whole, with the Activity, when
	// the next one arrives.
	State schema.StateUpdate `json:"state"`
	// Background is State.Background, item for item, each with what this
	// session knows of the work it names.
	Background []BackgroundItem `json:"background,omitempty"`
}

// BackgroundItem is one item of Activity.Background: the wire's item
// (Work) and what it names, as this session knows it, nil when it knows
// nothing of it (or for a type it does not know). In SessionState.Activity
// the joins are current: each change to a listed tool call, terminal or
// child session replaces its item's copy. Unstable: ACP v2 is in Preview;
// may change.
type BackgroundItem struct {
	Work schema.BackgroundWork `json:"work"`
	// ToolCall is the tool call a "tool_call" item names.
	ToolCall *ToolCallState `json:"toolCall,omitempty"`
	// Terminal is the agent-owned terminal a "terminal" item names.
	Terminal *AgentTerminal `json:"terminal,omitempty"`
	// Subagent is what the parent said about the child session a
	// "subagent" item names (its entry of SessionState.Subagents).
	Subagent *Subagent `json:"subagent,omitempty"`
}

// Cancellable reports whether the work named can be cancelled now: a
// tool call or terminal that advertises capabilities.cancel
// (Session.CancelToolCall, Session.CancelTerminal).
func (b BackgroundItem) Cancellable() bool {
	switch {
	case b.ToolCall != nil:
		return b.ToolCall.Cancellable
	case b.Terminal != nil:
		return b.Terminal.Cancellable
	}
	return false
}

// newActivity returns the Activity u makes, its terminal and subagent
// items joined to st's terminals and child sessions.
func newActivity(st *SessionState, u *schema.StateUpdate) *Activity {
	a := &Activity{State: *u}
	if len(u.Background) > 0 {
		a.Background = make([]BackgroundItem, len(u.Background))
		for i, w := range u.Background {
			a.Background[i] = BackgroundItem{Work: w, Terminal: findTerminal(st, w.TerminalID), Subagent: findSubagent(st, w.SessionID)}
		}
	}
	return a
}

// joinActivityLocked sets, when u is a state_update that was just folded,
// the ToolCall of each tool_call item of the Activity it made, from the
// session's folds, and returns that Activity (nil for other kinds). The
// Activity is not shared yet. s.mu is held.
func (s *Session) joinActivityLocked(u schema.Update) *Activity {
	if _, ok := u.(*schema.StateUpdate); !ok || s.state.Activity == nil {
		return nil
	}
	a := s.state.Activity
	for i := range a.Background {
		if b := &a.Background[i]; b.Work.ToolCallID != "" {
			b.ToolCall = s.toolCallLocked(b.Work.ToolCallID)
		}
	}
	return a
}

func findTerminal(st *SessionState, id string) *AgentTerminal {
	if id == "" {
		return nil
	}
	for i := range st.Terminals {
		if st.Terminals[i].TerminalID == id {
			t := st.Terminals[i]
			return &t
		}
	}
	return nil
}

func findSubagent(st *SessionState, id string) *Subagent {
	if id == "" {
		return nil
	}
	for i := range st.Subagents {
		if st.Subagents[i].SessionID == id {
			sa := st.Subagents[i]
			return &sa
		}
	}
	return nil
}

// refreshBackground replaces, in a copy of st.Activity, the join of every
// item that match says names the changed thing. Cheap when nothing is
// listed: O(len(background)) per update of a listed item.
func refreshBackground(st *SessionState, match func(*schema.BackgroundWork) bool, set func(*BackgroundItem)) {
	a := st.Activity
	if a == nil || len(a.Background) == 0 {
		return
	}
	var bg []BackgroundItem
	for i := range a.Background {
		if !match(&a.Background[i].Work) {
			continue
		}
		if bg == nil {
			bg = append([]BackgroundItem(nil), a.Background...)
		}
		set(&bg[i])
	}
	if bg == nil {
		return
	}
	c := *a
	c.Background = bg
	st.Activity = &c
}

// refreshTerminal and refreshSubagent follow a change of st's terminal or
// child session id into the background items that name it.
func refreshTerminal(st *SessionState, id string) {
	refreshBackground(st, func(w *schema.BackgroundWork) bool { return w.TerminalID == id },
		func(b *BackgroundItem) { b.Terminal = findTerminal(st, id) })
}

func refreshSubagent(st *SessionState, id string) {
	refreshBackground(st, func(w *schema.BackgroundWork) bool { return w.SessionID == id },
		func(b *BackgroundItem) { b.Subagent = findSubagent(st, id) })
}

// refreshToolCall puts tc, a tool call as it now stands, into the
// background items that name it, and reports whether one did.
func refreshToolCall(st *SessionState, tc *ToolCallState) bool {
	hit := false
	refreshBackground(st, func(w *schema.BackgroundWork) bool { return w.ToolCallID == tc.ToolCallID },
		func(b *BackgroundItem) { b.ToolCall, hit = tc, true })
	return hit
}

// listsToolCall reports whether the latest state_update lists the tool
// call id.
func listsToolCall(st *SessionState, id string) bool {
	if st.Activity == nil {
		return false
	}
	for _, b := range st.Activity.Background {
		if b.Work.ToolCallID == id {
			return true
		}
	}
	return false
}

// toolCallID is the tool call a v2 update changes, "" for other kinds.
func toolCallID(u schema.Update) string {
	switch u := u.(type) {
	case *schema.ToolCall:
		return u.ToolCallID
	case *schema.ToolCallUpdate:
		return u.ToolCallID
	case *schema.ToolCallContentChunk:
		return u.ToolCallID
	}
	return ""
}
