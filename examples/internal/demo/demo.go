// Package demo is the demo agent that ships with the SDK, so that examples
// and the acp command work offline: a small, deterministic agent built on
// acptest that exercises most of the protocol on every prompt.
//
// On an ordinary prompt it thinks briefly, shows a plan, reads the
// workspace (a read tool call), proposes writing acp-demo.txt into the
// session's cwd (an edit tool call with a diff, after asking permission in
// the "ask" mode; the "code" mode edits without asking), writes it with
// fs/write_text_file when the client allowed it and advertised
// fs.writeTextFile, then streams an answer that echoes the prompt, and
// reports usage and (on the first prompt) a session title.
//
// Slash commands: /help, /echo TEXT, and /slow, which streams 50 chunks
// 20 ms apart so that cancellation can be shown. Every step honours
// session/cancel: the turn ends with stopReason "cancelled" and its open
// tool calls are marked failed (v1 has no cancelled status).
package demo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// FileName is the file the demo proposes to write into the session's cwd.
const FileName = "acp-demo.txt"

var modes = map[string]any{
	"currentModeId": "ask",
	"availableModes": []any{
		map[string]any{"id": "ask", "name": "Ask", "description": "Asks before editing files"},
		map[string]any{"id": "code", "name": "Code", "description": "Edits files without asking"},
	},
}

var configOptions = []any{
	map[string]any{
		"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "demo-fast",
		"options": []any{
			map[string]any{"value": "demo-fast", "name": "Demo Fast", "description": "Answers tersely"},
			map[string]any{"value": "demo-smart", "name": "Demo Smart", "description": "Answers at more length"},
		},
	},
}

var commands = []acptest.SlashCommand{
	{Name: "help", Description: "Show what the demo agent can do"},
	{Name: "echo", Description: "Repeat the text back", Hint: "text to echo"},
	{Name: "slow", Description: "Stream slowly, to try cancelling"},
}

const helpText = "I am the ACP demo agent. Send any text and I will think, plan, read the workspace, " +
	"propose writing " + FileName + " and echo you. Commands: /help, /echo TEXT, /slow (streams slowly; try cancelling)."

// Agent returns a new demo agent. Serve it over stdin/stdout (see
// examples/demoagent), in-process with Pipe, or re-execute a test binary
// with acptest.Register.
func Agent() *acptest.Agent {
	return acptest.New(&acptest.Options{
		AgentInfo:     map[string]any{"name": "acp-demo", "title": "ACP demo agent", "version": "0.1.0"},
		Modes:         modes,
		ConfigOptions: configOptions,
		OnNewSession:  func(s *acptest.Session) { s.Commands(commands...) },
		OnLoadSession: func(s *acptest.Session) { s.Commands(commands...) },
		OnPrompt:      turn,
	})
}

func turn(t *acptest.Turn) (schema.StopReason, error) {
	text := strings.TrimSpace(t.PromptText())
	msgID := fmt.Sprintf("msg-%d", t.Number())
	switch {
	case text == "/slow":
		return slow(t, msgID)
	case text == "/help":
		return "end_turn", t.SayID(msgID, helpText)
	case text == "/echo" || strings.HasPrefix(text, "/echo "):
		return "end_turn", t.SayID(msgID, strings.TrimSpace(strings.TrimPrefix(text, "/echo")))
	}
	return work(t, text, msgID)
}

// slow streams 50 chunks 20 ms apart, stopping at a cancel.
func slow(t *acptest.Turn, msgID string) (schema.StopReason, error) {
	for i := range 50 {
		if !t.Pause(20 * time.Millisecond) {
			return "cancelled", nil
		}
		if err := t.SayID(msgID, fmt.Sprintf("chunk %d of 50. ", i+1)); err != nil {
			return "", err
		}
	}
	return "end_turn", nil
}

func work(t *acptest.Turn, text, msgID string) (schema.StopReason, error) {
	n := t.Number()
	readID, editID := fmt.Sprintf("read-%d", n), fmt.Sprintf("edit-%d", n)
	cwd := t.Cwd()
	path := filepath.Join(cwd, FileName)
	steps := func(done int) []schema.PlanEntry {
		e := []schema.PlanEntry{
			{Content: "Read the workspace", Priority: "high"},
			{Content: "Write " + FileName, Priority: "medium"},
			{Content: "Answer", Priority: "low"},
		}
		for i := range e {
			switch {
			case i < done:
				e[i].Status = "completed"
			case i == done:
				e[i].Status = "in_progress"
			}
		}
		return e
	}
	// cancelled ends the turn the way the spec asks: open tool calls are
	// marked finished and the stop reason is "cancelled", not an error.
	cancelled := func(open ...string) (schema.StopReason, error) {
		for _, id := range open {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: id, Status: "failed",
				Content: []any{acptest.ToolContent(acptest.Text("Cancelled."))}})
		}
		return "cancelled", nil
	}

	t.ThinkID("thought-"+itoa(n), "The user wrote "+quote(text)+". ")
	t.ThinkID("thought-"+itoa(n), "I will read the workspace, propose a small file, and answer.")
	t.Plan(steps(0)...)
	if t.IsCancelled() {
		return cancelled()
	}

	t.ToolCall(acptest.ToolCallSpec{ID: readID, Title: "Read the workspace", Kind: "read", Status: "in_progress",
		Locations: []any{acptest.Location(cwd, nil)}, RawInput: map[string]any{"path": cwd}})
	if t.IsCancelled() {
		return cancelled(readID)
	}
	t.UpdateToolCall(acptest.ToolCallSpec{ID: readID, Status: "completed",
		Content: []any{acptest.ToolContent(acptest.Text("The workspace at " + cwd + " is ready for " + FileName + "."))}})
	t.Plan(steps(1)...)

	content := "Hello from the ACP demo agent.\nYou said: " + text + "\n"
	firstLine := uint32(1)
	t.ToolCall(acptest.ToolCallSpec{ID: editID, Title: "Write " + FileName, Kind: "edit", Status: "pending",
		Content: []any{acptest.Diff(path, nil, content)}, Locations: []any{acptest.Location(path, &firstLine)}})
	if t.IsCancelled() {
		return cancelled(editID)
	}
	if t.CurrentMode() != "code" {
		out, err := t.RequestPermission(acptest.ToolCallSpec{ID: editID, Title: "Write " + FileName + "?"}, []schema.PermissionOption{
			{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
			{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
		})
		if err != nil {
			return "", err
		}
		choice, wasCancelled, err := acptest.ParseOutcome(out)
		if wasCancelled || t.IsCancelled() {
			return cancelled(editID)
		}
		if err != nil || choice != "allow" {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "failed",
				Content: []any{acptest.ToolContent(acptest.Text("Rejected by the user."))}})
			t.SayID(msgID+"-rejected", "Understood: I did not write "+FileName+". ")
			goto answer
		}
	}
	t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "in_progress"})
	switch {
	case !t.ClientCan("fs", "writeTextFile"):
		t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "failed",
			Content: []any{acptest.ToolContent(acptest.Text("Skipped: the client does not offer fs/write_text_file."))}})
	default:
		if err := t.WriteTextFile(path, content); err != nil {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "failed",
				Content: []any{acptest.ToolContent(acptest.Text("Write failed: " + err.Error()))}})
			break
		}
		t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "completed",
			Content: []any{acptest.Diff(path, nil, content)}})
	}

answer:
	if t.IsCancelled() {
		return cancelled()
	}
	t.Plan(steps(2)...)
	for _, chunk := range answerChunks(text, t) {
		if t.IsCancelled() {
			return cancelled()
		}
		if err := t.SayID(msgID, chunk); err != nil {
			return "", err
		}
	}
	t.Plan(steps(3)...)
	t.Usage(uint64(1000*n+len(text)), 200000)
	if n == 1 {
		t.SessionInfo(title(text))
	}
	return "end_turn", nil
}

// answerChunks splits the answer into word-sized chunks, as a model
// streams tokens.
func answerChunks(text string, t *acptest.Turn) []string {
	answer := "You said: " + quote(text) + "."
	if t.ConfigValue("model") == "demo-smart" {
		answer += " That is " + itoa(utf8.RuneCountInString(text)) + " characters, in " + t.CurrentMode() + " mode."
	}
	return strings.SplitAfter(answer, " ")
}

// title is the session title derived from the first prompt.
func title(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) > 40 {
		text = string([]rune(text)[:40]) + "…"
	}
	if text == "" {
		return "Demo session"
	}
	return text
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string { return fmt.Sprint(n) }
