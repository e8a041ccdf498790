//go:build unix

package interop

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system (not
// its children's: the node agent's and server's), or false where it
// cannot be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
