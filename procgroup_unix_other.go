//go:build unix && !linux

package acp

import "os/exec"

// groupAlive reports whether any process of group pgid still exists
// (zombies included: without /proc there is no telling them apart).
func groupAlive(pgid int) bool { return signalGroup(pgid, 0) == nil }

// startAgent starts the agent. Only Linux can have the kernel kill it with
// its parent; here the watchdog does that.
func startAgent(cmd *exec.Cmd) (done func(), err error) {
	return func() {}, cmd.Start()
}
