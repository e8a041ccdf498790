// This file holds the compliant agent and the tests that it passes
// in-process, as a subprocess and in v2, and that hung agents fail.

package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/acptest/conformance"
	"github.com/acpclient/acp/schema"
)

// goodOptions makes a compliant agent: modes, config options, and a turn
// that streams, runs an edit tool call behind a permission request and
// writes its file through fs when offered; a prompt starting "slow" keeps
// it busy until cancelled.
func goodOptions() *acptest.Options {
	return &acptest.Options{
		AgentInfo: map[string]any{"name": "good", "version": "1.0.0"},
		Modes: map[string]any{"currentModeId": "ask", "availableModes": []any{
			map[string]any{"id": "ask", "name": "Ask"}, map[string]any{"id": "code", "name": "Code"}}},
		ConfigOptions: []any{map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "a",
			"options": []any{map[string]any{"value": "a", "name": "A"}, map[string]any{"value": "b", "name": "B"}}}},
		OnPrompt: goodTurn,
	}
}

func goodTurn(t *acptest.Turn) (schema.StopReason, error) {
	if strings.HasPrefix(t.PromptText(), "slow") {
		for t.Pause(10 * time.Millisecond) {
			t.Say("more. ")
		}
		return schema.StopReasonCancelled, nil
	}
	t.Say("hello")
	path := filepath.Join(t.Cwd(), "conformance.txt")
	t.ToolCall(acptest.ToolCallSpec{ID: "edit", Title: "Write conformance.txt", Kind: "edit", Status: "pending"})
	out, err := t.RequestPermission(acptest.ToolCallSpec{ID: "edit"}, []schema.PermissionOption{
		{OptionID: "allow", Name: "Allow", Kind: "allow_once"}, {OptionID: "reject", Name: "Reject", Kind: "reject_once"}})
	if err != nil {
		return "", err
	}
	choice, cancelled, _ := acptest.ParseOutcome(out)
	if cancelled {
		t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit", Status: "failed"})
		return schema.StopReasonCancelled, nil
	}
	if choice == "allow" && t.ClientCan("fs", "writeTextFile") {
		if err := t.WriteTextFile(path, "ok\n"); err != nil {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit", Status: "failed"})
			return schema.StopReasonEndTurn, nil
		}
	}
	t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit", Status: "completed"})
	return schema.StopReasonEndTurn, nil
}

var goodPrompts = conformance.Options{Prompts: conformance.Prompts{Cancel: "slow down"}}

func gradeAgent(t *testing.T, a *acptest.Agent, opts *conformance.Options) *conformance.Report {
	t.Helper()
	t.Cleanup(func() { a.Close() })
	rep, err := conformance.Run(context.Background(), conformance.PipeTarget(a.Pipe), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCheckCompliantAgentPasses: an agent that follows the rules breaks
// none, and the rules it gives the scenarios occasion for are exercised.
func TestCheckCompliantAgentPasses(t *testing.T) {
	opts := goodPrompts
	rep := gradeAgent(t, acptest.New(goodOptions()), &opts)
	for _, res := range rep.Results {
		t.Logf("v%d %-24s %-13s %s", res.Protocol, res.ID, res.Status, res.Message)
		if res.Status == conformance.Fail || res.Status == conformance.Warn {
			t.Errorf("%s: %s: %s %s", res.ID, res.Status, res.Message, res.Evidence)
		}
	}
	for _, id := range []string{"init.version", "session.load", "session.resume", "session.close", "session.list",
		"cancel.stop-reason", "permission.request", "tools.shape", "fs.absolute-paths", "modes.set", "config.set", "prompt.capabilities"} {
		if res, _ := rep.Result(id, 1); res.Status != conformance.Pass {
			t.Errorf("%s: %s (%s), want pass", id, res.Status, res.Message)
		}
	}
}

// TestCheckHungAgentFails: an agent that never answers initialize yields
// a failed report; the run is bounded by the scenario deadline, not hung.
func TestCheckHungAgentFails(t *testing.T) {
	a := acptest.New(&acptest.Options{Methods: map[string]acptest.MethodFunc{"initialize": acptest.NeverAnswer}})
	rep := gradeAgent(t, a, &conformance.Options{ScenarioTimeout: 500 * time.Millisecond})
	res, _ := rep.Result("init.answers", 1)
	if res.Status != conformance.Fail {
		t.Fatalf("init.answers: %s (%s), want fail", res.Status, res.Message)
	}
	if rep.Passed(false) {
		t.Error("the report passed")
	}
}

// commandTarget runs a registered acptest agent as a subprocess.
func commandTarget(name string) conformance.Target {
	cmd := acptest.Command(name)
	return conformance.Target{Command: cmd.Args, Env: append(os.Environ(), acptest.EnvAgent+"="+name)}
}

// TestCheckSubprocessAgent grades an agent started as a command, one
// process per connection, in the run's workspace.
func TestCheckSubprocessAgent(t *testing.T) {
	opts := goodPrompts
	rep, err := conformance.Run(context.Background(), commandTarget("good"), &opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if res.Status == conformance.Fail || res.Status == conformance.Warn {
			t.Errorf("%s: %s: %s", res.ID, res.Status, res.Message)
		}
	}
	for id, want := range map[string]conformance.Status{"session.load": conformance.NotExercised,
		"prompt.capabilities": conformance.Pass, "fs.absolute-paths": conformance.Pass, "cancel.stop-reason": conformance.Pass} {
		if res, _ := rep.Result(id, 1); res.Status != want {
			t.Errorf("%s: %s (%s), want %s", id, res.Status, res.Message, want)
		}
	}
}

// TestCheckHungSubprocessFails: a process that never answers and ignores
// the end of its stdin is killed; the report fails init.answers.
func TestCheckHungSubprocessFails(t *testing.T) {
	rep, err := conformance.Run(context.Background(), commandTarget("hung"), &conformance.Options{ScenarioTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := rep.Result("init.answers", 1); res.Status != conformance.Fail || !strings.Contains(res.Message, "no answer within") {
		t.Fatalf("init.answers: %s (%s), want a failure naming the deadline", res.Status, res.Message)
	}
	for _, res := range rep.Results {
		if res.Status == conformance.Pass {
			t.Errorf("%s passed for an agent that never answered", res.ID)
		}
	}
}

// TestCheckV2Agent grades an ACP v2 agent in both versions it speaks...
// acptest's v2 agent speaks only v2, so only v2 is graded.
func TestCheckV2Agent(t *testing.T) {
	o := goodOptions()
	o.Version = 2
	o.Modes = nil
	o.ConfigOptions = nil // acptest keys them by v1's "id"; v2 names it configId
	withBackground(o, true)
	opts := goodPrompts
	opts.Prompts.Background = "background please"
	rep := gradeAgent(t, acptest.New(o), &opts)
	if want := []int{2}; len(rep.Versions) != 1 || rep.Versions[0] != 2 {
		t.Fatalf("graded %v, want %v", rep.Versions, want)
	}
	for _, res := range rep.Results {
		t.Logf("v%d %-24s %-13s %s", res.Protocol, res.ID, res.Status, res.Message)
		if res.Status == conformance.Fail || res.Status == conformance.Warn {
			t.Errorf("%s: %s: %s %s", res.ID, res.Status, res.Message, res.Evidence)
		}
	}
	for _, id := range []string{"v2.prompt-accepted", "v2.user-message", "v2.state-lifecycle", "v2.message-ids", "cancel.stop-reason", "prompt.stop-reason", "init.version", "permission.request",
		"session.list", "session.resume", "session.close", "v2.resume-replay", "v2.resume-ids", "v2.resume-state", "v2.close", "v2.background", "v2.background-ends"} {
		if res, _ := rep.Result(id, 2); res.Status != conformance.Pass {
			t.Errorf("%s: %s (%s), want pass", id, res.Status, res.Message)
		}
	}
}

// TestCheckRecordingBounded: a connection carrying more than
// MaxRecordedBytes (lowered here) is graded on what was kept, warns
// jsonrpc.lines, and the run completes.
func TestCheckRecordingBounded(t *testing.T) {
	defer conformance.SetMaxRecorded(64 << 10)()
	o := goodOptions()
	o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
		if strings.HasPrefix(t.PromptText(), "flood") {
			t.Stream(200, strings.Repeat("x", 1000)) // 200 KB of updates
		}
		return goodTurn(t)
	}
	opts := goodPrompts
	opts.Prompts.Hello = "flood"
	rep := gradeAgent(t, acptest.New(o), &opts)
	res, _ := rep.Result("jsonrpc.lines", 1)
	if res.Status != conformance.Warn || !strings.Contains(res.Message, "not graded") {
		t.Fatalf("jsonrpc.lines: %s (%s), want a warning that the rest went ungraded", res.Status, res.Message)
	}
}

// TestCheckHungAfterInitialize: an agent that answers initialize but
// never session/new fails session.new; after two scenarios run out the
// rest are not run, and say so.
func TestCheckHungAfterInitialize(t *testing.T) {
	o := goodOptions()
	o.Methods = map[string]acptest.MethodFunc{"session/new": acptest.NeverAnswer}
	rep := gradeAgent(t, acptest.New(o), &conformance.Options{ScenarioTimeout: 300 * time.Millisecond})
	if res, _ := rep.Result("session.new", 1); res.Status != conformance.Fail || !strings.Contains(res.Message, "no answer within") {
		t.Errorf("session.new: %s (%s), want a failure naming the deadline", res.Status, res.Message)
	}
	if res, _ := rep.Result("session.load", 1); res.Status != conformance.NotExercised || !strings.Contains(res.Message, "not run: two scenarios ran out") {
		t.Errorf("session.load: %s (%s), want not run", res.Status, res.Message)
	}
	if res, _ := rep.Result("jsonrpc.method-not-found", 1); res.Status != conformance.Pass {
		t.Errorf("jsonrpc.method-not-found: %s (%s): the probes scenario should still have run", res.Status, res.Message)
	}
}
