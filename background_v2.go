package acp

// Background work joined to what it names (ACP v2 state_update.background;
// schema BackgroundWork: "Items reference entities the Client already
// tracks", each announced before the first snapshot that lists it). A UI
// shows SessionState.Activity.Background as a list of running things, each
// with its title or command, status or output, and a cancel button:
// BackgroundWork.ToolCall, .Terminal and .Subagent give it that without a
// lookup, and BackgroundWork.Cancellable says whether the button works.
//
// The join must fold from the session's events alone (SessionFold), so:
//   - terminals and child sessions are session state: foldSessionUpdate
//     joins them when a state_update arrives and refreshes an item at each
//     terminal_update, terminal_output_chunk or subagent_update of what it
//     names, on both sides alike;
//   - tool calls live in the turns' folds, which SessionFold does not
//     have: the live session joins them into the state_update itself
//     before it is folded and logged (joinToolCallsLocked), and an update
//     to a listed tool call inside a turn is logged on the session too,
//     with the tool call as it now stands (Event.ToolCall), which both
//     sides copy into the item (refreshToolCall).
//
// Activity is never written in place: earlier snapshots and the logged
// update share it, so a refresh copies the StateUpdate and its list.

// Cancellable reports whether the work named can be cancelled now: a
// tool call or terminal that advertises capabilities.cancel
// (Session.CancelToolCall, Session.CancelTerminal).
func (b BackgroundWork) Cancellable() bool {
	switch {
	case b.ToolCall != nil:
		return b.ToolCall.Cancellable
	case b.Terminal != nil:
		return b.Terminal.Cancellable
	}
	return false
}

// joinToolCallsLocked sets the ToolCall of each tool_call item of a v2
// state_update that just arrived, from the session's folds. u is not
// shared yet. s.mu is held.
func (s *Session) joinToolCallsLocked(u *StateUpdate) {
	for i := range u.Background {
		if b := &u.Background[i]; b.ToolCallID != "" {
			b.ToolCall = s.toolCallLocked(b.ToolCallID)
		}
	}
}

// joinSessionLevel returns u with its terminal and subagent items joined to
// st's terminals and child sessions; u itself when it lists none.
func joinSessionLevel(st *SessionState, u *StateUpdate) *StateUpdate {
	var bg []BackgroundWork
	for i, b := range u.Background {
		if b.TerminalID == "" && b.SessionID == "" {
			continue
		}
		if bg == nil {
			bg = append([]BackgroundWork(nil), u.Background...)
		}
		bg[i].Terminal, bg[i].Subagent = findTerminal(st, b.TerminalID), findSubagent(st, b.SessionID)
	}
	if bg == nil {
		return u
	}
	a := *u
	a.Background = bg
	return &a
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
func refreshBackground(st *SessionState, match func(*BackgroundWork) bool, set func(*BackgroundWork)) {
	a := st.Activity
	if a == nil || len(a.Background) == 0 {
		return
	}
	var bg []BackgroundWork
	for i := range a.Background {
		if !match(&a.Background[i]) {
			continue
		}
		if bg == nil {
			bg = append([]BackgroundWork(nil), a.Background...)
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
	refreshBackground(st, func(b *BackgroundWork) bool { return b.TerminalID == id },
		func(b *BackgroundWork) { b.Terminal = findTerminal(st, id) })
}

func refreshSubagent(st *SessionState, id string) {
	refreshBackground(st, func(b *BackgroundWork) bool { return b.SessionID == id },
		func(b *BackgroundWork) { b.Subagent = findSubagent(st, id) })
}

// refreshToolCall puts tc, a tool call as it now stands, into the
// background items that name it, and reports whether one did.
func refreshToolCall(st *SessionState, tc *ToolCallState) bool {
	hit := false
	refreshBackground(st, func(b *BackgroundWork) bool { return b.ToolCallID == tc.ToolCallID },
		func(b *BackgroundWork) { b.ToolCall, hit = tc, true })
	return hit
}

// listsToolCall reports whether the latest state_update lists the tool
// call id.
func listsToolCall(st *SessionState, id string) bool {
	if st.Activity == nil {
		return false
	}
	for _, b := range st.Activity.Background {
		if b.ToolCallID == id {
			return true
		}
	}
	return false
}

// toolCallID is the tool call a v2 update changes, "" for other kinds.
func toolCallID(u Update) string {
	switch u := u.(type) {
	case *ToolCall:
		return u.ToolCallID
	case *ToolCallUpdate:
		return u.ToolCallID
	case *ToolCallContentChunk:
		return u.ToolCallID
	}
	return ""
}
