package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
)

// ToolCallState is one tool call as folded from the agent's tool_call and
// tool_call_update notifications (and the toolCall of permission requests).
//
// Merge rules (spec: tool-calls.mdx, "Updating"): tool_call creates the entry
// or replaces it whole; tool_call_update changes only the fields it carries
// (absent or null means unchanged), and content and locations, when present,
// replace the whole list. An update for an id never announced creates an
// entry with Unannounced set instead of failing.
type ToolCallState struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title"`
	// Name is the tool's programmatic name, when the agent sent one
	// (unstable: follows schema.unstable.json).
	Name      string                    `json:"name,omitempty"`
	Kind      schema.ToolKind           `json:"kind,omitempty"`
	Status    schema.ToolCallStatus     `json:"status,omitempty"`
	Content   []schema.ToolCallContent  `json:"content,omitempty"`
	Locations []schema.ToolCallLocation `json:"locations,omitempty"`
	RawInput  json.RawMessage           `json:"rawInput,omitempty"`
	RawOutput json.RawMessage           `json:"rawOutput,omitempty"`
	// Meta is the _meta of the latest tool_call or tool_call_update that
	// carried one: like every other field, a _meta sent replaces the one
	// held (codex-acp 2.x sends a command's output and exit status only
	// there, as terminal_output_delta and terminal_exit).
	Meta json.RawMessage `json:"_meta,omitempty"`
	// AgentTerminal is the command the agent ran in a terminal of its own,
	// as it reported it in _meta (codex-acp 2.x): its output, accumulated,
	// and exit status. Nil when the agent reported none.
	AgentTerminal *ToolCallTerminal `json:"agentTerminal,omitempty"`
	// Cancellable: a v2 agent currently advertises capabilities.cancel on
	// the tool call, so Session.CancelToolCall may cancel it. Unstable:
	// ACP v2 is in Preview; may change.
	Cancellable bool `json:"cancellable,omitempty"`

	// Unannounced: the first thing seen for this id was an update, not a
	// tool_call.
	Unannounced bool `json:"unannounced,omitempty"`
	// Order is the tool call's place among everything its fold started
	// (see [Message].Order).
	Order int `json:"order"`
}

// Finished reports whether the tool call reached a final status (completed,
// failed, or cancelled locally).
func (tc *ToolCallState) Finished() bool {
	switch tc.Status {
	case schema.ToolCallStatusCompleted, schema.ToolCallStatusFailed, schema.ToolCallStatusCancelled:
		return true
	}
	return false
}

// toolTable keeps tool calls in order of first appearance. Entries are
// replaced, never mutated in place, once a snapshot may hold them: a
// snapshot copies the slice of pointers' targets by value.
type toolTable struct {
	calls []*ToolCallState
	index map[string]int
	// outs holds the output buffer of each tool call with an
	// AgentTerminal (see foldAgentTerminal).
	outs map[string][]byte
	// items counts what the fold has started, messages included (the
	// messages take their Order from here too): the next item's Order.
	items int
	// last is the state update made last, with room for the log entry
	// of its event (see toolSnap); the record stage takes it (takeEntry).
	last *toolSnap
}

// toolSnap is a merged ToolCallState and the log entry of the event that
// made it, allocated as one: a turn's tool_call_update costs one
// allocation fewer.
type toolSnap struct {
	st ToolCallState
	e  tcEntry
}

// takeEntry returns the room for the log entry of the event of u that
// made tc, filled, when tc is the state update made last; nil otherwise
// (the caller then allocates one).
func (tt *toolTable) takeEntry(u schema.Update, tc *ToolCallState) *tcEntry {
	ts := tt.last
	tt.last = nil
	if ts == nil || &ts.st != tc {
		return nil
	}
	ts.e = tcEntry{u, tc}
	return &ts.e
}

// nextOrder returns the Order of a new item of the fold.
func (tt *toolTable) nextOrder() int {
	tt.items++
	return tt.items - 1
}

func (tt *toolTable) get(id string) (*ToolCallState, bool) {
	if i, ok := tt.index[id]; ok {
		return tt.calls[i], true
	}
	return nil, false
}

func (tt *toolTable) put(tc *ToolCallState) {
	if tt.index == nil {
		tt.index = map[string]int{}
	}
	if i, ok := tt.index[tc.ToolCallID]; ok {
		tc.Order = tt.calls[i].Order
		tt.calls[i] = tc
		return
	}
	tc.Order = tt.nextOrder()
	tt.index[tc.ToolCallID] = len(tt.calls)
	tt.calls = append(tt.calls, tc)
}

// create applies a tool_call: a new entry, or a whole replacement. It
// returns the entry as stored, never to be mutated.
func (tt *toolTable) create(u *schema.ToolCall) *ToolCallState {
	status := u.Status
	if status == "" {
		status = schema.ToolCallStatusPending
	}
	kind := u.Kind
	if kind == "" {
		kind = schema.ToolKindOther
	}
	tc := &ToolCallState{
		ToolCallID:  u.ToolCallID,
		Title:       u.Title,
		Name:        u.Name,
		Kind:        kind,
		Status:      status,
		Content:     u.Content,
		Locations:   u.Locations,
		RawInput:    u.RawInput,
		RawOutput:   u.RawOutput,
		Meta:        u.Meta,
		Cancellable: u.Cancellable,
	}
	tt.foldAgentTerminal(tc, u.Meta, true)
	tt.put(tc)
	return tc
}

// update applies a tool_call_update (or a permission request's toolCall, or
// a local cancelled mark) and returns the entry as stored. Once a tool call
// is cancelled, only a final status (completed, failed) replaces that.
func (tt *toolTable) update(u *schema.ToolCallUpdate) *ToolCallState {
	ts := &toolSnap{}
	tc := &ts.st
	at, known := tt.index[u.ToolCallID] // one lookup for the read and the store
	if known {
		*tc = *tt.calls[at]
	} else {
		*tc = ToolCallState{ToolCallID: u.ToolCallID, Kind: schema.ToolKindOther, Status: schema.ToolCallStatusPending, Unannounced: true}
	}
	if u.Title != nil {
		tc.Title = *u.Title
	}
	if u.Name != nil {
		tc.Name = *u.Name
	}
	if u.Kind != nil {
		tc.Kind = *u.Kind
	}
	if u.Status != nil && !cancelMarkStands(tc.Status, *u.Status) {
		tc.Status = *u.Status
	}
	if u.Content != nil {
		tc.Content = u.Content
	}
	if u.Locations != nil {
		tc.Locations = u.Locations
	}
	if u.RawInput != nil {
		tc.RawInput = u.RawInput
	}
	if u.RawOutput != nil {
		tc.RawOutput = u.RawOutput
	}
	if u.Meta != nil {
		tc.Meta = u.Meta
	}
	if u.Cancellable != nil {
		tc.Cancellable = *u.Cancellable
	}
	tt.foldAgentTerminal(tc, u.Meta, false)
	if known {
		tc.Order = tt.calls[at].Order
		tt.calls[at] = tc
	} else {
		tt.put(tc)
	}
	tt.last = ts
	return tc
}

// The cancellation policy for tool calls (spec: prompt-turn.mdx,
// Cancellation), in one place. ACP v1 has no cancelled status on the wire,
// so the client keeps a local one:
//   - when a turn is cancelled, every tool call of it that has not finished
//     is marked cancelled;
//   - after that, a tool call announced, reopened or patched (by a
//     permission request) to an unfinished status is marked at once: it will
//     not run either;
//   - the mark stands until the agent reports a final status of its own
//     (completed or failed).
// Each mark is applied as a local update, so the change feed carries it.

// toMark returns the ids of the tool calls a cancelled turn must mark
// cancelled: every unfinished one when changed is nil (at the cancel), else
// changed itself if it is unfinished (after any later change to it, O(1)).
// A turn that is not cancelled marks nothing.
func (tt *toolTable) toMark(cancelled bool, changed *ToolCallState) []string {
	if !cancelled {
		return nil
	}
	if changed != nil {
		if changed.Finished() {
			return nil
		}
		return []string{changed.ToolCallID}
	}
	var ids []string
	for _, tc := range tt.calls {
		if !tc.Finished() {
			ids = append(ids, tc.ToolCallID)
		}
	}
	return ids
}

// cancelMarkStands reports whether a local cancelled mark survives a status
// the agent sends: only a final status replaces it.
func cancelMarkStands(current, sent schema.ToolCallStatus) bool {
	return current == schema.ToolCallStatusCancelled &&
		sent != schema.ToolCallStatusCompleted && sent != schema.ToolCallStatusFailed
}

func (tt *toolTable) snapshot() []ToolCallState {
	if len(tt.calls) == 0 {
		return nil
	}
	out := make([]ToolCallState, len(tt.calls))
	for i, tc := range tt.calls {
		out[i] = *tc
	}
	return out
}

// appendContent folds v2's tool_call_content_chunk: c is appended to the
// tool call's content; an id not seen before starts a tool call at the
// defaults (v2's upsert rule).
func (tt *toolTable) appendContent(id string, c schema.ToolCallContent) *ToolCallState {
	var tc ToolCallState
	if old, ok := tt.get(id); ok {
		tc = *old
	} else {
		tc = ToolCallState{ToolCallID: id, Kind: schema.ToolKindOther, Status: schema.ToolCallStatusPending}
	}
	// A fresh array: snapshots taken before share the old one.
	content := make([]schema.ToolCallContent, len(tc.Content), len(tc.Content)+1)
	copy(content, tc.Content)
	tc.Content = append(content, c)
	tt.put(&tc)
	return &tc
}
