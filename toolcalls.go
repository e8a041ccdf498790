package acp

import "encoding/json"

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
	Name      string             `json:"name,omitempty"`
	Kind      ToolKind           `json:"kind,omitempty"`
	Status    ToolCallStatus     `json:"status,omitempty"`
	Content   []ToolCallContent  `json:"content,omitempty"`
	Locations []ToolCallLocation `json:"locations,omitempty"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`

	// Unannounced: the first thing seen for this id was an update, not a
	// tool_call.
	Unannounced bool `json:"unannounced,omitempty"`
}

// Finished reports whether the tool call reached a final status (completed,
// failed, or cancelled locally).
func (tc *ToolCallState) Finished() bool {
	switch tc.Status {
	case ToolCallStatusCompleted, ToolCallStatusFailed, ToolCallStatusCancelled:
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
		tt.calls[i] = tc
		return
	}
	tt.index[tc.ToolCallID] = len(tt.calls)
	tt.calls = append(tt.calls, tc)
}

// create applies a tool_call: a new entry, or a whole replacement. It
// returns the entry as stored, never to be mutated.
func (tt *toolTable) create(u *ToolCall) *ToolCallState {
	status := u.Status
	if status == "" {
		status = ToolCallStatusPending
	}
	kind := u.Kind
	if kind == "" {
		kind = ToolKindOther
	}
	tc := &ToolCallState{
		ToolCallID: u.ToolCallID,
		Title:      u.Title,
		Name:       u.Name,
		Kind:       kind,
		Status:     status,
		Content:    u.Content,
		Locations:  u.Locations,
		RawInput:   u.RawInput,
		RawOutput:  u.RawOutput,
		Meta:       u.Meta,
	}
	tt.put(tc)
	return tc
}

// update applies a tool_call_update (or a permission request's toolCall, or
// a local cancelled mark) and returns the entry as stored. Once a tool call
// is cancelled, only a final status (completed, failed) replaces that.
func (tt *toolTable) update(u *ToolCallUpdate) *ToolCallState {
	var tc ToolCallState
	if old, ok := tt.get(u.ToolCallID); ok {
		tc = *old
	} else {
		tc = ToolCallState{ToolCallID: u.ToolCallID, Kind: ToolKindOther, Status: ToolCallStatusPending, Unannounced: true}
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
	if u.Status != nil {
		s := *u.Status
		keepCancelled := tc.Status == ToolCallStatusCancelled &&
			s != ToolCallStatusCompleted && s != ToolCallStatusFailed
		if !keepCancelled {
			tc.Status = s
		}
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
	tt.put(&tc)
	return &tc
}

// unfinished returns the ids of the tool calls that have not finished, in
// order of first appearance.
func (tt *toolTable) unfinished() []string {
	var ids []string
	for _, tc := range tt.calls {
		if !tc.Finished() {
			ids = append(ids, tc.ToolCallID)
		}
	}
	return ids
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
