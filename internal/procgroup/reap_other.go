//go:build !linux

package procgroup

import "os/exec"

// Reap waits for cmd, started, to exit, then calls cmd.Wait and done with
// its result.
//
// Here the wait holds an OS thread per process for as long as it runs (on
// macOS and the BSDs a blocking wait4, on Windows WaitForSingleObject):
// Go stops a program at 10 000 threads, which bounds the processes one host
// can supervise at once. Linux waits without a thread (see reap_linux.go).
func Reap(cmd *exec.Cmd, done func(error)) {
	go func() { done(cmd.Wait()) }()
}

// reapsWithoutThread: Reap holds a goroutine and a thread per process.
const reapsWithoutThread = false
