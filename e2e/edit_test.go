package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// edit is the model's tool call that replaces "world" by "there" in
// greet.txt.
func edit(ag agent, r *run, id string) *ToolUse {
	if ag.name == "codex" {
		patch := "*** Begin Patch\n*** Update File: greet.txt\n@@\n-hello world\n+hello there\n*** End Patch\n"
		return &ToolUse{ID: id, Name: "exec_command", Args: map[string]any{"cmd": "apply_patch <<'EOF'\n" + patch + "EOF\n"}}
	}
	return &ToolUse{ID: id, Name: "Edit", Args: map[string]any{"file_path": r.path("greet.txt"), "old_string": "hello world", "new_string": "hello there"}}
}

// diffOf returns the first diff among a tool call's content.
func diffOf(content []schema.ToolCallContent) *schema.DiffContent {
	for _, c := range content {
		if d, ok := c.(*schema.DiffContent); ok {
			return d
		}
	}
	return nil
}

// TestEditDiff: a file edit's diff reaches the permission request and the
// folded tool call, and the edit lands on disk after allow.
func TestEditDiff(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		var log permissionLog
		r := start(t, ag, &acp.ClientOptions{Permission: log.wrap(acp.AllowAll)})
		if err := os.WriteFile(r.path("greet.txt"), []byte("hello world\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if ag.name == "claude" {
			// Claude Code edits only files it has read.
			r.Model.Script(Reply{Tool: &ToolUse{ID: "call_read", Name: "Read", Args: map[string]any{"file_path": r.path("greet.txt")}}})
		}
		r.Model.Script(
			Reply{Tool: edit(ag, r, "call_edit")},
			Reply{Text: []string{"Edited."}},
		)
		turn, stop, err := r.prompt("change world to there in greet.txt")
		if err != nil || stop != schema.StopReasonEndTurn {
			t.Fatalf("turn: %v, %v", stop, err)
		}
		st := turn.State()
		if b, _ := os.ReadFile(r.path("greet.txt")); string(b) != "hello there\n" {
			t.Errorf("greet.txt %q after the allowed edit", b)
		}
		perms := log.all()
		if len(perms) != 1 {
			t.Fatalf("%d permission requests, want 1 (the edit)", len(perms))
		}
		checkDiff := func(where string, d *schema.DiffContent) {
			t.Helper()
			if ag.v2() {
				// A v2 diff names its changes and carries a unified patch,
				// not the old and new texts.
				if d == nil || d.Path != r.path("greet.txt") || len(d.Changes) != 1 || d.Changes[0].Operation != "modify" ||
					d.Patch == nil || !strings.Contains(d.Patch.Text, "-hello world") || !strings.Contains(d.Patch.Text, "+hello there") {
					t.Errorf("%s: diff %+v (patch %+v), want greet.txt modified, hello world -> hello there", where, d, d.Patch)
				}
				return
			}
			if d == nil || d.Path != r.path("greet.txt") || d.OldText == nil || !strings.Contains(*d.OldText, "hello world") || !strings.Contains(d.NewText, "hello there") {
				t.Errorf("%s: diff %+v, want greet.txt hello world -> hello there", where, d)
			}
		}
		// What the dialog shows: the request's tool call as folded.
		checkDiff("permission request", diffOf(perms[0].ToolCall.Content))
		tc := findTool(st, "call_edit")
		if tc == nil || tc.Kind != schema.ToolKindEdit {
			t.Fatalf("tool call %+v, want an edit", tc)
		}
		if tc.Status != schema.ToolCallStatusCompleted {
			t.Errorf("tool call status %v, want completed", tc.Status)
		}
		checkDiff("folded tool call", diffOf(tc.Content))
		switch {
		case ag.v2() && ag.name == "codex":
			// codex-acp 2.6.0 names the file only in the v2 diff's changes.
			if len(tc.Locations) != 0 {
				t.Errorf("locations %+v: codex-acp now sends them in v2, check them", tc.Locations)
			}
		case len(tc.Locations) == 0 || tc.Locations[0].Path != r.path("greet.txt"):
			t.Errorf("locations %+v, want greet.txt", tc.Locations)
		}
		r.save("edit")
	})
}
