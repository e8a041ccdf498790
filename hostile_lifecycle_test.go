//go:build linux

package acp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lineFunc is an io.Writer for CommandTransport.Stderr, which writes one
// line per call.
type lineFunc func(line string)

func (f lineFunc) Write(b []byte) (int, error) {
	f(strings.TrimRight(string(b), "\r\n"))
	return len(b), nil
}

// pidsLine parses the "pids AGENT GRANDCHILD" line of the stubborn and hang
// test agents.
func pidsLine(line string) (agent, grandchild int, ok bool) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "pids" {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(f[1])
	g, err2 := strconv.Atoi(f[2])
	return a, g, err1 == nil && err2 == nil
}

// An agent that hangs in initialize, ignores stdin EOF and SIGTERM and has a
// grandchild: when Connect's context ends, Connect kills the agent's group
// at once instead of shutting it down in stages. The graces are an hour, so
// a Connect that waited for either would still be waiting when this test
// gives up on it.
func TestConnectContextEndKillsHungAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids := make(chan [2]int, 1)
	cmd := agentCommand("hang")
	tr := &CommandTransport{
		Command:        cmd,
		ShutdownGrace:  time.Hour,
		TerminateGrace: time.Hour,
		Stderr: lineFunc(func(line string) {
			if a, g, ok := pidsLine(line); ok {
				pids <- [2]int{a, g}
				cancel() // the agent runs and will never answer initialize
			}
		}),
	}
	res := make(chan error, 1)
	go func() {
		c, err := Connect(ctx, tr, nil)
		if c != nil {
			c.Close()
		}
		res <- err
	}()
	var ps [2]int
	select {
	case ps = <-pids:
	case err := <-res:
		t.Fatalf("Connect returned %v before the agent reported its pids", err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Connect error = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		// Unblock the staged shutdown so the test can end.
		_ = syscall.Kill(-ps[0], syscall.SIGKILL)
		<-res
		t.Fatal("Connect was still running a minute after its context ended: it waited for the shutdown graces")
	}
	// Connect has returned: nothing of the agent's may be left.
	for _, pid := range ps {
		if alive(pid) {
			t.Errorf("process %d survived the failed Connect", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if m := groupMembers(ps[0]); len(m) > 0 {
		t.Errorf("the agent's group still has %v", m)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the agent ended with %v, want SIGKILL", cmd.ProcessState)
	}
}
