package acp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// limitDiags collects the "limit_exceeded" diagnostics of a client.
type limitDiags struct {
	mu   sync.Mutex
	msgs []string
}

func (d *limitDiags) on(diag Diagnostic) {
	if diag.Kind == DiagLimitExceeded {
		d.mu.Lock()
		d.msgs = append(d.msgs, diag.Message)
		d.mu.Unlock()
	}
}

func (d *limitDiags) matching(sub string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, m := range d.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

// An agent that streams without end into one turn cannot grow the client's
// memory past about twice Limits.MaxTurnBytes: the turn is cancelled when it
// crosses the limit, keeps folding while the agent winds down, and drops
// the rest — except session-level updates, which replace state. The turn's
// feed still folds to its state.
func TestMaxTurnBytes(t *testing.T) {
	const budget = 16 << 10
	var diags limitDiags
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: budget}, OnDiagnostic: diags.on}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	text := strings.Repeat("x", 1000)
	const sent = 100 // about 113 KB of notifications: 7 times the budget
	for range sent {
		a.update("s1", chunk(text))
	}
	a.update("s1", map[string]any{"sessionUpdate": "session_info_update", "title": "still applied"})
	expectCall(a, "session/cancel") // sent when the turn crossed the budget
	a.reply(prompt, map[string]any{"stopReason": "cancelled"})
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonCancelled {
		t.Fatalf("Wait: %v, %v; want cancelled", stop, err)
	}

	st := turn.State()
	kept := len(st.Messages[0].Text) / len(text)
	if kept >= sent || kept*len(text) > 2*budget {
		t.Errorf("the turn folded %d of %d chunks (%d bytes of text); want fewer, at most 2×%d bytes of notifications", kept, sent, kept*len(text), budget)
	}
	if !st.Cancelled {
		t.Error("the turn was not cancelled")
	}
	if got := s.State().Title; got != "still applied" {
		t.Errorf("session title %q: a session-level update past the limit was dropped", got)
	}
	var tf TurnFold
	for ev := range turn.Events(context.Background(), 0) {
		tf.Apply(ev)
	}
	if d := cmp.Diff(turn.State(), tf.State(), rawCmp); d != "" {
		t.Errorf("the turn's feed folds differently from its state (-state +fold):\n%s", d)
	}
	c.Close()
	if diags.matching("cancelling a turn") != 1 || diags.matching("dropping what a turn") != 1 || diags.matching("were not folded") != 1 {
		t.Errorf("diagnostics: %q", diags.msgs)
	}
	if diags.matching("Limits.MaxTurnBytes") != 3 {
		t.Errorf("not every diagnostic names Limits.MaxTurnBytes: %q", diags.msgs)
	}
}

// Updates outside turns share one budget per session: past it they no
// longer grow History or Outside; session-level updates are still applied.
func TestMaxTurnBytesOutsideTurns(t *testing.T) {
	const budget = 8 << 10
	var diags limitDiags
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: budget}, OnDiagnostic: diags.on}, nil)
	s := newSessionRaw(t, c, a)
	text := strings.Repeat("y", 1000)
	for range 50 {
		a.update("s1", chunk(text))
	}
	a.update("s1", map[string]any{"sessionUpdate": "session_info_update", "title": "applied"})
	for range s.Changes(context.Background()) {
		if s.State().Title == "applied" {
			break
		}
	}
	st := s.State()
	if n := len(st.History.Messages[0].Text); n > budget {
		t.Errorf("History holds %d bytes of text; budget %d", n, budget)
	}
	if len(st.Outside) > budget/len(text)+2 {
		t.Errorf("Outside holds %d updates past the budget", len(st.Outside))
	}
	c.Close()
	if diags.matching("MaxTurnBytes") == 0 {
		t.Errorf("no diagnostic names Limits.MaxTurnBytes: %q", diags.msgs)
	}
}

// One update that takes a turn from under the budget past twice it at once
// still cancels the turn (it is dropped, and the turn told to stop).
func TestMaxTurnBytesOneHugeUpdate(t *testing.T) {
	const budget = 4 << 10
	var diags limitDiags
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: budget}, OnDiagnostic: diags.on}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	a.update("s1", chunk(strings.Repeat("z", 3*budget)))
	expectCall(a, "session/cancel")
	a.reply(prompt, map[string]any{"stopReason": "cancelled"})
	turn.Wait()
	if st := turn.State(); !st.Cancelled || len(st.Messages) != 0 {
		t.Errorf("cancelled %v, %d messages; want cancelled, the huge chunk dropped", st.Cancelled, len(st.Messages))
	}
	c.Close()
	if diags.matching("cancelling a turn") != 1 {
		t.Errorf("diagnostics: %q", diags.msgs)
	}
}

// A budget near MaxInt64, the way to say "no limit", does not overflow
// into dropping everything.
func TestMaxTurnBytesHuge(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: math.MaxInt64}}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	a.update("s1", chunk("kept"))
	a.reply(prompt, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	if got := turn.State().Messages; len(got) != 1 || got[0].Text != "kept" {
		t.Errorf("messages %+v, want the chunk", got)
	}
}

// A permission request's toolCall grows the turn like an update does: it
// counts against the budget, cancels the turn when it crosses it, and past
// twice the budget is no longer folded (the request is still answered).
func TestMaxTurnBytesPermissionRequests(t *testing.T) {
	const budget = 16 << 10
	c, a := connectRaw(t, &ClientOptions{
		Limits: Limits{MaxTurnBytes: budget},
		Permission: func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
			return CancelledOutcome(), nil
		},
	}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	big := strings.Repeat("r", 1000)
	cancelSeen := false
	const sent = 100
	for i := range sent {
		params := permParams(fmt.Sprint("tc", i), "allow_once")
		params["toolCall"].(map[string]any)["rawInput"] = map[string]any{"blob": big}
		a.send(map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "session/request_permission", "params": params})
		for {
			m := a.next()
			if m.Method == "session/cancel" {
				cancelSeen = true
				continue
			}
			if string(m.ID) == jsonInt(100+i) {
				break
			}
		}
	}
	if !cancelSeen {
		t.Error("no session/cancel after the permission requests crossed the budget")
	}
	a.reply(prompt, map[string]any{"stopReason": "cancelled"})
	turn.Wait()
	if n := len(turn.State().ToolCalls); n >= sent || n*len(big) > 2*budget {
		t.Errorf("the turn folded %d of %d permission tool calls; want at most about 2×%d bytes", n, sent, budget)
	}
}

// Outside turns, past the session's budget: a compaction summary no longer
// grows, nor do History or Outside, while a mode change is still applied —
// and the session's feed still folds to its state.
func TestMaxTurnBytesOutsideKeepsReplacingKinds(t *testing.T) {
	const budget = 8 << 10
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxTurnBytes: budget}}, nil)
	s := newSessionRaw(t, c, a)
	part := strings.Repeat("s", 1000)
	for range 30 {
		a.update("s1", map[string]any{"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": map[string]any{"type": "text", "text": part}})
	}
	a.update("s1", map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": "late"})
	for range s.Changes(context.Background()) {
		if m := s.State().Modes; m != nil && m.CurrentModeID == "late" {
			break
		}
	}
	st := s.State()
	if st.Compaction == nil || len(st.Compaction.Summary)*len(part) > budget {
		t.Errorf("compaction summary holds %d chunks past the %d-byte budget", len(st.Compaction.Summary), budget)
	}
	if len(st.Outside) > budget/len(part)+1 {
		t.Errorf("Outside holds %d updates past the budget", len(st.Outside))
	}
	s.Release()
	var sf SessionFold
	for ev := range s.Events(context.Background(), 0) {
		sf.Apply(ev)
	}
	if d := cmp.Diff(s.State(), sf.State(), rawCmp); d != "" {
		t.Errorf("the session's feed folds differently from State (-state +fold):\n%s", d)
	}
}
