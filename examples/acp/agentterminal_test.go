package main

import (
	"os"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// codex-acp 2.6.0 itself, replayed from the e2e recording: it runs its
	// command in a terminal of its own and reports the output and exit
	// status only in _meta (terminal_output_delta, terminal_exit).
	acptest.Register("codex-allow-replay", func() *acptest.Agent {
		f, err := os.Open("../../testdata/transcripts/e2e-codex-allow.jsonl")
		if err != nil {
			panic(err)
		}
		defer f.Close()
		a, err := acptest.NewReplay(f)
		if err != nil {
			panic(err)
		}
		return a
	})
	// Output in several deltas, with escapes to sanitize, a last line
	// without its newline, and an exit reported apart from the status.
	acptest.Register("agent-terminal", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "c", "title": "make", "kind": "execute", "status": "in_progress",
				"content": []any{map[string]any{"type": "terminal", "terminalId": "c"}},
				"_meta":   map[string]any{"terminal_info": map[string]any{"terminal_id": "c", "cwd": "/w"}}})
			for _, d := range []string{"one\ntw", "o\n\x1b[31mred\x1b[0m\n", "no newline"} {
				t.Update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c",
					"_meta": map[string]any{"terminal_output_delta": map[string]any{"terminal_id": "c", "data": d}}})
			}
			t.Update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c",
				"_meta": map[string]any{"terminal_exit": map[string]any{"terminal_id": "c", "exit_code": 2, "signal": nil}}})
			t.Update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed"})
			return "end_turn", nil
		}})
	})
}

// TestAgentTerminalOutputReplay: the acp command shows the output and exit
// status of a command codex-acp 2.6.0 ran (replayed from its recording);
// before, text mode showed only "completed". --json is unchanged but for
// the new agentTerminal field of the tool call's state.
func TestAgentTerminalOutputReplay(t *testing.T) {
	args := append([]string{"--permission", "allow", "-p", "create made.txt"}, agentArgs(t, "codex-allow-replay")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	want := "[tool] echo made > made.txt && echo created (execute) in_progress\n"
	for _, w := range []string{want, "  created\n[tool] echo made > made.txt && echo created: completed (exit 0)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("text output lacks %q:\n%s", w, out)
		}
	}

	out, errOut, code = runCLI(t, "", append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s%s", code, out, errOut)
	}
	evs := parseEvents(t, out)
	end := evs[len(evs)-1]
	tcs, _ := end["state"].(map[string]any)["toolCalls"].([]any)
	if len(tcs) != 1 {
		t.Fatalf("turn_end tool calls %v", tcs)
	}
	at, _ := tcs[0].(map[string]any)["agentTerminal"].(map[string]any)
	if at["output"] != "created\n" || at["exitCode"] != float64(0) || at["exited"] != true || at["terminalId"] != "call_make" {
		t.Errorf("turn_end agentTerminal = %v", at)
	}
}

// TestAgentTerminalOutputText: output arriving in pieces is printed as it
// comes, indented line by line, sanitized; the exit shows once, on its own
// line when it comes without a status.
func TestAgentTerminalOutputText(t *testing.T) {
	out, errOut, code := runCLI(t, "", append([]string{"-p", "go"}, agentArgs(t, "agent-terminal")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	want := "[tool] make (execute) in_progress\n" +
		"  one\n  two\n  \\x1b[31mred\\x1b[0m\n  no newline\n" +
		"[tool] make: exit 2\n" +
		"[tool] make: failed\n"
	if !strings.Contains(out, want) {
		t.Errorf("text output lacks\n%s\ngot:\n%s", want, out)
	}
}
