//go:build windows

package procgroup

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/acpclient/acp/internal/winjob"
)

// A Group is a started process and the job object it runs in: Windows has
// no process groups, and a job stands in for one. Every process the leader
// starts joins the job, Signal ends the whole job, and because the job
// kills what is left in it when its last handle closes, the tree also ends
// when this process dies. Processes the leader starts in the moment between
// its start and its joining the job are not in it.
type Group struct {
	pid    int
	proc   *os.Process
	job    *winjob.Job // nil if it could not be made
	jobErr error
	close1 sync.Once
}

// Start starts cmd and puts it in a job of its own. If the job cannot be
// made, the process runs without one; [Group.Tracked] says why.
func Start(cmd *exec.Cmd) (*Group, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pid: cmd.Process.Pid, proc: cmd.Process}
	g.job, g.jobErr = winjob.Start(g.pid)
	return g, nil
}

// Pid is the leader's process id.
func (g *Group) Pid() int { return g.pid }

// Signal ends the job: Windows has no SIGTERM to ask politely with, so
// every signal ends the tree, and its processes exit with code 1. Without a
// job only the leader itself is reached.
func (g *Group) Signal(syscall.Signal) error {
	if g.job != nil {
		return g.job.Terminate(1)
	}
	return g.proc.Kill()
}

// Alive reports whether any process of the job still runs.
func (g *Group) Alive() bool { return g.job != nil && g.job.Active() }

// Watched reports whether the tree dies with this process: whether it has
// a job.
func (g *Group) Watched() bool { return g.job != nil }

// Tracked reports why Signal could not reach the processes the leader
// starts (the job could not be made), or nil if it can.
func (g *Group) Tracked() error { return g.jobErr }

// Reaped is for the Linux thread that started the leader; nothing here.
func (g *Group) Reaped() {}

// Close closes the job, which ends whatever is still in it. It may be
// called more than once.
func (g *Group) Close() {
	g.close1.Do(func() {
		if g.job != nil {
			_ = g.job.Close()
		}
	})
}
