//go:build unix

package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
)

// Terminals the agent never releases are ended when their session closes
// and when the client closes: no process the client started outlives
// it.
func TestUnreleasedTerminalsEndWithSessionAndClient(t *testing.T) {
	pids := make(chan int, 2)
	agent := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
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
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{Terminal: (&workspace.Terminals{}).Handlers()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	run := func() (*acp.Session, int) {
		s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		turn, _ := s.Prompt(ctx, schema.Text("start a server"))
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

// An agent past MaxTerminals is answered with an error that names the
// limit, and the client lives on.
func TestTerminalLimitReachesAgent(t *testing.T) {
	refusal := make(chan *acptest.Error, 1)
	agent := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		if _, err := t.CreateTerminal(acptest.Terminal{Command: "sleep", Args: []string{"300"}}); err != nil {
			return "", err
		}
		_, err := t.CreateTerminal(acptest.Terminal{Command: "true"})
		var e *acptest.Error
		errors.As(err, &e)
		refusal <- e
		return "end_turn", nil
	}})
	defer agent.Close()
	r, w := agent.Pipe()
	diags := make(chan acp.Diagnostic, 10)
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{
		Terminal:     (&workspace.Terminals{MaxTerminals: 1}).Handlers(),
		OnDiagnostic: func(d acp.Diagnostic) { diags <- d },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := s.Prompt(context.Background(), schema.Text("run two"))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	e := <-refusal
	if e == nil || !strings.Contains(e.Message, "limit exceeded") || !strings.Contains(e.Message, "MaxTerminals") {
		t.Errorf("second terminal/create: %v, want an error naming MaxTerminals", e)
	}
	select {
	case d := <-diags:
		if d.Kind != "limit_exceeded" || !strings.Contains(d.Message, "terminal/create") || !strings.Contains(d.Message, "MaxTerminals") {
			t.Errorf("diagnostic = %+v, want limit_exceeded naming terminal/create and MaxTerminals", d)
		}
	case <-time.After(30 * time.Second):
		t.Error("no diagnostic for the refused terminal/create")
	}
}

// The client's Close may be called from Terminals.OnOutput.
func TestClientCloseFromOnOutput(t *testing.T) {
	agent := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		id, err := t.CreateTerminal(acptest.Terminal{Command: "yes"})
		if err != nil {
			return "", err
		}
		_, err = t.WaitForTerminalExit(id)
		return "end_turn", err
	}})
	defer agent.Close()
	r, w := agent.Pipe()
	var c *acp.Client
	connected := make(chan struct{})
	closed := make(chan struct{})
	var once sync.Once
	tm := &workspace.Terminals{OnOutput: func(string, []byte) {
		<-connected
		once.Do(func() {
			c.Close()
			close(closed)
		})
	}}
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{Terminal: tm.Handlers()})
	close(connected)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := s.Prompt(context.Background(), schema.Text("run yes"))
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Client.Close called from OnOutput did not return")
	}
	if _, err := turn.Wait(); !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("turn ended with %v, want ErrConnClosed", err)
	}
}
