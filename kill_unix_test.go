//go:build unix

package acp

import "syscall"

// sigkill sends SIGKILL to pid, or to the process group -pid.
func sigkill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
