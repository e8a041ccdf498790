package acp

import (
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
	"unsafe"
)

// TestAgentTerminalFold: codex-acp 2.x reports a command it runs in a
// terminal of its own only in _meta (terminal_info, terminal_output_delta,
// terminal_exit). The fold accumulates the deltas into
// ToolCallState.AgentTerminal (before, _meta replacement kept only the
// last delta), earlier states keep their own prefix, a bad item loses only
// itself, and a new tool_call for the id starts afresh.
func TestAgentTerminalFold(t *testing.T) {
	c := &Client{}
	c.opts.Limits = c.opts.Limits.withDefaults()
	s := newSession(c, "s", "/w", nil)
	turn := &Turn{s: s, done: make(chan struct{}), call: promptCall{sent: make(chan error, 1)}}
	s.turn = turn
	apply := func(update string) ToolCallState {
		t.Helper()
		u, err := testDecodeUpdate([]byte(update))
		if err != nil {
			t.Fatal(err)
		}
		s.apply(u, nil, 0)
		tcs := turn.State().ToolCalls
		if len(tcs) != 1 {
			t.Fatalf("%d tool calls, want 1", len(tcs))
		}
		return tcs[0]
	}
	delta := func(data string) string {
		return `{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":{"terminal_output_delta":{"data":"` + data + `","terminal_id":"c"}}}`
	}
	start := `{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls","kind":"execute","status":"in_progress",` +
		`"content":[{"type":"terminal","terminalId":"c"}],"_meta":{"terminal_info":{"cwd":"/w","terminal_id":"c"}}}`

	tc := apply(start)
	if at := tc.AgentTerminal; at == nil || at.TerminalID != "c" || at.Cwd != "/w" || at.Output != "" || at.Exited {
		t.Fatalf("after terminal_info: %+v", at)
	}
	if _, ok := tc.Content[0].(*schema.TerminalContent); !ok {
		t.Errorf("content %T, want the agent's *TerminalContent kept", tc.Content[0])
	}
	first := apply(delta(`a\n`))
	second := apply(delta(`b\n`))
	// A delta whose data is not a string is dropped; the title still applies.
	bad := apply(`{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"ls -l","_meta":{"terminal_output_delta":{"data":7}}}`)
	if bad.Title != "ls -l" || bad.AgentTerminal.Output != "a\nb\n" {
		t.Errorf("after a bad delta: title %q output %q", bad.Title, bad.AgentTerminal.Output)
	}
	end := apply(`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"failed",` +
		`"_meta":{"terminal_output_delta":{"data":"c","terminal_id":"c"},"terminal_exit":{"exit_code":2,"signal":null,"terminal_id":"c"}}}`)
	at := end.AgentTerminal
	if at.Output != "a\nb\nc" || !at.Exited || at.ExitCode == nil || *at.ExitCode != 2 || at.Signal != nil || at.Cwd != "/w" {
		t.Errorf("at the end: %+v", at)
	}
	// The second delta appended in place: the states share the bytes, so
	// a delta does not copy the output before it.
	if unsafe.StringData(first.AgentTerminal.Output) != unsafe.StringData(second.AgentTerminal.Output) {
		t.Error("the second delta copied the output before it")
	}
	if first.AgentTerminal.Output != "a\n" || second.AgentTerminal.Output != "a\nb\n" || first.AgentTerminal.Exited {
		t.Errorf("earlier states changed: %q, %q", first.AgentTerminal.Output, second.AgentTerminal.Output)
	}
	// A tool_call for the id replaces the whole tool call, its output too.
	again := apply(`{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls"}`)
	if again.AgentTerminal != nil {
		t.Errorf("after a new tool_call: %+v", again.AgentTerminal)
	}
	if got := apply(delta(`x`)).AgentTerminal.Output; got != "x" {
		t.Errorf("after a new tool_call and a delta: output %q", got)
	}
	if end.AgentTerminal.Output != "a\nb\nc" {
		t.Errorf("the old state changed: %q", end.AgentTerminal.Output)
	}
}

// TestAgentTerminalAppendAfterRestore: a tool call restored from a state
// (not grown in this table's buffer) appends to a copy of its output.
func TestAgentTerminalAppendAfterRestore(t *testing.T) {
	var tt toolTable
	tt.put(&ToolCallState{ToolCallID: "c", AgentTerminal: &ToolCallTerminal{TerminalID: "c", Output: "old"}})
	tc := tt.update(&schema.ToolCallUpdate{ToolCallID: "c", Meta: []byte(`{"terminal_output_delta":{"data":"+new","terminal_id":"c"}}`)})
	if tc.AgentTerminal.Output != "old+new" {
		t.Errorf("output %q, want old+new", tc.AgentTerminal.Output)
	}
}

// TestAgentTerminalCost: what a delta's output keeps is charged against
// the turn's budget (Limits.MaxTurnBytes), so a command printing without
// end cannot grow a turn past it.
func TestAgentTerminalCost(t *testing.T) {
	data := strings.Repeat("x", 10000)
	u, err := testDecodeUpdate([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":{"terminal_output_delta":{"data":"` + data + `","terminal_id":"c"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var f fold
	plain := f.foldCost(&schema.ToolCallUpdate{ToolCallID: "c"})
	if got := f.foldCost(u); got-plain < int64(2*len(data)) {
		t.Errorf("fold cost of a %d-byte delta: %d beyond a plain update, want at least %d", len(data), got-plain, 2*len(data))
	}
	if got := agentTerminalCost([]byte(`{"other":1}`)); got != 0 {
		t.Errorf("cost of a _meta without the convention: %d", got)
	}
}
