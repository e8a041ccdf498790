//go:build unix

package acp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group,
// keeping whatever else the caller put in SysProcAttr.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// signalGroup signals every process of the group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
