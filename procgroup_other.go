//go:build !unix && !windows

package acp

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

func setProcessGroup(*exec.Cmd) {}

// signalGroup can only reach the agent itself where there are no process
// groups; its children are not tracked.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func groupAlive(int) bool { return false }

func startAgent(cmd *exec.Cmd) (done func(), err error) {
	return func() {}, cmd.Start()
}

// Without process groups there is no watchdog: an agent outlives a client
// that dies without closing it.
type watchdog struct{}

func startWatchdog(int) (*watchdog, error) {
	return nil, errors.New("acp: no process groups on this system")
}

func (*watchdog) stop() {}

// readNow cannot read without waiting here; pipes have no deadlines on
// these systems, so it is never reached (see exitReader).
func readNow(f *os.File, b []byte) (int, error) { return f.Read(b) }
