//go:build linux

package procgroup

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// start starts the leader so that the kernel SIGKILLs it when this process
// dies (Pdeathsig), unless the caller chose another signal.
//
// Pdeathsig fires when the OS thread that forked the child exits, not the
// process, and the Go runtime retires a thread when a goroutine exits while
// locked to it: a child started from such a goroutine would be killed while
// in use. So children are forked from one dedicated locked thread, which
// ends only once every child it started has been reaped. reaped must be
// called once the started process has been waited for; it may be called
// more than once.
func start(cmd *exec.Cmd) (reaped func(), err error) {
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	forker.mu.Lock()
	if forker.live == 0 {
		forker.reqs = make(chan forkRequest)
		go forkLoop(forker.reqs)
	}
	forker.live++
	reqs := forker.reqs
	forker.mu.Unlock()

	errc := make(chan error, 1)
	reqs <- forkRequest{cmd, errc}
	if err := <-errc; err != nil {
		releaseForker()
		return nil, err
	}
	return sync.OnceFunc(releaseForker), nil
}

var forker struct {
	mu   sync.Mutex
	reqs chan forkRequest
	live int // children started (or being started) and not yet reaped
}

type forkRequest struct {
	cmd *exec.Cmd
	err chan<- error
}

func releaseForker() {
	forker.mu.Lock()
	defer forker.mu.Unlock()
	if forker.live--; forker.live == 0 {
		close(forker.reqs)
	}
}

// forkLoop starts children on a thread of its own. The loop ends only when
// no child of that thread is left to be signalled, so the thread may then
// go back to the runtime.
func forkLoop(reqs <-chan forkRequest) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for r := range reqs {
		r.err <- r.cmd.Start()
	}
}
