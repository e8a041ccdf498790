package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// hostile is what a hostile agent puts in every string it chooses: it
// would hide "rm -rf /" behind "ls -la" (carriage return, erase line),
// write the clipboard (OSC 52), retitle the window (OSC 0), clear the
// screen, send a C1 CSI, reverse the text (U+202E), and end in DEL, NUL and
// a string terminator.
const hostile = "rm -rf /\r\x1b[Kls -la\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\u009b2J\u202etxt.exe\x7f\x00\x1b\\"

// hostileShown is how the start of hostile reads once escaped.
const hostileShown = `rm -rf /\r\x1b[Kls -la\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\u009b2J\u202etxt.exe\x7f\x00\x1b\`

func init() {
	acptest.Register("hostile", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			AgentInfo:    map[string]any{"name": "name:" + hostile, "title": "title:" + hostile, "version": "1"},
			Capabilities: map[string]any{"loadSession": true, "sessionCapabilities": map[string]any{"list": map[string]any{}}},
			Sessions:     []any{map[string]any{"sessionId": "old", "cwd": "/w", "title": "list:" + hostile, "updatedAt": "when:" + hostile}},
			History: map[string][]any{"old": {
				acptest.UserMessage("", "replayed-user:"+hostile),
				acptest.AgentMessage("", "replayed-agent:"+hostile),
			}},
			Modes: map[string]any{"currentModeId": "mode:" + hostile, "availableModes": []any{
				map[string]any{"id": "mode:" + hostile, "name": "M"},
			}},
			ConfigOptions: []any{map[string]any{"id": "cfg:" + hostile, "name": "C", "type": "select", "currentValue": "val:" + hostile,
				"options": []any{map[string]any{"value": "val:" + hostile, "name": "V"}}}},
			OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
				switch t.PromptText() {
				case "fail":
					return "", &acptest.Error{Code: -32603, Message: "error:" + hostile}
				case "die":
					fmt.Fprintln(os.Stderr, "stderr:"+hostile+"\xff")
					os.Exit(3)
				}
				fmt.Fprintln(os.Stderr, "live:"+hostile)
				t.Commands(acptest.SlashCommand{Name: "cmd:" + hostile})
				t.Think("thought:" + hostile)
				t.Say("message:" + hostile + "\n\tsecond line")
				t.Plan(schema.PlanEntry{Content: "plan:" + hostile})
				t.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "tool:" + hostile, Kind: "kind:" + hostile, Status: "pending"})
				t.RequestPermission(map[string]any{"toolCallId": "t1", "title": "ask:" + hostile,
					"content": []any{acptest.Diff("path:"+hostile, nil, "new:"+hostile)}},
					[]any{
						map[string]any{"optionId": "allow", "name": "yes:" + hostile, "kind": "allow_once"},
						map[string]any{"optionId": "no:" + hostile, "name": "no", "kind": "reject_once"},
					})
				t.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: "status:" + hostile})
				t.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: "failed", Content: []any{acptest.ToolContent(acptest.Text("why:" + hostile))}})
				t.Update(map[string]any{"sessionUpdate": "kind:" + hostile})
				t.Mode("newmode:" + hostile)
				return schema.StopReason("stop:" + hostile), nil
			},
		})
	})
}

// rawControls returns the first control character, DEL, C1 control or
// bidirectional override in s that is not a newline or a tab, and whether
// there is one.
func rawControls(s string) (string, bool) {
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Sprintf("byte %#x at %d", s[i], i), true
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			return fmt.Sprintf("%U at %d: %q", r, i, s[max(0, i-20):min(len(s), i+20)]), true
		}
	}
	return "", false
}

// Every text-mode output path, fed the hostile string by the agent: the
// agent's name, session list, replayed history, messages, thoughts, plan,
// tool titles, kinds, statuses and failures, the permission line, slash commands,
// modes, config options, diagnostics, the stop reason, an error reply, the
// live stderr, and the dead agent's stderr tail. Nothing reaches stdout or
// stderr but printable text, newlines and tabs; every string shows escaped.
func TestHostileStringsEscapedInText(t *testing.T) {
	agent := agentArgs(t, "hostile")
	var all strings.Builder
	check := func(name string, want []string, args ...string) {
		t.Helper()
		stdin := ""
		if len(args) > 0 && strings.HasPrefix(args[0], "stdin=") {
			stdin, args = strings.TrimPrefix(args[0], "stdin="), args[1:]
		}
		out, errOut, _ := runCLI(t, stdin, append(args, agent...)...)
		got := out + errOut
		all.WriteString(got)
		if what, ok := rawControls(got); ok {
			t.Errorf("%s: a raw control reached the output (%s):\n%s", name, what, got)
		}
		for _, w := range want {
			if !strings.Contains(got, w+hostileShown) {
				t.Errorf("%s: output lacks %q escaped:\n%s", name, w+"…", got)
			}
		}
	}
	check("--list", []string{"list:", "when:"}, "--list")
	check("--session", []string{"replayed-user:", "replayed-agent:"}, "--session", "old", "-p", "fail")
	check("interactive", []string{
		"title:", "thought:", "message:", "plan:", "tool:", "kind:", "ask:", "no:", "status:",
		"why:", "newmode:", "stop:", "cmd:", "mode:", "cfg:", "val:", "error:", "live:", "stderr:",
	}, "stdin=go\n/help\n/mode\n/config\nfail\ndie\n", "--diagnostics", "--stderr")
	if !strings.Contains(all.String(), `\xff`) {
		t.Error("a byte that is not UTF-8 is not shown as \\xff")
	}
}

// --json is unchanged: the agent's strings come out exactly as sent,
// escaped by JSON alone, so no raw control reaches the output either.
func TestHostileStringsJSONUnchanged(t *testing.T) {
	args := append([]string{"--json", "--permission", "allow", "-p", "go"}, agentArgs(t, "hostile")...)
	out, errOut, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, c := range out {
		if c < 0x20 && c != '\n' {
			t.Fatalf("a raw control character %U in --json output", c)
		}
	}
	var sawTitle, sawText bool
	for _, e := range parseEvents(t, out) {
		switch e["event"] {
		case "permission":
			sawTitle = e["title"] == "ask:"+hostile
		case "turn_end":
			st := e["state"].(map[string]any)
			msg := st["messages"].([]any)[0].(map[string]any)
			sawText = msg["text"] == "message:"+hostile+"\n\tsecond line"
			if e["stopReason"] != "stop:"+hostile {
				t.Errorf("stopReason %q", e["stopReason"])
			}
		}
	}
	if !sawTitle || !sawText {
		t.Errorf("the permission title (%v) or the message (%v) did not come through as sent:\n%s", sawTitle, sawText, out)
	}
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, text, line string }{
		{"plain", "plain", "plain"},
		{"a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"x\r\x1b[K", `x\r\x1b[K`, `x\r\x1b[K`},
		{"\x00\x7f", `\x00\x7f`, `\x00\x7f`},
		{"\u009b\u0085", `\u009b\u0085`, `\u009b\u0085`},
		{"é\u202eab\u2066", `é\u202eab\u2066`, `é\u202eab\u2066`},
		{"\xff\xc3", `\xff\xc3`, `\xff\xc3`},
		{"naïve 日本", "naïve 日本", "naïve 日本"},
	} {
		if got := cleanText(tc.in); got != tc.text {
			t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := cleanLine(tc.in); got != tc.line {
			t.Errorf("cleanLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

// A rune split between two writes of the live stderr is held back, not
// escaped as two bytes that are not UTF-8.
func TestCleanWriterSplitRune(t *testing.T) {
	var b strings.Builder
	w := &cleanWriter{w: &b, mu: new(sync.Mutex)}
	e := "é"
	w.Write([]byte("a" + e[:1]))
	w.Write([]byte(e[1:] + "\x1b"))
	w.Write([]byte{0xe6})
	w.flush()
	if got, want := b.String(), `aé\x1b\xe6`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
