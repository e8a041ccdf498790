package acp

import (
	"slices"

	"github.com/acpclient/acp/schema"
)

// The client's side of v2's updates: what it keeps of them beyond the
// turn (agent-owned terminals, bounded), the bound on a state_update's
// background list, and how an upsert patches what the session knows. The
// update kinds themselves, and their decoding, are in updates_v2.go.

// Bounds of SessionState.Terminals, which outlive turns (a background
// terminal streams for as long as it runs), so the turn budget alone does
// not bound them. Both are fixed: SessionFold applies them too.
const (
	// AgentTerminalOutputMax: an agent-owned terminal's Output keeps the
	// last AgentTerminalOutputMax bytes; it is cut to them at the front
	// whenever it passes twice that (amortized O(1) per byte), so at most
	// 2 × AgentTerminalOutputMax bytes are kept per terminal.
	AgentTerminalOutputMax = 1 << 20
	// AgentTerminalsMax: at most this many agent-owned terminals are kept
	// per session; a new one past it drops the oldest.
	AgentTerminalsMax = 256
	// BackgroundWorkMax: a state_update keeps at most this many items of
	// its background list (the first ones; the rest are dropped with a
	// limit_exceeded diagnostic). The list is the agent's count: each
	// change to a listed tool call, terminal or child copies the list
	// (background_v2.go), so an unbounded one would make every later
	// update cost what the agent chose.
	BackgroundWorkMax = 256
)

// capBackground cuts u's background list (also the one inside a
// subagent_update's state) to BackgroundWorkMax and reports how many items
// were dropped.
func capBackground(u schema.Update) int {
	var st *schema.StateUpdate
	switch u := u.(type) {
	case *schema.StateUpdate:
		st = u
	case *schema.SubagentUpdate:
		st = u.State.Value
	}
	if st == nil || len(st.Background) <= BackgroundWorkMax {
		return 0
	}
	n := len(st.Background) - BackgroundWorkMax
	st.Background = st.Background[:BackgroundWorkMax:BackgroundWorkMax]
	return n
}

// AgentTerminal is an agent-owned terminal of a v2 agent, as its
// terminal_update and terminal_output_chunk updates left it: display only,
// the client runs nothing. Output is the bytes reported so far (a
// terminal_update's output replaces it), cut at the front as
// AgentTerminalOutputMax says, Dropped the bytes cut; Exit is set once it
// exited. Unstable: ACP v2 is in Preview; may change.
type AgentTerminal struct {
	TerminalID string                    `json:"terminalId"`
	Command    string                    `json:"command,omitempty"`
	Cwd        string                    `json:"cwd,omitempty"`
	Output     []byte                    `json:"output,omitempty"`
	Exit       *schema.AgentTerminalExit `json:"exit,omitempty"`
	// Cancellable: the agent advertised capabilities.cancel, so
	// Session.CancelTerminal may stop it.
	Cancellable bool `json:"cancellable,omitempty"`
	// Dropped counts the output bytes cut from the front of Output.
	Dropped int64 `json:"dropped,omitempty"`
}

// boundOutput cuts t.Output to its last AgentTerminalOutputMax bytes once
// it passes twice that, into a fresh array (snapshots share the old one).
func (t *AgentTerminal) boundOutput() {
	if len(t.Output) <= 2*AgentTerminalOutputMax {
		return
	}
	cut := len(t.Output) - AgentTerminalOutputMax
	t.Dropped += int64(cut)
	t.Output = append(make([]byte, 0, 2*AgentTerminalOutputMax), t.Output[cut:]...)
}

// upsertLocked is v2's rule for a tool_call_update of an id the fold it
// lands in has not seen: it creates the tool call, starting at the
// defaults — or at what another fold of the session holds of it (a
// background tool call reporting after its turn ended) — so it is a
// *ToolCall on the log (announced, unlike v1's update of an unknown id)
// and TurnFold replays it as such. A tool_call_content_chunk of such an
// id likewise becomes the *ToolCall with the chunk appended. s.mu is held.
func (s *Session) upsertLocked(u schema.Update) schema.Update {
	f := &s.history
	if s.turn != nil {
		f = &s.turn.fold
	}
	if ch, ok := u.(*schema.ToolCallContentChunk); ok {
		if _, known := f.tools.get(ch.ToolCallID); known {
			return u
		}
		base := s.toolCallLocked(ch.ToolCallID)
		if base == nil {
			return u // appendContent starts it at the defaults
		}
		return &schema.ToolCall{ToolCallID: base.ToolCallID, Title: base.Title, Name: base.Name, Kind: base.Kind, Status: base.Status,
			Content: append(slices.Clip(base.Content), ch.Content), Locations: base.Locations, RawInput: base.RawInput,
			RawOutput: base.RawOutput, Meta: base.Meta, Cancellable: base.Cancellable}
	}
	tcu, ok := u.(*schema.ToolCallUpdate)
	if !ok {
		return u
	}
	if _, known := f.tools.get(tcu.ToolCallID); known {
		return u
	}
	if base := s.toolCallLocked(tcu.ToolCallID); base != nil {
		// Seen in another fold: background work reports after its turn
		// ended, so the update patches what the session knows of it, not
		// the defaults (the upsert rule is for ids the client has not
		// seen).
		var scratch toolTable
		prev := *base
		scratch.put(&prev)
		m := scratch.update(tcu)
		return &schema.ToolCall{ToolCallID: m.ToolCallID, Title: m.Title, Name: m.Name, Kind: m.Kind, Status: m.Status,
			Content: m.Content, Locations: m.Locations, RawInput: m.RawInput, RawOutput: m.RawOutput, Meta: m.Meta,
			Cancellable: m.Cancellable}
	}
	tc := &schema.ToolCall{ToolCallID: tcu.ToolCallID, Content: tcu.Content, Locations: tcu.Locations,
		RawInput: tcu.RawInput, RawOutput: tcu.RawOutput, Meta: tcu.Meta, Cancellable: tcu.Cancellable != nil && *tcu.Cancellable}
	if tcu.Title != nil {
		tc.Title = *tcu.Title
	}
	if tcu.Name != nil {
		tc.Name = *tcu.Name
	}
	if tcu.Kind != nil {
		tc.Kind = *tcu.Kind
	}
	if tcu.Status != nil {
		tc.Status = *tcu.Status
	}
	return tc
}
