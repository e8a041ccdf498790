package acp

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// ToolCallTerminal is a command the agent ran itself, in a terminal of its
// own, as it reports it in the _meta of the tool call's tool_call and
// tool_call_update notifications. codex-acp 2.x runs every command this
// way, also when the client offers a terminal (Zed's convention):
//
//   - _meta.terminal_info {terminal_id, cwd}: the command started;
//   - _meta.terminal_output_delta {terminal_id, data}: more output;
//   - _meta.terminal_exit {terminal_id, exit_code, signal}: it ended.
//
// The tool call's content then holds a [schema.TerminalContent] with that id,
// which the client never created with terminal/create: it is kept as it
// is (it names the agent's terminal, for display only), and its output is
// here, not behind terminal/output.
//
// The fold appends each delta to Output; a tool_call for the same id
// starts afresh. What Output retains counts against Limits.MaxTurnBytes
// (outside turns, against the session's budget) like the agent's text: a
// command that prints without end makes the turn cancel at the limit. An
// item of the convention that does not decode (a data that is not a
// string) is ignored; the update's other fields still apply.
//
// This is ACP v1's form, by convention. ACP v2 reports agent-owned
// terminals in the protocol itself (terminal_update, terminal_output_chunk),
// per session: [SessionState].Terminals, of type [AgentTerminal].
type ToolCallTerminal struct {
	TerminalID string `json:"terminalId"`
	Cwd        string `json:"cwd,omitempty"`
	// Output is the command's output so far, as the agent sent it (it
	// comes from a program: sanitize it before showing it).
	Output string `json:"output,omitempty"`
	// Exited is set once terminal_exit came; ExitCode and Signal are what
	// it said, each nil when absent or null.
	Exited   bool    `json:"exited,omitempty"`
	ExitCode *int64  `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
}

// agentTerminalMeta is the part of a tool call's _meta the convention uses.
type agentTerminalMeta struct {
	Info *struct {
		TerminalID string `json:"terminal_id"`
		Cwd        string `json:"cwd"`
	} `json:"terminal_info"`
	Delta *struct {
		TerminalID string `json:"terminal_id"`
		Data       string `json:"data"`
	} `json:"terminal_output_delta"`
	Exit *struct {
		TerminalID string  `json:"terminal_id"`
		ExitCode   *int64  `json:"exit_code"`
		Signal     *string `json:"signal"`
	} `json:"terminal_exit"`
}

// decodeAgentTerminalMeta reads the convention from a tool call's _meta;
// ok is false when it holds none of it. Each of the three items decodes on
// its own, so a bad one loses only itself.
//
// The check for the common case (no _meta, or none of the convention in
// it) stays apart from the decoding: there the result's fields escape to
// encoding/json, so the compiler puts the whole result on the heap at
// entry, two allocations for every tool call update of every turn, the
// ones that carry nothing of it too.
func decodeAgentTerminalMeta(meta json.RawMessage) (agentTerminalMeta, bool) {
	if len(meta) == 0 || !bytes.Contains(meta, []byte(`"terminal_`)) {
		return agentTerminalMeta{}, false // the common case, without decoding
	}
	return decodeAgentTerminalItems(meta)
}

// decodeAgentTerminalItems is decodeAgentTerminalMeta's decoding, for a
// _meta that names the convention.
func decodeAgentTerminalItems(meta json.RawMessage) (m agentTerminalMeta, ok bool) {
	var raw struct {
		Info  json.RawMessage `json:"terminal_info"`
		Delta json.RawMessage `json:"terminal_output_delta"`
		Exit  json.RawMessage `json:"terminal_exit"`
	}
	if json.Unmarshal(meta, &raw) != nil {
		return m, false
	}
	if raw.Info != nil && json.Unmarshal(raw.Info, &m.Info) != nil {
		m.Info = nil
	}
	if raw.Delta != nil && json.Unmarshal(raw.Delta, &m.Delta) != nil {
		m.Delta = nil
	}
	if raw.Exit != nil && json.Unmarshal(raw.Exit, &m.Exit) != nil {
		m.Exit = nil
	}
	return m, m.Info != nil || m.Delta != nil || m.Exit != nil
}

// agentTerminalCost is what folding meta's convention keeps beyond the
// tool call's state: a new AgentTerminal, and the delta in the output
// buffer, which grows by doubling (so up to twice the data).
func agentTerminalCost(meta json.RawMessage) int64 {
	m, ok := decodeAgentTerminalMeta(meta)
	if !ok {
		return 0
	}
	n := allocSize(int64(unsafe.Sizeof(ToolCallTerminal{})))
	if m.Info != nil {
		n += allocSize(int64(len(m.Info.TerminalID) + len(m.Info.Cwd)))
	}
	if m.Delta != nil {
		n += 2 * int64(len(m.Delta.Data))
	}
	return n
}

// foldAgentTerminal applies meta's convention to tc (whose AgentTerminal,
// if any, is the one held before this update; fresh: a tool_call, which
// starts afresh). tc.AgentTerminal is replaced, never mutated: earlier
// states share it.
//
// Output is a string over tt's buffer for the tool call, which only ever
// grows at its end: every earlier state's Output is a prefix of it that
// no append writes again, so a delta costs its own length, not a copy of
// all the output before it (a turn keeps each event's state).
func (tt *toolTable) foldAgentTerminal(tc *ToolCallState, meta json.RawMessage, fresh bool) {
	m, ok := decodeAgentTerminalMeta(meta)
	if fresh {
		tc.AgentTerminal = nil
		delete(tt.outs, tc.ToolCallID)
	}
	if !ok {
		return
	}
	var at ToolCallTerminal
	if tc.AgentTerminal != nil {
		at = *tc.AgentTerminal
	}
	if m.Info != nil {
		at.TerminalID, at.Cwd = m.Info.TerminalID, m.Info.Cwd
	}
	if m.Delta != nil {
		if at.TerminalID == "" {
			at.TerminalID = m.Delta.TerminalID
		}
		at.Output = tt.appendOutput(tc.ToolCallID, at.Output, m.Delta.Data)
	}
	if m.Exit != nil {
		if at.TerminalID == "" {
			at.TerminalID = m.Exit.TerminalID
		}
		at.Exited, at.ExitCode, at.Signal = true, m.Exit.ExitCode, m.Exit.Signal
	}
	tc.AgentTerminal = &at
}

// appendOutput returns cur+data, appending to the tool call's buffer when
// cur is its whole content, else (a state restored from a snapshot, a
// buffer another state grew past cur) to a copy of cur.
func (tt *toolTable) appendOutput(id, cur, data string) string {
	if data == "" {
		return cur
	}
	b := tt.outs[id]
	if len(b) != len(cur) || (len(b) > 0 && unsafe.SliceData(b) != unsafe.StringData(cur)) {
		b = append(make([]byte, 0, 2*(len(cur)+len(data))), cur...)
	}
	b = append(b, data...)
	if tt.outs == nil {
		tt.outs = map[string][]byte{}
	}
	tt.outs[id] = b
	// The bytes b[:len(b)] are never written again: later appends write
	// past them, or into a new array.
	return unsafe.String(unsafe.SliceData(b), len(b))
}
