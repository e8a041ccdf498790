//go:build windows

package acp

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/acpclient/acp/internal/winjob"
)

// Windows has no process groups; a job object per agent stands in for one.
// Every process the agent starts joins its job, signalGroup ends the whole
// job, and because the job kills what is left in it when its last handle
// closes, the agent's tree also ends when this process dies, as the Unix
// watchdog arranges. Processes the agent starts in the moment between its
// start and its joining the job are not in it.
var agentJobs struct {
	mu   sync.Mutex
	jobs map[int]*winjob.Job // by the agent's pid, until its watchdog stops
}

func setProcessGroup(*exec.Cmd) {}

// startAgent starts the agent and puts it in a job of its own. If the job
// cannot be made, the agent runs without one, as on systems without
// process groups.
func startAgent(cmd *exec.Cmd) (done func(), err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if j, err := winjob.Start(cmd.Process.Pid); err == nil {
		agentJobs.mu.Lock()
		if agentJobs.jobs == nil {
			agentJobs.jobs = map[int]*winjob.Job{}
		}
		agentJobs.jobs[cmd.Process.Pid] = j
		agentJobs.mu.Unlock()
	}
	return func() {}, nil
}

func jobOf(pid int) *winjob.Job {
	agentJobs.mu.Lock()
	defer agentJobs.mu.Unlock()
	return agentJobs.jobs[pid]
}

// signalGroup ends the agent's job: Windows has no SIGTERM to ask politely
// with, so every signal ends the tree. Without a job only the agent itself
// is reached.
func signalGroup(pid int, _ syscall.Signal) error {
	if j := jobOf(pid); j != nil {
		return j.Terminate(1)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// groupAlive reports whether any process of the agent's job still runs.
func groupAlive(pid int) bool {
	if j := jobOf(pid); j != nil {
		return j.Active()
	}
	return false
}

// watchdog owns the agent's job: stopping it closes the job, which ends
// whatever is still in it, and forgets it.
type watchdog struct {
	pid int
	job *winjob.Job
}

func startWatchdog(pid int) (*watchdog, error) {
	j := jobOf(pid)
	if j == nil {
		return nil, os.ErrNotExist
	}
	return &watchdog{pid: pid, job: j}, nil
}

func (wd *watchdog) stop() {
	if wd == nil {
		return
	}
	agentJobs.mu.Lock()
	delete(agentJobs.jobs, wd.pid)
	agentJobs.mu.Unlock()
	_ = wd.job.Close()
}

// readNow cannot read without waiting here: pipes have no deadlines on
// Windows, so it is never reached (see exitReader), and a grandchild that
// holds the agent's stdout keeps the connection open until Close.
func readNow(f *os.File, b []byte) (int, error) { return f.Read(b) }
