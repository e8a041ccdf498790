//go:build linux

package main

// The killed demo at an interactive prompt, under a pseudo-terminal.

import "testing"

// Interactively (supervised by default) /kill's turn fails, the demo is
// restarted and the session resumed, and the prompt comes back after the
// line saying so (not under it): the next line is answered in the same
// session and /quit exits 0.
func TestDemoKillInteractive(t *testing.T) {
	cmd, sc, typ := startPTY(t, append(stateDir(t), "--cwd", t.TempDir())...)
	sc.expect(t, "> ")
	typ("/kill\r")
	sc.expect(t, "dying in 1")
	sc.expect(t, "acp: the agent died (signal: killed); restarting it")
	sc.expect(t, "acp: the agent is back (connection 2, pid ")
	sc.expect(t, "> ")
	typ("/echo still here\r")
	sc.expect(t, "still here")
	sc.expect(t, "[end_turn]")
	sc.expect(t, "> ")
	typ("/quit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
