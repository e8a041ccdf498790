package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// Terminals the agent never releases are ended when their session closes
// and when the client closes: no process the client started outlives
// it.
func TestUnreleasedTerminalsEndWithSessionAndClient(t *testing.T) {
	pids := make(chan int, 2)
	agent := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (acptest.StopReason, error) {
		id, err := t.CreateTerminal(acptest.Terminal{Command: "sh", Args: []string{"-c", "echo $$; exec sleep 300"}})
		if err != nil {
			return "", err
		}
		for {
			out, err := t.TerminalOutput(id)
			if err != nil {
				return "", err
			}
			var o struct{ Output string }
			json.Unmarshal(out, &o)
			if line, _, ok := strings.Cut(o.Output, "\n"); ok {
				var pid int
				fmt.Sscan(line, &pid)
				pids <- pid
				return "end_turn", nil // never released
			}
		}
	}})
	defer agent.Close()
	r, w := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{Terminals: &acp.TerminalManager{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	run := func() (*acp.Session, int) {
		s, err := c.NewSession(ctx, &acp.NewSessionRequest{Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		turn, _ := s.Prompt(ctx, acp.Text("start a server"))
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		return s, <-pids
	}
	s1, pid1 := run()
	_, pid2 := run()
	if !running(pid1) || !running(pid2) {
		t.Fatal("the terminals' commands are not running")
	}
	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if running(pid1) {
		t.Errorf("session close left pid %d running", pid1)
	}
	if !running(pid2) {
		t.Errorf("closing one session ended another session's terminal")
	}
	c.Close()
	if running(pid2) {
		t.Errorf("client close left pid %d running", pid2)
	}
}

// running reports whether pid is alive and not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}
