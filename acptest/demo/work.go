package demo

// The demo's ordinary turn: think, plan, read, propose an edit, ask,
// write (when the client can), answer, report usage and a title.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func work(t *acptest.Turn, text, msgID string) (schema.StopReason, error) {
	n := t.Number()
	readID, editID := fmt.Sprintf("read-%d", n), fmt.Sprintf("edit-%d", n)
	cwd := t.Cwd()
	path := filepath.Join(cwd, FileName)
	// written says whether the file was written: a write the client
	// could not do, or the user rejected, stays unticked in the plan.
	written := false
	steps := func(done int) []schema.PlanEntry {
		e := []schema.PlanEntry{
			{Content: "Read the workspace", Priority: "high"},
			{Content: "Write " + FileName, Priority: "medium"},
			{Content: "Answer", Priority: "low"},
		}
		for i := range e {
			switch {
			case i == 1 && done > 1 && !written:
				e[i].Status = "pending"
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
		why, hint := "Skipped: the client does not offer fs/write_text_file.", "with the acp command, run it with --fs"
		if t.ProtocolVersion() >= 2 {
			why, hint = "Skipped: ACP v2 has no fs/write_text_file for the client to offer.", "ACP v2 has none; with the acp command, run it with --protocol 1 --fs"
		}
		t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "failed",
			Content: []any{acptest.ToolContent(acptest.Text(why))}})
		t.SayID(msgID+"-skipped", "I did not write "+FileName+": you allowed it, but the client does not let me write files ("+hint+"). ")
	default:
		if err := t.WriteTextFile(path, content); err != nil {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: editID, Status: "failed",
				Content: []any{acptest.ToolContent(acptest.Text("Write failed: " + err.Error()))}})
			break
		}
		written = true
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
