package acp

import (
	"context"
	"strings"
	"sync"
	"testing"

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
	turn, err := s.Prompt(context.Background(), Text("go"))
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
	if stop, err := turn.Wait(); err != nil || stop != StopReasonCancelled {
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
	if diags.matching("cancelling a turn") != 1 || diags.matching("dropping the updates") != 1 || diags.matching("updates were dropped") != 1 {
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
