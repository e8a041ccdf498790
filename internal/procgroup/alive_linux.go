//go:build linux

package procgroup

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// procScans counts groupAlive's scans of /proc (ProcScans).
var procScans atomic.Int64

// ProcScans returns how many times a group's liveness was learnt by
// reading /proc, the slow way, in this process; for tests.
func ProcScans() int64 { return procScans.Load() }

// groupAlive reports whether any process of group pgid is still running.
// Zombies do not count: in a container whose init does not reap, a killed
// grandchild stays a zombie forever although it runs nothing.
func groupAlive(pgid int) bool {
	// Ask the kernel first: ESRCH means the group has no process at all,
	// zombie or not, which is the usual case once a group is killed and
	// reaped, and it spares reading the stat file of every process on the
	// machine (a fifth of a short acp run's CPU went there).
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	procScans.Add(1)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces; the fields after it do not.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid && pid > 0 {
			return true
		}
	}
	return false
}
