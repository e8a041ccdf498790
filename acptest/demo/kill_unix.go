//go:build unix

package demo

// The demo's /kill on Unix: the process sends itself SIGKILL, as
// `kill -9` from another terminal would.

import (
	"os"
	"syscall"
)

func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not caught: the process ends here
}
