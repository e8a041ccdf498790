package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const envKey = "ACP_CLI_TEST_KEY"

var authMethods = []any{
	map[string]any{"id": "oauth", "name": "Log in", "description": "Browser login"},
	map[string]any{"type": "env_var", "id": "key", "name": "Use " + envKey, "vars": []any{map[string]any{"name": envKey}}},
}

// registerTestAgents registers the acptest agents the auth, session and
// trace tests run as subprocesses (the test binary re-executed).
func registerTestAgents() {
	acptest.Register("auth", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			RequireAuth: true,
			AuthMethods: authMethods,
			AcceptAuth: func(id string) error {
				switch {
				case id == "oauth":
					return nil
				case id == "key" && os.Getenv(envKey) != "":
					return nil
				}
				return &acptest.Error{Code: -32603, Message: "cannot authenticate with " + id}
			},
		})
	})
	acptest.Register("auth-terminal", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			RequireAuth: true,
			AuthMethods: []any{map[string]any{"type": "terminal", "id": "login", "name": "Log in in a terminal", "args": []any{"--login"}, "env": map[string]any{"AGENT_LOGIN": "1"}}},
		})
	})
	sessions := []any{
		map[string]any{"sessionId": "a", "cwd": "/w", "title": "First"},
		map[string]any{"sessionId": "b", "cwd": "/w", "title": "Second"},
		map[string]any{"sessionId": "c", "cwd": "/w", "title": "Third"},
	}
	history := map[string][]any{"a": {
		acptest.UserMessage("", "what is 2+2?"),
		acptest.AgentMessage("", "4"),
	}}
	acptest.Register("sessions", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			Sessions: sessions, PageSize: 2, History: history,
			Modes:         map[string]any{"currentModeId": "ask", "availableModes": []any{map[string]any{"id": "ask", "name": "Ask"}, map[string]any{"id": "code", "name": "Code"}}},
			ConfigOptions: []any{map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "a", "options": []any{map[string]any{"value": "a", "name": "A"}, map[string]any{"value": "b", "name": "B"}}}},
		})
	})
	acptest.Register("load-only", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			Capabilities: map[string]any{"loadSession": true, "sessionCapabilities": map[string]any{"list": map[string]any{}}},
			Sessions:     sessions, History: history,
		})
	})
	acptest.Register("load-long", func() *acptest.Agent {
		// A replay longer than twice the library's default
		// Limits.OutsideLog, built here, in the one agent process that
		// replays it: registerTestAgents runs in every process of the
		// test binary, each agent this package starts among them, and
		// 140 000 updates cost 0.3 s there (0.7 s under -race).
		long := make([]any, longReplay)
		for i := range long {
			long[i] = acptest.AgentMessage("", "x")
		}
		return acptest.New(&acptest.Options{
			Capabilities: map[string]any{"loadSession": true},
			Sessions:     sessions, History: map[string][]any{"a": long},
		})
	})
	acptest.Register("toolcancel", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.SayID("m1", "editing ")
			t.Update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit a.go", "kind": "edit", "status": "pending"})
			t.RequestPermission(map[string]any{"toolCallId": "e1", "title": "Allow editing a.go?",
				"content": []any{map[string]any{"type": "diff", "path": "/w/a.go", "newText": "package a\n"}}}, nil)
			t.Update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "e2", "title": "Run tests", "kind": "execute", "status": "pending"})
			<-t.Cancelled()
			t.SayID("m1", "stopped")
			return "cancelled", nil
		}})
	})
	acptest.Register("stubborn", func() *acptest.Agent {
		return acptest.New(&acptest.Options{IgnoreStdinEOF: true})
	})
}

// agentArgs is the "-- AGENT_CMD" part that runs a registered agent, and
// sets the environment variable that selects it.
func agentArgs(t *testing.T, name string) []string {
	t.Setenv(acptest.EnvAgent, name)
	cmd := acptest.Command(name)
	return append([]string{"--"}, cmd.Args...)
}

// childAgentArgs is agentArgs for an agent started by the command run as a
// child process (cliMainEnv set): the agent must not inherit cliMainEnv,
// which would make it run the command instead (and exit on its flags).
// Unix: it runs the agent through env -u.
func childAgentArgs(t *testing.T, name string) []string {
	return append([]string{"--", "env", "-u", cliMainEnv}, agentArgs(t, name)[1:]...)
}

func TestAuthEnvVarAutoSelected(t *testing.T) {
	t.Setenv(envKey, "secret")
	args := append([]string{"--json", "-p", "hi"}, agentArgs(t, "auth")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	evs := parseEvents(t, out)
	if evs[0]["event"] != "note" || !strings.Contains(evs[0]["message"].(string), "authenticating with key") {
		t.Errorf("first event %v", evs[0])
	}
	if evs[len(evs)-1]["event"] != "turn_end" {
		t.Errorf("events %v", kinds(evs))
	}
}

func TestAuthFlag(t *testing.T) {
	args := append([]string{"--json", "--auth", "oauth", "-p", "hi"}, agentArgs(t, "auth")...)
	if out, errOut, code := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

// Without a usable method the command fails and says what each method
// needs.
func TestAuthListsMethods(t *testing.T) {
	t.Setenv(envKey, "")
	args := append([]string{"-p", "hi"}, agentArgs(t, "auth")...)
	_, errOut, code := runCLI(t, "", args...)
	if code == 0 {
		t.Fatal("exit 0 without authentication")
	}
	for _, want := range []string{"requires authentication", "--auth METHOD_ID", "oauth (Log in): handled by the agent", "key (Use " + envKey + "): set " + envKey} {
		if !strings.Contains(errOut, want) {
			t.Errorf("error lacks %q:\n%s", want, errOut)
		}
	}
}

// For a terminal method the error gives the exact login command: the
// agent's own command with the method's args, and its env.
func TestAuthTerminalLoginCommand(t *testing.T) {
	args := append([]string{"-p", "hi"}, agentArgs(t, "auth-terminal")...)
	_, errOut, code := runCLI(t, "", args...)
	if code == 0 {
		t.Fatal("exit 0 without authentication")
	}
	want := "login: " + shellQuote(append(acptest.Command("auth-terminal").Args, "--login")) + " [AGENT_LOGIN=1]"
	if !strings.Contains(errOut, want) {
		t.Errorf("error lacks %q:\n%s", want, errOut)
	}
}

func TestListEveryPage(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--list"}, agentArgs(t, "sessions")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		ids = append(ids, strings.Fields(l)[0])
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("listed (-want +got):\n%s\n%s", diff, out)
	}
}

// --session resumes when the agent offers it and loads (printing the
// replayed history) when it does not.
func TestSessionResumeVersusLoad(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--json", "--session", "a", "-p", "more"}, agentArgs(t, "sessions")...)...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	if evs[0]["sessionId"] != "a" {
		t.Errorf("resume used session %v", evs[0])
	}
	for _, e := range evs {
		if e["replay"] == true {
			t.Errorf("resume printed history: %v", e)
		}
	}

	out, errOut, code = runCLI(t, "", append([]string{"--session", "a", "-p", "more"}, agentArgs(t, "load-only")...)...)
	if code != 0 {
		t.Fatalf("load: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "> what is 2+2?") || !strings.Contains(out, "4") || !strings.Contains(errOut, "history above") {
		t.Errorf("load did not print the history:\n%s\n%s", out, errOut)
	}
}

const longReplay = 140_000

// --session prints every replayed update, also of a replay longer than a
// long-running host keeps by default (the command raises
// Limits.OutsideLog).
func TestSessionLoadPrintsLongHistory(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"--json", "--session", "a", "-p", "more"}, agentArgs(t, "load-long")...)...)
	if code != 0 {
		t.Fatalf("load: exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, `"replay":true`); n != longReplay {
		t.Errorf("printed %d replayed updates, want %d", n, longReplay)
	}
}

func TestModeAndConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "plan"}, `unknown mode "plan" (valid: ask, code)`},
		{[]string{"--config", "model=c"}, `config option "model" has no value "c" (valid: [a b])`},
		{[]string{"--config", "speed=fast"}, `unknown config option "speed" (valid: [model])`},
	} {
		args := append(append([]string{"-p", "hi"}, tc.args...), agentArgs(t, "sessions")...)
		_, errOut, code := runCLI(t, "", args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %s", tc.args, code, errOut)
		}
	}
	args := append([]string{"--json", "--mode", "code", "--config", "model=b", "-p", "hi"}, agentArgs(t, "sessions")...)
	if _, errOut, code := runCLI(t, "", args...); code != 0 {
		t.Errorf("valid settings: exit %d: %s", code, errOut)
	}
}

// A trace written by one run, replayed by acptest, gives the same folded
// state.
func TestTraceReplays(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	dir := t.TempDir()
	out, errOut, code := runCLI(t, "", "--json", "--trace", trace, "--cwd", dir, "-p", "trace me")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	want := evs[len(evs)-1]["state"]

	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	agent, err := acptest.NewReplay(f)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	r, w := agent.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("trace me"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	got := roundTrip(t, turn.State())
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("replayed state (-run +replay):\n%s", diff)
	}
}

// The agent is shut down within the grace periods even when it ignores
// stdin EOF.
func TestShutdownStubbornAgent(t *testing.T) {
	args := append([]string{"--json", "-p", "hi"}, agentArgs(t, "stubborn")...)
	start := time.Now()
	if _, errOut, code := runCLI(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("took %v; the graces total 3s", d)
	}
}

func init() {
	acptest.Register("odd-update", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Update(map[string]any{"sessionUpdate": "future_kind", "x": 1})
			t.Say("hi")
			return "end_turn", nil
		}})
	})
}

// --diagnostics reports what the client tolerated: as an event with --json,
// on stderr otherwise; without it the output is what it always was.
func TestDiagnosticsFlag(t *testing.T) {
	diagEvents := func(out string) []event {
		var ds []event
		for _, e := range parseEvents(t, out) {
			if e["event"] == "diagnostic" {
				ds = append(ds, e)
			}
		}
		return ds
	}
	out, errOut, code := runCLI(t, "", append([]string{"--json", "--diagnostics", "-p", "go"}, agentArgs(t, "odd-update")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ds := diagEvents(out)
	if len(ds) != 1 || ds[0]["kind"] != "unknown_update" || !strings.Contains(ds[0]["message"].(string), "future_kind") {
		t.Errorf("diagnostic events %v, want one unknown_update naming future_kind", ds)
	}

	out, _, _ = runCLI(t, "", append([]string{"--json", "-p", "go"}, agentArgs(t, "odd-update")...)...)
	if ds := diagEvents(out); len(ds) != 0 {
		t.Errorf("diagnostic events without --diagnostics: %v", ds)
	}

	out, errOut, code = runCLI(t, "", append([]string{"--diagnostics", "-p", "go"}, agentArgs(t, "odd-update")...)...)
	if code != 0 || !strings.Contains(errOut, "acp: unknown_update: ") || !strings.Contains(out, "hi") {
		t.Errorf("text mode: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
