//go:build unix

package procgroup

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// watchdogScript waits for EOF on stdin, then kills its own process group.
// It ignores the signals of a staged shutdown so that it keeps watching
// until the group's final SIGKILL. read and kill are shell builtins: no
// process of its own holds its stdout.
const watchdogScript = `trap '' HUP INT TERM; read x; kill -KILL 0`

// A watchdog is a shell in a process group whose stdin is a pipe only this
// process holds the write end of. However this process ends — even by
// SIGKILL — the kernel closes that end, the shell reads EOF and kills the
// whole group: the leader and every descendant still in its group.
type watchdog struct {
	pipe *os.File // the write end; closing it fires the watchdog
	done chan struct{}
}

// startWatchdog joins a watchdog to process group pgid.
//
// The watchdog is reaped without holding an OS thread for as long as the
// group lives: on Linux through [Reap]; elsewhere its death is learnt from
// its stdout, a pipe that reads EOF once the watchdog (its only writer) is
// gone, a read that parks a goroutine in Go's poller.
func startWatchdog(pgid int) (*watchdog, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, err
	}
	var gone, out *os.File
	if !reapsWithoutThread {
		if gone, out, err = os.Pipe(); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	if out != nil {
		cmd.Stdout = out
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	err = cmd.Start()
	r.Close()
	if out != nil {
		out.Close()
	}
	if err != nil {
		w.Close()
		if gone != nil {
			gone.Close()
		}
		return nil, err
	}
	wd := &watchdog{pipe: w, done: make(chan struct{})}
	if gone == nil {
		Reap(cmd, func(error) { close(wd.done) })
		return wd, nil
	}
	go func() {
		_, _ = io.Copy(io.Discard, gone)
		gone.Close()
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
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-wd.done:
	case <-t.C:
	}
}
