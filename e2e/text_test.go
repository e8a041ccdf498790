package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// TestText: streamed text is folded into one message, reasoning into one
// thought, and the turn reports usage.
func TestText(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		r := start(t, ag, nil)
		r.Model.Script(Reply{Thinking: []string{"Let me ", "think."}, Text: []string{"Hel", "lo ", "there!"}, InputTokens: 120, OutputTokens: 7})
		turn, stop, err := r.prompt("say hello")
		if err != nil || stop != schema.StopReasonEndTurn {
			t.Fatalf("turn: %v, %v", stop, err)
		}
		st := turn.State()
		if !slices.Contains(texts(st.Messages), "Hello there!") {
			t.Errorf("messages %q, want one %q", texts(st.Messages), "Hello there!")
		}
		if got := strings.TrimSpace(strings.Join(texts(st.Thoughts), "|")); got != "Let me think." {
			t.Errorf("thoughts %q, want %q", texts(st.Thoughts), "Let me think.")
		}
		u := r.S.State().Usage
		if u == nil || u.Used == 0 || u.Size == 0 {
			t.Errorf("session usage %+v, want a usage_update", u)
		}
		// Both answer the prompt with the model's token counts (codex-acp
		// 0.16.0 sent only usage_update).
		if st.Usage == nil || st.Usage.InputTokens != 120 || st.Usage.OutputTokens != 7 {
			t.Errorf("prompt usage %+v, want 120 in, 7 out", st.Usage)
		}
		for _, q := range r.Model.Requests(false) {
			if !q.Scripted {
				t.Logf("side request: %s %s %.200s", q.Method, q.Path, q.Raw)
			}
		}
		reqs := r.Model.Requests(true)
		if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "say hello") {
			t.Errorf("model saw %d scripted requests, want 1 carrying the prompt", len(reqs))
		}
		r.save("text")
	})
}
