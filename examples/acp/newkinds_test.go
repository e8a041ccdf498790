package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// Sends plan operations when the client advertises them (--plan-ops),
	// else the legacy checklist, as agents do.
	acptest.Register("plan-ops", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			if !t.ClientCan("plan") {
				t.Update(map[string]any{"sessionUpdate": "plan", "entries": []any{map[string]any{"content": "legacy", "priority": "low", "status": "pending"}}})
				return "end_turn", nil
			}
			t.Update(json.RawMessage(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"build","entries":[{"content":"compile","priority":"high","status":"completed"},{"content":"test","priority":"high","status":"in_progress"}]}}`))
			t.Update(json.RawMessage(`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"notes","content":"# Notes\nsecond line","path":"/w/NOTES.md"}}`))
			t.Update(json.RawMessage(`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"docs","entries":[]}}`))
			t.Update(json.RawMessage(`{"sessionUpdate":"plan_removed","planId":"docs"}`))
			return "end_turn", nil
		}})
	})
	// Ends its turn with the error stop reason.
	acptest.Register("error-stop", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("trying")
			return schema.StopReasonError, nil
		}})
	})
	// Notifies its auth status right after the session starts, the second
	// time in codex-acp's extension form.
	acptest.Register("auth-status", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnNewSession: func(s *acptest.Session) {
			s.Notify("auth/status_update", map[string]any{"state": "unauthenticated"})
			s.Notify("_auth/status_update", map[string]any{"state": "authenticated",
				"accounts": []any{map[string]any{"label": "Pro plan", "active": true}, map[string]any{"label": "API key"}}})
		}})
	})
}

func TestPlanOperationsOutput(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--plan-ops", "-p", "go"}, agentArgs(t, "plan-ops")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"[plan build]\n  [x] compile\n  [>] test\n", "[plan notes] /w/NOTES.md\n  # Notes\n  second line\n", "[plan docs removed]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	out, errOut, code = runCLI(t, "", append([]string{"--json", "--plan-ops", "-p", "go"}, agentArgs(t, "plan-ops")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	end := evs[len(evs)-1]
	if end["event"] != "turn_end" {
		t.Fatalf("events %v", kinds(evs))
	}
	plans, _ := end["plans"].([]any)
	if len(plans) != 2 || plans[0].(map[string]any)["planId"] != "build" || plans[1].(map[string]any)["path"] != "/w/NOTES.md" {
		t.Errorf("turn_end plans = %v", end["plans"])
	}
	// The turn's state shows the list plan it updated last, which it then
	// removed: no entries, no id.
	if st := end["state"].(map[string]any); st["planId"] != nil || len(st["plan"].([]any)) != 0 {
		t.Errorf("turn state planId = %v, plan %v", st["planId"], st["plan"])
	}

	// Without the flag the agent sends its checklist, shown as before, and
	// turn_end has no plans.
	out, _, _ = runCLI(t, "", append([]string{"--json", "-p", "go"}, agentArgs(t, "plan-ops")...)...)
	evs = parseEvents(t, out)
	if end := evs[len(evs)-1]; end["plans"] != nil {
		t.Errorf("turn_end plans without --plan-ops: %v", end["plans"])
	}
}

func TestErrorStopReasonOutput(t *testing.T) {
	_, errOut, code := runCLI(t, "", append([]string{"-p", "go"}, agentArgs(t, "error-stop")...)...)
	if code != 0 || !strings.Contains(errOut, "[error] the agent reported a failure") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	out, _, _ := runCLI(t, "", append([]string{"--json", "-p", "go"}, agentArgs(t, "error-stop")...)...)
	evs := parseEvents(t, out)
	if end := evs[len(evs)-1]; end["stopReason"] != "error" || end["state"].(map[string]any)["stopReason"] != "error" {
		t.Errorf("turn_end %v", end)
	}
}

func TestAuthStatusOutput(t *testing.T) {
	_, errOut, code := runCLI(t, "", append([]string{"-p", "go"}, agentArgs(t, "auth-status")...)...)
	if code != 0 || !strings.Contains(errOut, "acp: auth: unauthenticated\n") || !strings.Contains(errOut, "acp: auth: authenticated (Pro plan)\n") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	out, _, _ := runCLI(t, "", append([]string{"--json", "-p", "go"}, agentArgs(t, "auth-status")...)...)
	var states []any
	for _, e := range parseEvents(t, out) {
		if e["event"] == "auth_status" {
			states = append(states, e["state"])
			if e["state"] == "authenticated" && len(e["accounts"].([]any)) != 2 {
				t.Errorf("accounts %v", e["accounts"])
			}
		}
	}
	if len(states) != 2 || states[0] != "unauthenticated" || states[1] != "authenticated" {
		t.Errorf("auth_status events %v", states)
	}
}
