//go:build unix

package acp

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// watchdogScript waits for EOF on stdin, then kills its own process group.
// It ignores the signals of the staged shutdown so that it keeps watching
// until the group's final SIGKILL.
const watchdogScript = `trap '' HUP INT TERM; read x; kill -KILL 0`

// A watchdog is a shell in the agent's process group whose stdin is a pipe
// only this process holds the write end of. However this process ends — even
// by SIGKILL — the kernel closes that end, the shell reads EOF and kills the
// whole group: the agent and every descendant still in its group.
type watchdog struct {
	pipe *os.File // the write end; closing it fires the watchdog
	done chan struct{}
}

// startWatchdog joins a watchdog to process group pgid.
func startWatchdog(pgid int) (*watchdog, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	wd := &watchdog{pipe: w, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(wd.done)
	}()
	return wd, nil
}

// stop releases the watchdog once its group has been killed (which killed
// it too).
func (wd *watchdog) stop() {
	if wd == nil {
		return
	}
	wd.pipe.Close()
	waitOrTimeout(wd.done, time.Second)
}
