//go:build unix

package main

// The one line of a tool call cancelled by Ctrl-C, through the real command.

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// An agent whose tool call runs until the turn is cancelled, and then
	// reports it failed, as the demo and real agents do.
	acptest.Register("longtool", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "x1", Title: "Long job", Kind: "execute", Status: "in_progress"})
			<-t.Cancelled()
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "x1", Status: "failed",
				Content: []any{acptest.ToolContent(acptest.Text("Cancelled."))}})
			return schema.StopReasonCancelled, nil
		}})
	})
}

// A tool call cancelled by Ctrl-C (SIGINT) in a turn gets one line, the
// client's "cancelled", not a second one for the agent's "failed" that
// follows it.
func TestCancelledToolCallOneLine(t *testing.T) {
	agent := childAgentArgs(t, "longtool")
	args := append([]string{"--cwd", t.TempDir(), "-p", "go"}, agent...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	br := bufio.NewReader(stdout)
	var out strings.Builder
	for !strings.Contains(out.String(), "[tool] Long job (execute) in_progress\n") {
		line, err := br.ReadString('\n')
		out.WriteString(line)
		if err != nil {
			t.Fatalf("no tool line: %q", out.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	out.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit %v:\n%s", err, out.String())
	}
	if got := strings.Count(out.String(), "[tool] Long job: "); got != 1 || !strings.Contains(out.String(), "[tool] Long job: cancelled\n") {
		t.Errorf("%d end lines for the cancelled tool call, want one \"cancelled\":\n%s", got, out.String())
	}
}
