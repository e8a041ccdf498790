//go:build linux

package procgroup

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// Reap waits for many processes on one goroutine and no thread of their
// own, and reports each one's own exit status once it has exited.
func TestReapHoldsNoThreadPerProcess(t *testing.T) {
	const n = 32
	before, gBefore := threads(t), runtime.NumGoroutine()
	type result struct {
		i   int
		err error
	}
	results := make(chan result, n)
	var cmds []*exec.Cmd
	for i := range n {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		Reap(cmd, func(err error) { results <- result{i, err} })
	}
	grewT, grewG := threads(t)-before, runtime.NumGoroutine()-gBefore
	for _, cmd := range cmds {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	seen := map[int]bool{}
	for range n {
		r := <-results
		if seen[r.i] {
			t.Errorf("process %d reaped twice", r.i)
		}
		seen[r.i] = true
		ws, ok := cmds[r.i].ProcessState.Sys().(syscall.WaitStatus)
		if r.err == nil || !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("process %d: Wait = %v, state %v; want killed by SIGKILL", r.i, r.err, cmds[r.i].ProcessState)
		}
	}
	if grewT >= n/4 {
		t.Errorf("%d waits added %d threads", n, grewT)
	}
	if grewG >= n/4 {
		t.Errorf("%d waits added %d goroutines", n, grewG)
	}
}

// A process that exits before Reap is called is reaped all the same.
func TestReapExitedProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for !exited(cmd.Process.Pid) {
		runtime.Gosched()
	}
	done := make(chan error, 1)
	Reap(cmd, func(err error) { done <- err })
	if err := <-done; err != nil || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("Wait = %v, state %v", err, cmd.ProcessState)
	}
}
