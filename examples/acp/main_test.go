package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// cliMainEnv makes the test binary run the command itself (TestMain), so
// the pseudo-terminal test runs the real main loop in a real process. It is
// here, not with that Linux-only test, so TestMain builds everywhere.
const cliMainEnv = "ACP_CLI_MAIN"

// TestMain lets the test binary be every agent these tests need: the demo
// agent (as the real binary re-executes itself) and acptest agents.
func TestMain(m *testing.M) {
	if os.Getenv(demoEnv) != "" {
		main()
		os.Exit(0)
	}
	if os.Getenv(cliMainEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	registerTestAgents()
	acptest.MainIfAgent()
	// The built-in demo keeps its sessions in a directory of the tests',
	// not in the user's cache.
	dir, err := os.MkdirTemp("", "acp-demo-state")
	if err != nil {
		panic(err)
	}
	os.Setenv(demoStateEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs the command in-process and returns stdout, stderr and the
// exit status.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

type event map[string]any

func parseEvents(t *testing.T, out string) []event {
	t.Helper()
	var evs []event
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("a --json line is not JSON: %q", sc.Text())
		}
		evs = append(evs, e)
	}
	return evs
}

func kinds(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["event"].(string))
	}
	return out
}

// The README's first command: one turn against the demo agent, as NDJSON.
func TestJSONTurnAgainstDemo(t *testing.T) {
	out, errOut, code := runCLI(t, "", "--json", "--cwd", t.TempDir(), "-p", "hello")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	evs := parseEvents(t, out)
	ks := kinds(evs)
	if ks[0] != "session" || ks[len(ks)-1] != "turn_end" {
		t.Fatalf("events %v", ks)
	}
	if n := strings.Count(strings.Join(ks, " "), "turn_end"); n != 1 {
		t.Errorf("%d turn_end events", n)
	}
	var sawPerm bool
	for _, e := range evs[1 : len(evs)-1] {
		switch e["event"] {
		case "update":
			if e["sessionId"] != evs[0]["sessionId"] || e["update"].(map[string]any)["sessionUpdate"] == nil {
				t.Errorf("update event %v", e)
			}
		case "permission":
			sawPerm = true
			// Not a terminal: the default is reject.
			if e["outcome"].(map[string]any)["optionId"] != "reject" || e["toolCallId"] != "edit-1" {
				t.Errorf("permission event %v", e)
			}
		default:
			t.Errorf("unexpected event %v", e)
		}
	}
	if !sawPerm {
		t.Error("no permission event")
	}
	end := evs[len(evs)-1]
	if end["stopReason"] != "end_turn" {
		t.Errorf("turn_end %v", end)
	}
	st := end["state"].(map[string]any)
	msgs := st["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["messageId"] != "msg-1" || !strings.Contains(last["text"].(string), `You said: "hello"`) {
		t.Errorf("messages %v", msgs)
	}
	for _, key := range []string{"thoughts", "toolCalls", "plan"} {
		if _, ok := st[key].([]any); !ok {
			t.Errorf("state.%s is %v, want a list", key, st[key])
		}
	}
	tc := st["toolCalls"].([]any)[1].(map[string]any)
	for _, key := range []string{"toolCallId", "title", "kind", "status", "content"} {
		if _, ok := tc[key]; !ok {
			t.Errorf("tool call lacks %q: %v", key, tc)
		}
	}
}

// Several -p run several turns in one session; the human output streams
// the text and ends with the stop reason.
func TestHumanOutputSeveralTurns(t *testing.T) {
	out, errOut, code := runCLI(t, "", "--cwd", t.TempDir(), "-p", "first", "--prompt", "second")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	for _, want := range []string{`You said: "first"`, `You said: "second"`, "[tool] Read the workspace (read)", "(thinking)", "[plan]", "[permission] Write acp-demo.txt?: reject"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(errOut, "[end_turn]") != 2 || strings.Count(errOut, "ACP v1, session demo-") != 1 {
		t.Errorf("stderr:\n%s", errOut)
	}
	// The permission line follows the tool call it is about.
	if strings.Index(out, "[permission]") < strings.Index(out, "[tool] Write acp-demo.txt (edit)") {
		t.Errorf("permission printed before its tool call:\n%s", out)
	}
}

// --permission allow with --fs lets the demo agent write its file through
// fs/write_text_file, confined to --cwd.
func TestAllowWithFS(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runCLI(t, "", "--json", "--fs", "--permission", "allow", "--cwd", dir, "-p", "write it")
	if code != 0 {
		t.Fatalf("exit %d; %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "acp-demo.txt"))
	if err != nil || !strings.Contains(string(b), "Hello from the ACP demo") {
		t.Fatalf("file: %q, %v\n%s", b, err, out)
	}
}

// --cancel-after cancels the turn: it ends cancelled, with exit status 0.
func TestCancelAfter(t *testing.T) {
	out, errOut, code := runCLI(t, "", "--json", "--cancel-after", "100ms", "--cwd", t.TempDir(), "-p", "/slow")
	if code != 0 {
		t.Fatalf("exit %d; %s", code, errOut)
	}
	evs := parseEvents(t, out)
	end := evs[len(evs)-1]
	if end["event"] != "turn_end" || end["stopReason"] != "cancelled" || end["state"].(map[string]any)["cancelled"] != true {
		t.Fatalf("last event %v", end)
	}
}

// A failure prints an error event and exits non-zero.
func TestErrorEvent(t *testing.T) {
	out, _, code := runCLI(t, "", "--json", "-p", "x", "--", filepath.Join(t.TempDir(), "no-such-agent"))
	if code == 0 {
		t.Fatal("exit 0 for a missing agent")
	}
	evs := parseEvents(t, out)
	if len(evs) != 1 || evs[0]["event"] != "error" || !strings.Contains(fmt.Sprint(evs[0]["message"]), "no-such-agent") {
		t.Fatalf("events %v", evs)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--permission", "maybe"}, {"--config", "novalue"}, {"--nope"}} {
		if _, _, code := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// Interactive mode: prompts from stdin, /mode and /config from the session's
// state, agent slash commands passed through.
func TestInteractive(t *testing.T) {
	in := "hello\n/mode\n/mode code\n/mode nope\n/config model=demo-smart\n/echo hi there\n/bogus\n/quit\n"
	out, errOut, code := runCLI(t, in, "--cwd", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d; %s", code, errOut)
	}
	for _, want := range []string{"mode ask (available: ask, code)", "mode: code", `unknown mode "nope"`, "config: model=demo-smart", "unknown command /bogus"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, `You said: "hello"`) || !strings.Contains(out, "hi there") {
		t.Errorf("stdout:\n%s", out)
	}
}

// roundTrip turns a value into its JSON form as decoded into any, the way
// parseEvents sees the command's output.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The SDK's errors start with "acp: ", and so does every line the command
// prints about them: once, not twice.
func TestErrorLineHasOnePrefix(t *testing.T) {
	_, errOut, _ := runCLI(t, "fail\n", agentArgs(t, "hostile")...)
	if !strings.Contains(errOut, "\nacp: session/prompt: agent error") || strings.Contains(errOut, "acp: acp:") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// A failed tool call says why on its status line: with --fs off the
// demo's allowed write fails, and a rejected one fails too.
func TestFailedToolCallShowsWhy(t *testing.T) {
	for _, tc := range []struct{ permission, want string }{
		{"allow", "[tool] Write acp-demo.txt: failed: Skipped: the client does not offer fs/write_text_file.\n"},
		{"reject", "[tool] Write acp-demo.txt: failed: Rejected by the user.\n"},
	} {
		out, errOut, code := runCLI(t, "", "--permission", tc.permission, "--cwd", t.TempDir(), "-p", "write it")
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("--permission %s: exit %d, stdout lacks %q:\n%s%s", tc.permission, code, tc.want, out, errOut)
		}
	}
}

// The reason shown for a failed tool call: the first line of its text,
// cut at maxReason runes, escaped.
func TestFailureReason(t *testing.T) {
	long := strings.Repeat("é", maxReason+5)
	for _, tc := range []struct {
		status schema.ToolCallStatus
		text   string
		want   string
	}{
		{schema.ToolCallStatusFailed, "no such file\nstack trace", ": no such file …"},
		{schema.ToolCallStatusFailed, long, ": " + long[:2*maxReason] + " …"},
		{schema.ToolCallStatusFailed, "\x1b]52;c;eA==\x07", `: \x1b]52;c;eA==\x07`},
		{schema.ToolCallStatusFailed, "", ""},
		{schema.ToolCallStatusCompleted, "done", ""},
	} {
		content := []schema.ToolCallContent{&schema.ToolContent{Content: schema.Text(tc.text)}}
		if got := failure(tc.status, content); got != tc.want {
			t.Errorf("failure(%s, %q) = %q, want %q", tc.status, tc.text, got, tc.want)
		}
	}
}

// --help shows examples, the interactive commands and the exit statuses,
// as well as the flags, and exits 0.
func TestHelpText(t *testing.T) {
	_, errOut, code := runCLI(t, "", "--help")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"usage: acp", "examples:", `acp -p "hello" -- codex-acp`, "-permission",
		"interactive commands:", "/mode [ID]", "/config [ID=VALUE]", "/quit", "Ctrl-C",
		"exit status:", "\n  0 ", "\n  1 ", "\n  2 ", "\n  130 ", "143 SIGTERM",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("--help lacks %q:\n%s", want, errOut)
		}
	}
}
