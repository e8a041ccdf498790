//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Closing the Group's end of the watchdog's pipe — what the kernel does
// when this process dies — makes the watchdog SIGKILL the whole group: the
// leader and its child, although neither was signalled by us.
func TestWatchdogKillsGroupWhenItsPipeCloses(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & wait")
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = g.Signal(syscall.SIGKILL) // if the watchdog failed
		<-exited
		g.Reaped()
	}()
	if !g.Watched() {
		t.Fatal("no watchdog (is /bin/sh missing?)")
	}
	g.Close()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the leader still runs 10s after the watchdog's pipe closed")
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the leader ended with %v, want SIGKILL", cmd.ProcessState)
	}
	// The child was in the group the watchdog killed; nothing tells us when
	// a process we are not the parent of ends, so poll (Alive ignores
	// zombies on Linux).
	for deadline := time.Now().Add(10 * time.Second); g.Alive(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the group still has a running process")
		}
	}
}
