package acp

import (
	"testing"

	"github.com/acpclient/acp/internal/proctest"
)

// Process helpers for the lifecycle tests (Linux only in effect: /proc).

func alive(pid int) bool          { return proctest.Alive(pid) }
func groupMembers(pgid int) []int { return proctest.GroupMembers(pgid) }
func waitGroupGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	proctest.WaitGroupGone(t, pgid, pids...)
}
