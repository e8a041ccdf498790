//go:build unix

package acptest

import "syscall"

// sigkill sends SIGKILL to pid, or to the process group -pid.
func sigkill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// exists reports whether process pid exists (zombies included).
func exists(pid int) bool { return syscall.Kill(pid, 0) == nil }
