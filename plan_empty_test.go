// Tests of how a state writes "no plan entries": a turn that received no
// plan and one whose latest plan has no entries are the same state, in Go
// and in JSON.
package acp_test

import (
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestPlanEmptyIsAbsent: TurnState.Plan (and SessionState.Plan) is nil
// both when the agent sent no plan and when its latest plan has no
// entries (a legacy plan update of none, a plan_update of an empty items
// list), and TurnState's JSON writes [] for both, as `acp --json` prints
// it. A test writes the state it expects without knowing which happened.
func TestPlanEmptyIsAbsent(t *testing.T) {
	for name, updates := range map[string][]string{
		"no plan":            {`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`},
		"legacy plan, empty": {`{"sessionUpdate":"plan","entries":[]}`},
		"plan cleared": {
			`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`,
			`{"sessionUpdate":"plan","entries":[]}`,
		},
		"items plan, empty": {`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}`},
	} {
		t.Run(name, func(t *testing.T) {
			s, turn := scriptedTurn(t, &acp.ClientOptions{PlanOperations: true}, schema.StopReasonEndTurn, updates...)
			st := turn.State()
			if st.Plan != nil {
				t.Errorf("TurnState.Plan = %#v, want nil", st.Plan)
			}
			if p := s.State().Plan; p != nil {
				t.Errorf("SessionState.Plan = %#v, want nil", p)
			}
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Plan json.RawMessage `json:"plan"`
			}
			if err := json.Unmarshal(b, &got); err != nil || string(got.Plan) != "[]" {
				t.Errorf(`TurnState JSON "plan" = %s (%v), want []`, got.Plan, err)
			}
		})
	}
}

// TestPlanWithEntries: a plan with entries is kept as sent, in Go and in
// JSON (the other side of TestPlanEmptyIsAbsent).
func TestPlanWithEntries(t *testing.T) {
	s, turn := scriptedTurn(t, nil, schema.StopReasonEndTurn,
		`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`)
	want := []schema.PlanEntry{{Content: "a", Priority: schema.PlanEntryPriorityHigh, Status: schema.PlanEntryStatusPending}}
	st := turn.State()
	if len(st.Plan) != 1 || st.Plan[0].Content != want[0].Content || len(s.State().Plan) != 1 {
		t.Fatalf("TurnState.Plan = %#v, SessionState.Plan = %#v; want %#v", st.Plan, s.State().Plan, want)
	}
	b, _ := json.Marshal(st)
	var got struct {
		Plan []schema.PlanEntry `json:"plan"`
	}
	if err := json.Unmarshal(b, &got); err != nil || len(got.Plan) != 1 || got.Plan[0].Content != "a" {
		t.Errorf(`TurnState JSON "plan" = %+v (%v)`, got.Plan, err)
	}
}
