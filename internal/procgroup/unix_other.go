//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// groupAlive reports whether any process of group pgid still exists
// (zombies included: without /proc there is no telling them apart).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// start starts the leader. Only Linux can have the kernel kill it with its
// parent; here the watchdog does that.
func start(cmd *exec.Cmd) (reaped func(), err error) {
	return func() {}, cmd.Start()
}
