//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// CPU is the CPU time this process has used, user and system (not its
// children's), or false where it cannot be read.
func CPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
