//go:build linux

package procgroup

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A watchdog's reaper parks in Go's poller instead of holding an OS thread
// blocked in wait: a client with many terminals would otherwise hold a
// thread per terminal.
func TestWatchdogsHoldNoThreads(t *testing.T) {
	const n = 16
	before := threads(t)
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
	// Wait until every reaper has blocked, in whatever way it blocks.
	for deadline := time.Now().Add(10 * time.Second); blockedReapers() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d watchdog reapers blocked", blockedReapers(), n)
		}
	}
	if grew := threads(t) - before; grew >= n/2 {
		t.Errorf("%d watchdogs added %d threads", n, grew)
	}
}

var goroutineHeader = regexp.MustCompile(`(?m)^goroutine \d+ \[([^\]]*)\]:\n`)

// blockedReapers counts the watchdog reaper goroutines that wait in a
// system call or in the poller.
func blockedReapers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	blocked := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		m := goroutineHeader.FindSubmatch(append(g, '\n'))
		if m == nil || !bytes.Contains(g, []byte("procgroup.startWatchdog.func")) {
			continue
		}
		if s := string(m[1]); s != "running" && s != "runnable" {
			blocked++
		}
	}
	return blocked
}

// threads is the number of OS threads of this process.
func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Threads:\s+(\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no Threads line in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
