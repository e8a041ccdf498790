package acp

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// sessionFoldOf folds every event of s from the first into a SessionFold.
func sessionFoldOf(t *testing.T, s *Session) SessionState {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var sf SessionFold
	s.mu.Lock()
	last := s.log.seq
	s.mu.Unlock()
	for ev := range s.Events(ctx, 0) {
		sf.Apply(ev)
		if sf.Seq() >= last {
			break
		}
	}
	return sf.State()
}

var ignoreOutside = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Outside" }, cmp.Ignore())

// Rule (schema v2 BackgroundWork: items reference entities the client
// already tracks): SessionState.Activity.Background is joined to the tool
// calls, terminals and child sessions it names, and stays current as they
// change (inside a turn or outside one), without changing an earlier
// snapshot; Cancellable says whether the item can be cancelled; the join
// is never read from the agent; SessionFold reproduces it.
func TestV2BackgroundJoined(t *testing.T) {
	c, a, s, turn, p := startTurnV2(t, nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	can := map[string]any{"cancel": map[string]any{}}
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "watch", "status": "in_progress", "capabilities": can})
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "term1", "command": "make", "capabilities": can})
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "k1", "title": "helper"})
	a.update("s1", state("idle", "stopReason", "end_turn", "background", []any{
		map[string]any{"type": "tool_call", "toolCallId": "c1"},
		map[string]any{"type": "terminal", "terminalId": "term1"},
		map[string]any{"type": "subagent", "sessionId": "k1"},
		map[string]any{"type": "tool_call", "toolCallId": "ghost", "toolCall": map[string]any{"toolCallId": "ghost", "title": "forged", "cancellable": true}},
		map[string]any{"type": "_acme/job", "terminal": map[string]any{"terminalId": "x"}},
	}))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	syncRaw(t, a, 900)
	before := s.State()
	bg := before.Activity.Background
	if len(bg) != 5 {
		t.Fatalf("background %+v", bg)
	}
	if bg[0].ToolCall == nil || bg[0].ToolCall.Title != "watch" || !bg[0].Cancellable() {
		t.Errorf("tool call item %+v", bg[0])
	}
	if bg[1].Terminal == nil || bg[1].Terminal.Command != "make" || !bg[1].Cancellable() {
		t.Errorf("terminal item %+v", bg[1])
	}
	if bg[2].Subagent == nil || bg[2].Subagent.Title != "helper" || bg[2].Cancellable() {
		t.Errorf("subagent item %+v", bg[2])
	}
	for _, b := range bg[3:] {
		if b.ToolCall != nil || b.Terminal != nil || b.Subagent != nil || b.Cancellable() {
			t.Errorf("an item the client does not know is joined: %+v", b)
		}
	}
	// The wire's items are the state_update as sent, item for item; the
	// joins are the client's, and the update's own event carries them.
	for i, b := range bg {
		if d := cmp.Diff(before.Activity.State.Background[i], b.Work); d != "" {
			t.Errorf("item %d: Work is not the wire's item (-State +Work):\n%s", i, d)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	var logged *Activity
	for ev := range s.Events(ctx, 0) {
		if u, ok := ev.Update.(*schema.StateUpdate); ok && len(u.Background) == 5 {
			logged = ev.Activity
		}
	}
	if logged == nil || logged.Background[0].ToolCall == nil || logged.Background[0].ToolCall.Title != "watch" || logged.Background[1].Terminal == nil {
		t.Errorf("the state_update's event does not carry the joined Activity: %+v", logged)
	}

	// Changes outside the turn follow into the items.
	a.update("s1", map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": "term1", "data": b64("ok")})
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "k1", "title": "reader"})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "capabilities": nil})
	syncRaw(t, a, 901)
	bg = s.State().Activity.Background
	if string(bg[1].Terminal.Output) != "ok" || bg[2].Subagent.Title != "reader" || bg[0].Cancellable() || bg[0].ToolCall.Title != "watch" {
		t.Fatalf("after changes: %+v", bg[:3])
	}
	if before.Activity.Background[1].Terminal.Output != nil || !before.Activity.Background[0].Cancellable() {
		t.Fatal("an earlier snapshot changed")
	}

	// Inside a later turn too: the session's feed carries the change.
	turn2, err := s.Prompt(context.Background(), schema.Text("more"))
	if err != nil {
		t.Fatal(err)
	}
	a.reply(a.expect("session/prompt"), map[string]any{"messageId": "u2"})
	a.update("s1", state("running", "background", []any{map[string]any{"type": "tool_call", "toolCallId": "c1"}}))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c9", "title": "foreground"})
	syncRaw(t, a, 902)
	if tc := s.State().Activity.Background[0].ToolCall; tc == nil || tc.Status != schema.ToolCallStatusCompleted {
		t.Fatalf("tool call item in turn 2: %+v", tc)
	}
	if d := cmp.Diff(s.State(), sessionFoldOf(t, s), ignoreOutside); d != "" {
		t.Errorf("SessionFold in turn 2 (-State +fold):\n%s", d)
	}
	a.update("s1", state("idle", "stopReason", "end_turn"))
	if _, err := turn2.Wait(); err != nil {
		t.Fatal(err)
	}
	syncRaw(t, a, 903)
	if d := cmp.Diff(s.State(), sessionFoldOf(t, s), ignoreOutside); d != "" {
		t.Errorf("SessionFold (-State +fold):\n%s", d)
	}
	_ = c
}
