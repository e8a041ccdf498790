//go:build linux

package procgroup

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"

	"github.com/acpclient/acp/internal/proctest"
)

// Watchdogs are reaped by the shared reaper, which parks in Go's poller:
// neither a thread nor a goroutine per watchdog. A client with many
// terminals or agents would otherwise hold one of each per process.
func TestWatchdogsHoldNoThreads(t *testing.T) {
	const n = 16
	before, gBefore := threads(t), runtime.NumGoroutine()
	var cmds []*exec.Cmd
	var groups []*Group
	defer func() {
		for i, g := range groups {
			_ = g.Signal(syscall.SIGKILL)
			_ = cmds[i].Wait()
			g.Reaped()
			g.Close()
		}
	}()
	for range n {
		cmd := exec.Command("sleep", "300")
		g, err := Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		cmds, groups = append(cmds, cmd), append(groups, g)
		if !g.Watched() {
			t.Fatal("no watchdog (is /bin/sh missing?)")
		}
	}
	// Reap registers each watchdog before Start returns; nothing is left
	// to block later.
	if grew := threads(t) - before; grew >= n/2 {
		t.Errorf("%d watchdogs added %d threads", n, grew)
	}
	if grew := runtime.NumGoroutine() - gBefore; grew >= n/2 {
		t.Errorf("%d watchdogs added %d goroutines", n, grew)
	}
}

// threads is the number of OS threads of this process.
func threads(t *testing.T) int { return proctest.Threads(t) }
