//go:build !unix

package acp

import (
	"os"
	"os/exec"
	"syscall"
)

func setProcessGroup(*exec.Cmd) {}

// signalGroup can only reach the agent itself where there are no process
// groups; its children are not tracked.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func groupAlive(int) bool { return false }
