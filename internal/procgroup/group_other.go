//go:build !unix && !windows

package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// A Group is a started process. Without process groups only the leader
// itself can be signalled, and nothing ends it when this process dies.
type Group struct {
	pid  int
	proc *os.Process
}

// Start starts cmd.
func Start(cmd *exec.Cmd) (*Group, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{pid: cmd.Process.Pid, proc: cmd.Process}, nil
}

// Pid is the process id.
func (g *Group) Pid() int { return g.pid }

// Signal kills the process itself; its children are not tracked.
func (g *Group) Signal(syscall.Signal) error { return g.proc.Kill() }

// Alive always reports false: there is no group to ask about.
func (g *Group) Alive() bool { return false }

// Watched reports false: nothing ends the process when this one dies.
func (g *Group) Watched() bool { return false }

// Tracked reports that the processes the leader starts are out of reach.
func (g *Group) Tracked() error { return errNoGroups }

var errNoGroups = errors.New("no process groups on this system")

// Reaped does nothing here.
func (g *Group) Reaped() {}

// Close does nothing here.
func (g *Group) Close() {}
