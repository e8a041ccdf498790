package main

import (
	"os"
	"syscall"
)

// maxRSSKB is wait4's ru_maxrss of an exited process, in kB on Linux:
// the larger of its own peak RSS and its reaped children's.
func maxRSSKB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss)
	}
	return 0
}
