package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func init() {
	// An agent that delegates to two children when the client advertises
	// subagents (and answers alone otherwise): A reads, B gets a message
	// from A, both end, and A's result comes back to the parent.
	acptest.Register("subagents", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			if !t.ClientCan("subagents") {
				return schema.StopReasonEndTurn, t.Say("alone")
			}
			p := t.SessionID()
			for _, u := range []struct{ id, js string }{
				{p, `{"sessionUpdate":"subagent_update","sessionId":"A","title":"Reader","state":{"state":"running"}}`},
				{p, `{"sessionUpdate":"subagent_update","sessionId":"B","title":"Writer","state":{"state":"running"}}`},
				{p, `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Delegate","status":"in_progress","content":[{"type":"session","sessionId":"A"}]}`},
				{"A", `{"sessionUpdate":"session_message","messageId":"m1","senderSessionId":"` + p + `","recipientSessionId":"A","content":[{"type":"text","text":"read x"}]}`},
				{"A", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"reading"}}`},
				{"A", `{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read x","kind":"read","status":"completed"}`},
				{"B", `{"sessionUpdate":"session_message","messageId":"m2","senderSessionId":"A","recipientSessionId":"B"}`},
				{"B", `{"sessionUpdate":"session_message_chunk","messageId":"m2","content":{"type":"text","text":"from A"}}`},
				{p, `{"sessionUpdate":"subagent_update","sessionId":"A","state":{"state":"idle","stopReason":"end_turn"}}`},
				{p, `{"sessionUpdate":"subagent_update","sessionId":"B","state":{"state":"idle","stopReason":"end_turn"}}`},
				{p, `{"sessionUpdate":"session_message","messageId":"m3","senderSessionId":"A","recipientSessionId":"` + p + `","content":[{"type":"text","text":"result"}]}`},
				{p, `{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`},
			} {
				if err := t.UpdateAs(u.id, json.RawMessage(u.js)); err != nil {
					return "", err
				}
			}
			return schema.StopReasonEndTurn, nil
		}})
	})
}

// --json shows the children's events with their sessionId and their
// parent's, the messages between sessions, and each child turn's end with
// its state, which folding the child's update events rebuilds; turn_end
// stays last and holds the parent's turn.
func TestJSONChildSessions(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--json", "-p", "go"}, agentArgs(t, "subagents")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	parent := evs[0]["sessionId"].(string)
	folds := map[string]*acp.TurnFold{"A": {}, "B": {}}
	ends := map[string]event{}
	for _, e := range evs {
		sid, _ := e["sessionId"].(string)
		switch e["event"] {
		case "update":
			if sid == parent {
				if e["parentSessionId"] != nil {
					t.Errorf("a parent's event has a parent: %v", e)
				}
				continue
			}
			if e["parentSessionId"] != parent {
				t.Errorf("child event %v: parentSessionId is not %s", e, parent)
			}
			raw, _ := json.Marshal(map[string]any{"sessionId": sid, "update": e["update"]})
			var n schema.SessionNotification
			if err := json.Unmarshal(raw, &n); err != nil {
				t.Fatalf("%v: %v", e, err)
			}
			folds[sid].Apply(acp.Event{Kind: acp.EventUpdate, Origin: acp.OriginAgent, Update: n.Update})
		case "child_turn_end":
			if e["parentSessionId"] != parent || e["stopReason"] != "end_turn" {
				t.Errorf("child_turn_end %v", e)
			}
			ends[sid] = e
		}
	}
	if last := evs[len(evs)-1]; last["event"] != "turn_end" {
		t.Errorf("last event %v, want turn_end", last["event"])
	}
	for _, id := range []string{"A", "B"} {
		end, ok := ends[id]
		if !ok {
			t.Fatalf("no child_turn_end for %s in %v", id, kinds(evs))
		}
		folded, _ := json.Marshal(folds[id].State())
		var got map[string]any
		json.Unmarshal(folded, &got)
		want := end["state"].(map[string]any)
		for _, key := range []string{"messages", "toolCalls", "sessionMessages"} {
			if diff := cmp.Diff(want[key], got[key]); diff != "" {
				t.Errorf("%s: state.%s (-child_turn_end +folded):\n%s", id, key, diff)
			}
		}
	}
	a := ends["A"]["state"].(map[string]any)
	if msgs := a["sessionMessages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["senderSessionId"] != parent {
		t.Errorf("A's session messages %v", a["sessionMessages"])
	}
	st := evs[len(evs)-1]["state"].(map[string]any)
	if msgs, _ := st["sessionMessages"].([]any); len(msgs) != 1 {
		t.Errorf("the parent's turn_end has session messages %v", st["sessionMessages"])
	}
}

// Text: a child's lines start with its id; announcements and messages
// between sessions have lines of their own.
func TestTextChildSessions(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"-p", "go"}, agentArgs(t, "subagents")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"[subagent] A: Reader (running)", "[A] [message ", " → A] read x", "[A] reading", "[A] [tool] Read x (read) completed",
		"[B] [message] from A", "[subagent] A: (idle (end_turn))", "[A] [end_turn]", "[message A → ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// --subagents=false does not advertise them: the agent answers alone.
func TestNoSubagentsFlag(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--json", "--subagents=false", "-p", "go"}, agentArgs(t, "subagents")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "parentSessionId") || strings.Contains(out, "child_turn_end") || !strings.Contains(out, "alone") {
		t.Errorf("output:\n%s", out)
	}
}
