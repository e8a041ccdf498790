package acp

import (
	"encoding/json"
	"testing"
)

// TestToolCallUpdateMeta: a tool_call_update's _meta replaces the one the
// tool call holds, like its other fields, and an update without one keeps
// it. codex-acp 2.x sends a command's output and exit status only there
// (Zed's terminal_output extension): before, the fold kept the tool_call's
// _meta and the output reached no state.
func TestToolCallUpdateMeta(t *testing.T) {
	c := &Client{}
	c.opts.Limits = c.opts.Limits.withDefaults()
	for _, inTurn := range []bool{true, false} {
		s := newSession(c, "s", "/w", nil)
		var turn *Turn
		if inTurn {
			turn = &Turn{s: s, done: make(chan struct{}), call: promptCall{sent: make(chan error, 1)}}
			s.turn = turn
		}
		meta := func() string {
			var tcs []ToolCallState
			if turn != nil {
				tcs = turn.State().ToolCalls
			} else {
				tcs = s.State().History.ToolCalls
			}
			if len(tcs) != 1 {
				t.Fatalf("in a turn %v: %d tool calls, want 1", inTurn, len(tcs))
			}
			return string(tcs[0].Meta)
		}
		for _, step := range []struct{ update, want string }{
			{`{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls","kind":"execute","status":"in_progress",` +
				`"content":[{"type":"terminal","terminalId":"c"}],"_meta":{"terminal_info":{"terminal_id":"c"}}}`,
				`{"terminal_info":{"terminal_id":"c"}}`},
			{`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed",` +
				`"_meta":{"terminal_output_delta":{"data":"out\n","terminal_id":"c"},"terminal_exit":{"exit_code":0,"terminal_id":"c"}}}`,
				`{"terminal_output_delta":{"data":"out\n","terminal_id":"c"},"terminal_exit":{"exit_code":0,"terminal_id":"c"}}`},
			{`{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"ls -l"}`,
				`{"terminal_output_delta":{"data":"out\n","terminal_id":"c"},"terminal_exit":{"exit_code":0,"terminal_id":"c"}}`},
		} {
			u, err := testDecodeUpdate([]byte(step.update))
			if err != nil {
				t.Fatal(err)
			}
			s.apply(u, nil, 0)
			if got := meta(); compactJSON(t, got) != compactJSON(t, step.want) {
				t.Errorf("in a turn %v: after %s\n_meta %s, want %s", inTurn, step.update, got, step.want)
			}
		}
	}
}

// compactJSON re-encodes s, so that key order and spacing do not count.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
