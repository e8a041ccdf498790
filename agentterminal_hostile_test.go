package acp

import (
	"context"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// A command the agent reports running without end (codex-acp's
// terminal_output_delta in _meta, accumulated in
// ToolCallState.AgentTerminal) cannot grow a turn past about twice
// Limits.MaxTurnBytes: its output is charged like the agent's text, the
// turn is cancelled when it crosses the limit, and the rest is dropped.
// The turn's feed still folds to its state, output included.
func TestMaxTurnBytesAgentTerminalOutput(t *testing.T) {
	const budget = 16 << 10
	var diags limitDiags
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: budget}, OnDiagnostic: diags.on}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	a.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "c", "title": "yes", "kind": "execute", "status": "in_progress",
		"content": []any{map[string]any{"type": "terminal", "terminalId": "c"}},
		"_meta":   map[string]any{"terminal_info": map[string]any{"terminal_id": "c", "cwd": "/w"}}})
	data := strings.Repeat("y\n", 500)
	const sent = 100 // 100 KB of output: 6 times the budget
	for range sent {
		a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c",
			"_meta": map[string]any{"terminal_output_delta": map[string]any{"terminal_id": "c", "data": data}}})
	}
	expectCall(a, "session/cancel")
	a.reply(prompt, map[string]any{"stopReason": "cancelled"})
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonCancelled {
		t.Fatalf("Wait: %v, %v; want cancelled", stop, err)
	}
	st := turn.State()
	if len(st.ToolCalls) != 1 || st.ToolCalls[0].AgentTerminal == nil {
		t.Fatalf("tool calls %+v", st.ToolCalls)
	}
	kept := len(st.ToolCalls[0].AgentTerminal.Output)
	// Each byte of output is held three times: in the update's _meta, and
	// up to twice in the output buffer, which grows by doubling. What the
	// turn keeps stops at about 2×budget, so the output at a third of it.
	if kept == 0 || kept >= sent*len(data) || 3*kept > 2*budget {
		t.Errorf("the turn kept %d bytes of output of %d sent; want some, at most 2×%d/3", kept, sent*len(data), budget)
	}
	t.Logf("kept %d bytes of output of %d sent, budget %d", kept, sent*len(data), budget)
	var tf TurnFold
	for ev := range turn.Events(context.Background(), 0) {
		tf.Apply(ev)
	}
	if d := cmp.Diff(turn.State(), tf.State(), rawCmp); d != "" {
		t.Errorf("the turn's feed folds differently from its state (-state +fold):\n%s", d)
	}
	c.Close()
	if diags.matching("cancelling a turn") != 1 {
		t.Errorf("diagnostics: %q", diags.msgs)
	}
}
