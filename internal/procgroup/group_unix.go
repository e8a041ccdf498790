//go:build unix

package procgroup

import (
	"os/exec"
	"sync"
	"syscall"
)

// A Group is a started process and the process group it leads. Its methods
// may be called concurrently.
type Group struct {
	pid    int
	wd     *watchdog // nil if it could not be started
	reaped func()
	close1 sync.Once
}

// Start starts cmd as the leader of a new process group, keeping whatever
// else the caller put in cmd.SysProcAttr, and joins a watchdog to the group
// (best effort: without /bin/sh the group runs unwatched, see
// [Group.Watched]). On Linux the leader also gets Pdeathsig SIGKILL, unless
// the caller chose another signal.
//
// The caller waits for cmd as usual and must then call [Group.Reaped], and
// call [Group.Close] when it is done with the group.
func Start(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	reaped, err := start(cmd)
	if err != nil {
		return nil, err
	}
	g := &Group{pid: cmd.Process.Pid, reaped: reaped}
	g.wd, _ = startWatchdog(g.pid)
	return g, nil
}

// Pid is the leader's process id, which is also the group's id.
func (g *Group) Pid() int { return g.pid }

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error {
	return syscall.Kill(-g.pid, sig)
}

// Alive reports whether any process of the group still runs. The watchdog
// is one of them until the group is killed or closed.
func (g *Group) Alive() bool { return groupAlive(g.pid) }

// Watched reports whether a watchdog guards the group: whether processes
// the leader started die with this process, not only the leader itself
// (Linux).
func (g *Group) Watched() bool { return g.wd != nil }

// Tracked reports why Signal could not reach the processes the leader
// starts, or nil if it can; on Unix it always can.
func (g *Group) Tracked() error { return nil }

// Reaped tells the group that the leader has been waited for. Until then
// (on Linux) the thread the leader was started from is kept, since its end
// would fire the leader's Pdeathsig.
func (g *Group) Reaped() { g.reaped() }

// Close stops the watchdog: closing its pipe makes it SIGKILL whatever is
// left of the group, and Close waits for it to be gone (up to a second).
// Callers kill the group first; Close then only reaps the watchdog. Close
// may be called more than once.
func (g *Group) Close() {
	g.close1.Do(func() { g.wd.stop() })
}
