//go:build windows

package workspace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
)

// A command's exit code and merged output reach the agent.
func TestWindowsTerminalExitAndOutput(t *testing.T) {
	m := &Terminals{Roots: []string{t.TempDir()}}
	defer m.Close()
	ctx := context.Background()
	c, err := m.CreateTerminal(ctx, &schema.CreateTerminalRequest{SessionID: "s", Command: "cmd", Args: []string{"/c", "echo hi& exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: c.TerminalID})
	if err != nil || w.ExitCode == nil || *w.ExitCode != 3 || w.Signal != nil {
		t.Fatalf("wait = %+v, %v; want exit code 3", w, err)
	}
	out, err := m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: "s", TerminalID: c.TerminalID})
	if err != nil || !strings.Contains(out.Output, "hi") || out.Truncated {
		t.Errorf("output = %+v, %v; want hi, not truncated", out, err)
	}
}

// Kill ends the command together with a process it started: both are in
// the terminal's job, which has no running process left afterwards.
func TestWindowsTerminalKillEndsTree(t *testing.T) {
	m := &Terminals{Roots: []string{t.TempDir()}}
	defer m.Close()
	ctx := context.Background()
	c, err := m.CreateTerminal(ctx, &schema.CreateTerminalRequest{SessionID: "s", Command: "cmd",
		Args: []string{"/c", "start /b ping -n 300 127.0.0.1 >NUL & ping -n 300 127.0.0.1 >NUL"}})
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	tree := m.terms[c.TerminalID].tree
	m.mu.Unlock()
	if _, err := m.KillTerminal(ctx, &schema.KillTerminalRequest{SessionID: "s", TerminalID: c.TerminalID}); err != nil {
		t.Fatal(err)
	}
	w, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: c.TerminalID})
	if err != nil || w.ExitCode == nil || *w.ExitCode != 1 {
		t.Fatalf("wait after kill = %+v, %v; want exit code 1", w, err)
	}
	// Nothing signals the end of a process we are not the parent of, so
	// poll (bounded) until the job is empty.
	deadline := time.Now().Add(10 * time.Second)
	for tree.Alive() {
		if time.Now().After(deadline) {
			t.Fatal("the job still has running processes after kill")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
