//go:build linux

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
)

// TestClaudeClientFS: the client offers its fs and terminal capabilities
// (workspace.FS, workspace.Terminals); claude-agent-acp 0.101.0 still reads,
// writes and runs commands itself. The test pins that, so a release that
// starts sending fs/* or terminal/* shows up here.
func TestClaudeClientFS(t *testing.T) {
	t.Parallel()
	var log permissionLog
	terms := &workspace.Terminals{}
	r := start(t, claude, &acp.ClientOptions{
		Permission: log.wrap(acp.AllowAll),
		FS:         (&workspace.FS{}).Handlers(),
		Terminal:   terms.Handlers(),
	})
	defer terms.Close()
	if err := os.WriteFile(r.path("greet.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Model.Script(
		Reply{Tool: &ToolUse{ID: "call_read", Name: "Read", Args: map[string]any{"file_path": r.path("greet.txt")}}},
		Reply{Tool: &ToolUse{ID: "call_write", Name: "Write", Args: map[string]any{"file_path": r.path("out.txt"), "content": "written by the agent\n"}}},
		Reply{Tool: shell(claude, "call_sh", "echo from-terminal && echo ran > ran.txt")},
		Reply{Text: []string{"All done."}},
	)
	turn, stop, err := r.prompt("read, write, run")
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("turn: %v, %v", stop, err)
	}
	st := turn.State()
	for _, id := range []string{"call_read", "call_write", "call_sh"} {
		if tc := findTool(st, id); tc == nil || tc.Status != schema.ToolCallStatusCompleted {
			t.Errorf("tool call %s: %+v, want completed", id, tc)
		}
	}
	if tc := findTool(st, "call_read"); tc == nil || !strings.Contains(r.outputOf(tc), "hello world") {
		t.Errorf("the read's output lacks the file's content")
	}
	if tc := findTool(st, "call_sh"); tc == nil || !strings.Contains(r.outputOf(tc), "from-terminal") {
		t.Errorf("the command's output is not folded")
	}
	if b, err := os.ReadFile(r.path("out.txt")); err != nil || string(b) != "written by the agent\n" {
		t.Errorf("out.txt %q, %v", b, err)
	}
	if b, err := os.ReadFile(r.path("ran.txt")); err != nil || string(b) != "ran\n" {
		t.Errorf("ran.txt %q, %v", b, err)
	}
	if n := len(log.all()); n != 2 {
		t.Errorf("%d permission requests, want 2 (the write and the command)", n)
	}
	r.C.Close()
	// claude-agent-acp 0.101.0 advertises nothing about it, but runs Read,
	// Write and Bash itself even when the client offers fs and terminals:
	// it never sends fs/* or terminal/*. If a new version does, extend this
	// test to check what workspace.FS and workspace.Terminals served.
	for _, f := range r.frames("<") {
		if strings.HasPrefix(f.Method, "fs/") || strings.HasPrefix(f.Method, "terminal/") {
			t.Errorf("claude-agent-acp now sends %s %s: check it against workspace.FS/Terminals", f.Method, f.Params)
		}
	}
	r.save("client-capabilities")
}

// TestCodexClientFS: codex-acp 2.6.0 applies patches and runs commands
// itself too, whatever the client offers.
func TestCodexClientFS(t *testing.T) {
	t.Parallel()
	terms := &workspace.Terminals{}
	r := start(t, codex, &acp.ClientOptions{
		Permission: acp.AllowAll,
		FS:         (&workspace.FS{}).Handlers(),
		Terminal:   terms.Handlers(),
	})
	defer terms.Close()
	if err := os.WriteFile(r.path("greet.txt"), []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Model.Script(
		Reply{Tool: edit(codex, r, "call_edit")},
		Reply{Tool: shell(codex, "call_sh", "echo from-shell > ran.txt")},
		Reply{Text: []string{"All done."}},
	)
	if _, stop, err := r.prompt("edit, run"); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("turn: %v, %v", stop, err)
	}
	if b, _ := os.ReadFile(r.path("greet.txt")); string(b) != "hello there\n" {
		t.Errorf("greet.txt %q", b)
	}
	if b, _ := os.ReadFile(r.path("ran.txt")); string(b) != "from-shell\n" {
		t.Errorf("ran.txt %q", b)
	}
	r.C.Close()
	for _, f := range r.frames("<") {
		if strings.HasPrefix(f.Method, "fs/") || strings.HasPrefix(f.Method, "terminal/") {
			t.Errorf("codex-acp now sends %s %s: check it against workspace.FS/Terminals", f.Method, f.Params)
		}
	}
	r.save("client-capabilities")
}
