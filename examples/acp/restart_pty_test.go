//go:build linux

package main

import (
	"errors"
	"os/exec"
	"testing"
)

// Interactively the agent is supervised by default: one that dies while
// the prompt waits is reported with its exit status and restarted; when
// the new process cannot bring the session back (this agent knows no
// session it did not create), the command ends at once with an error
// naming the session, exit status 1.
func TestAgentDiesAtPromptRestarted(t *testing.T) {
	cmd, sc, typ := startPTY(t, append([]string{"--cwd", t.TempDir()}, childAgentArgs(t, "dies")...)...)
	sc.expect(t, "> ")
	typ("go\r")
	sc.expect(t, "[end_turn]")
	sc.expect(t, "acp: the agent died (exit status 3); restarting it")
	sc.expect(t, "fatal: out of cheese")
	sc.expect(t, "acp: the agent is back (connection 2); lost session sess-1")
	sc.expect(t, `acp: the session was lost when the agent restarted: "sess-1"`)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
}
