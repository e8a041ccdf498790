// Tests of how --json writes a plan with no entries.
package main

import (
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// Sends, by the prompt's text: no plan ("none"), a plan of no entries
	// ("empty"), a plan of one entry ("one"), or one and then none
	// ("cleared").
	acptest.Register("plan-empty", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			one := json.RawMessage(`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`)
			none := json.RawMessage(`{"sessionUpdate":"plan","entries":[]}`)
			switch t.PromptText() {
			case "empty":
				t.Update(none)
			case "one":
				t.Update(one)
			case "cleared":
				t.Update(one)
				t.Update(none)
			}
			return schema.StopReasonEndTurn, nil
		}})
	})
}

// TestJSONPlanEmptyOrAbsent: turn_end's state.plan is [] both when the
// agent sent no plan and when its latest plan has no entries, a list of
// the entries otherwise; and folding the update events gives the same
// Go state, TurnState.Plan nil for the first two (TurnState.Plan's rule).
func TestJSONPlanEmptyOrAbsent(t *testing.T) {
	for prompt, want := range map[string]int{"none": 0, "empty": 0, "cleared": 0, "one": 1} {
		t.Run(prompt, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", append([]string{"--json", "-p", prompt}, agentArgs(t, "plan-empty")...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			evs := parseEvents(t, out)
			end := evs[len(evs)-1]
			plan, ok := end["state"].(map[string]any)["plan"].([]any)
			if end["event"] != "turn_end" || !ok || len(plan) != want {
				t.Fatalf("turn_end state.plan = %#v, want a list of %d", end["state"].(map[string]any)["plan"], want)
			}
			var tf acp.TurnFold
			for _, e := range evs {
				if e["event"] != "update" {
					continue
				}
				raw, _ := json.Marshal(map[string]any{"sessionId": "x", "update": e["update"]})
				var n schema.SessionNotification
				if err := json.Unmarshal(raw, &n); err != nil {
					t.Fatal(err)
				}
				tf.Apply(acp.Event{Kind: acp.EventUpdate, Origin: acp.OriginAgent, Update: n.Update})
			}
			if got := tf.State().Plan; len(got) != want || (want == 0 && got != nil) {
				t.Errorf("folded TurnState.Plan = %#v, want %d entries (nil for none)", got, want)
			}
		})
	}
}
