package acp

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Malformed v2 updates get a bad_update diagnostic each and lose nothing
// else: the turn goes on and ends at its idle.
func TestHostileV2MalformedUpdates(t *testing.T) {
	diags := make(chan Diagnostic, 64)
	c, a, _, turn, _ := startTurnV2(t, &ClientOptions{OnDiagnostic: func(d Diagnostic) { diags <- d }})
	a.update("s1", state("running"))
	for _, u := range []map[string]any{
		{"sessionUpdate": "state_update"}, // no state
		{"sessionUpdate": "state_update", "state": 7},
		{"sessionUpdate": "agent_message", "content": []any{}},                       // no messageId
		{"sessionUpdate": "agent_thought", "messageId": 3},                           // not a string
		{"sessionUpdate": "tool_call_update", "toolCallId": 5},                       // not a string
		{"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1"},             // no content
		{"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "%%%"}, // not base64
		{"sessionUpdate": "terminal_update"},                                         // no terminalId
	} {
		a.update("s1", u)
	}
	a.update("s1", chunk("still here"))
	a.update("s1", state("idle", "stopReason", "end_turn"))
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	if st := turn.State(); len(st.Messages) != 1 || st.Messages[0].Text != "still here" {
		t.Fatalf("messages %+v", st.Messages)
	}
	c.Close()
	close(diags)
	n := 0
	for d := range diags {
		if d.Kind == DiagBadUpdate {
			n++
		}
	}
	if n != 8 {
		t.Errorf("%d bad_update diagnostics, want 8", n)
	}
}

// An agent-owned terminal's output and the number of terminals are
// bounded (AgentTerminalOutputMax, AgentTerminalsMax): a background
// terminal that never stops, or endless new terminals, keep a bounded
// state, and SessionFold applies the same bounds.
func TestHostileV2AgentTerminalsBounded(t *testing.T) {
	_, a, s, turn, _ := startTurnV2(t, nil)
	a.update("s1", state("running"))
	a.update("s1", state("idle", "stopReason", "end_turn"))
	turn.Wait()
	chunk := strings.Repeat("x", 64<<10)
	data := base64.StdEncoding.EncodeToString([]byte(chunk))
	const chunks = 3*AgentTerminalOutputMax/(64<<10) + 1
	for range chunks {
		a.update("s1", map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": "bg", "data": data})
	}
	for i := range AgentTerminalsMax + 10 {
		a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": fmt.Sprint("t", i), "command": "x"})
	}
	syncRaw(t, a, 900)
	st := s.State()
	if len(st.Terminals) != AgentTerminalsMax || st.Terminals[0].TerminalID != "t10" {
		t.Fatalf("%d terminals, first %q", len(st.Terminals), st.Terminals[0].TerminalID)
	}
	// The output bound, on the fold itself (SessionFold runs the same
	// foldSessionUpdate): the last AgentTerminalOutputMax bytes at least,
	// never more than twice that, the rest counted as dropped.
	var fst SessionState
	total := 0
	for i := range 3 * AgentTerminalOutputMax / len(chunk) {
		b := []byte(strings.Repeat(string(rune('a'+i%26)), len(chunk)))
		foldSessionUpdate(&fst, &schema.TerminalOutputChunk{TerminalID: "bg", Data: b})
		total += len(b)
		term := fst.Terminals[0]
		if len(term.Output) > 2*AgentTerminalOutputMax || int64(len(term.Output))+term.Dropped != int64(total) {
			t.Fatalf("after %d bytes: output %d, dropped %d", total, len(term.Output), term.Dropped)
		}
		if last := term.Output[len(term.Output)-1]; last != b[0] {
			t.Fatalf("the output does not end with the last chunk")
		}
	}
	if fst.Terminals[0].Dropped == 0 {
		t.Fatal("nothing was dropped")
	}
}

// A state_update whose background list is as long as the agent likes
// keeps BackgroundWorkMax items (the first ones) and says so in a
// limit_exceeded diagnostic: the list is copied at every change to an item
// it names, so its length must not be the agent's choice. The items kept
// stay joined, and SessionFold reproduces the capped list.
func TestHostileV2BackgroundListBounded(t *testing.T) {
	diags := make(chan Diagnostic, 64)
	_, a, s, turn, p := startTurnV2(t, &ClientOptions{OnDiagnostic: func(d Diagnostic) { diags <- d }})
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "bg", "command": "make"})
	const n = 20 * BackgroundWorkMax
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"type": "terminal", "terminalId": "bg"}
	}
	a.update("s1", state("idle", "stopReason", "end_turn", "background", items))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	// Each output chunk of the listed terminal refreshes the list: with
	// the cap it copies BackgroundWorkMax items, not n.
	for range 100 {
		a.update("s1", map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": "bg", "data": "eA=="})
	}
	syncRaw(t, a, 900)
	st := s.State()
	if got := len(st.Activity.Background); got != BackgroundWorkMax {
		t.Fatalf("kept %d background items, want %d", got, BackgroundWorkMax)
	}
	if term := st.Activity.Background[BackgroundWorkMax-1].Terminal; term == nil || len(term.Output) != 100 {
		t.Errorf("the last kept item's terminal: %+v", term)
	}
	// Diagnostics come on the callback goroutine: wait for it, bounded.
	deadline := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case d := <-diags:
			found = d.Kind == DiagLimitExceeded && strings.Contains(d.Message, "BackgroundWorkMax")
		case <-deadline:
			t.Fatal("no limit_exceeded diagnostic for the background list")
		}
	}
	if diff := cmp.Diff(st, sessionFoldOf(t, s), ignoreOutside); diff != "" {
		t.Errorf("SessionFold (-state +fold):\n%s", diff)
	}
}
