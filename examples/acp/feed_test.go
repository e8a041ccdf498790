package main

import (
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// --json is enough to rebuild the state: folding the update events (the
// agent's and the local cancel marks) and the permission events' toolCall
// patches, in order, gives turn_end.state. The permission event stands
// right after its tool call's card, and the question does not replace the
// tool's title.
func TestJSONEventsRebuildState(t *testing.T) {
	args := append([]string{"--json", "--permission", "allow", "--cancel-after", "300ms", "-p", "go"}, agentArgs(t, "toolcancel")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d; %s", code, errOut)
	}
	evs := parseEvents(t, out)
	var tf acp.TurnFold
	var sawLocal, sawPerm bool
	var end event
	for i, e := range evs {
		switch e["event"] {
		case "update", "permission":
			raw, _ := json.Marshal(map[string]any{"sessionId": "x", "update": first(e["update"], e["toolCall"])})
			var n schema.SessionNotification
			if err := json.Unmarshal(raw, &n); err != nil {
				t.Fatalf("event %v: %v", e, err)
			}
			origin := acp.OriginAgent
			switch {
			case e["event"] == "permission":
				origin = acp.OriginPermission
				sawPerm = true
				prev := evs[i-1]["update"].(map[string]any)
				if prev["sessionUpdate"] != "tool_call" || prev["toolCallId"] != "e1" {
					t.Errorf("the permission event follows %v, not its tool call's card", prev)
				}
				if e["title"] != "Allow editing a.go?" || e["toolCall"].(map[string]any)["title"] != nil {
					t.Errorf("permission event %v: the question belongs in title, not in the patch", e)
				}
			case e["origin"] == "local":
				origin = acp.OriginLocal
				sawLocal = true
			}
			tf.Apply(acp.Event{Kind: acp.EventUpdate, Origin: origin, Update: n.Update})
		case "turn_end":
			end = e
		}
	}
	if !sawPerm || !sawLocal || end == nil {
		t.Fatalf("permission event %v, local update %v, turn_end %v in\n%s", sawPerm, sawLocal, end != nil, out)
	}
	folded, _ := json.Marshal(tf.State())
	var got map[string]any
	json.Unmarshal(folded, &got)
	want := end["state"].(map[string]any)
	for _, key := range []string{"messages", "thoughts", "userMessages", "toolCalls", "plan"} {
		if diff := cmp.Diff(want[key], got[key]); diff != "" {
			t.Errorf("state.%s (-turn_end +folded):\n%s", key, diff)
		}
	}
	tc := want["toolCalls"].([]any)[0].(map[string]any)
	if tc["title"] != "Edit a.go" || tc["status"] != "cancelled" || tc["content"] == nil {
		t.Errorf("tool call e1 in turn_end: %v", tc)
	}
}

func first(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}
