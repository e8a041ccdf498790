package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestCodexGuardian: in codex-acp's default mode, "agent" (Auto review), a
// command the model wants to run unsandboxed is approved or denied by
// codex's Guardian reviewer, a request to the same model with a JSON
// verdict, instead of by the client. The client gets no permission request
// and sees the review as a tool call of its own ("Guardian Review", kind
// think, id "guardian_assessment:<review id>") next to the command's.
func TestCodexGuardian(t *testing.T) {
	for _, outcome := range []string{"allow", "deny"} {
		t.Run(outcome, func(t *testing.T) {
			t.Parallel()
			for _, v := range versions {
				t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
					t.Parallel()
					testCodexGuardian(t, outcome, agent{name: "codex", version: v, setup: func(t *testing.T, m *Model) ([]string, []string) {
						return setupCodexMode(t, m, "")
					}})
				})
			}
		})
	}
}

func testCodexGuardian(t *testing.T, outcome string, auto agent) {
	var log permissionLog
	r := start(t, auto, &acp.ClientOptions{Permission: log.wrap(acp.AllowAll)})
	verdict, _ := json.Marshal(map[string]string{"risk_level": "low", "user_authorization": "high", "outcome": outcome, "rationale": "Decided by the test."})
	r.Model.Script(
		Reply{Text: []string{"I will create it."}, Tool: shell(codex, "call_make", "echo made > made.txt")},
		Reply{Text: []string{string(verdict)}}, // the Guardian's request
		Reply{Text: []string{"Finished."}},
	)
	turn, stop, err := r.prompt("create made.txt")
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("turn: %v, %v", stop, err)
	}
	if n := len(log.all()); n != 0 {
		t.Errorf("%d permission requests reached the client, want none", n)
	}
	reqs := r.Model.Requests(true)
	if len(reqs) != 3 || !strings.Contains(string(reqs[1].Raw), "You are judging one planned coding-agent action") {
		t.Fatalf("%d model requests, want 3, the second the Guardian's", len(reqs))
	}
	st := turn.State()
	var review *acp.ToolCallState
	for i := range st.ToolCalls {
		if strings.HasPrefix(st.ToolCalls[i].ToolCallID, "guardian_assessment:") {
			review = &st.ToolCalls[i]
		}
	}
	// A denial ends the review failed.
	want := map[string]string{"allow": "Status: Approved", "deny": "Status: Denied"}[outcome]
	wantStatus := map[string]schema.ToolCallStatus{"allow": schema.ToolCallStatusCompleted, "deny": schema.ToolCallStatusFailed}[outcome]
	if review == nil || review.Title != "Guardian Review" || review.Kind != schema.ToolKindThink ||
		review.Status != wantStatus || !strings.Contains(r.outputOf(review), want) {
		t.Errorf("review tool call %+v, want a Guardian Review %s with %q", review, wantStatus, want)
	}
	_, statErr := os.Stat(r.path("made.txt"))
	tc := findTool(st, "call_make")
	switch outcome {
	case "allow":
		if statErr != nil || tc == nil || tc.Status != schema.ToolCallStatusCompleted {
			t.Errorf("made.txt: %v; tool call %+v; want the command run and completed", statErr, tc)
		}
	case "deny":
		if !os.IsNotExist(statErr) || tc == nil || tc.Status != schema.ToolCallStatusFailed {
			t.Errorf("made.txt: %v; tool call %+v; want the command not run and failed", statErr, tc)
		}
		if out, ok := toolResult(reqs[2], "call_make"); !ok || !strings.Contains(out, "Decided by the test.") {
			t.Errorf("tool result fed back %s (found %v), want the Guardian's rationale", out, ok)
		}
	}
	r.save("guardian-" + outcome)
}
