package acp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
		_ = sigkill(-ps[0])
		<-res
		t.Fatal("Connect was still running a minute after its context ended: it waited for the shutdown graces")
	}
	// Connect has returned: nothing of the agent's may be left.
	for _, pid := range ps {
		if alive(pid) {
			t.Errorf("process %d survived the failed Connect", pid)
			_ = sigkill(pid)
		}
	}
	if m := groupMembers(ps[0]); len(m) > 0 {
		t.Errorf("the agent's group still has %v", m)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the agent ended with %v, want SIGKILL", cmd.ProcessState)
	}
}

// testHostEnv makes the test binary a host: a client process that connects
// to the test agent named by its value, prints the agent's "pids" line on
// stdout and then waits to be killed.
const testHostEnv = "ACP_TEST_HOST"

func runTestHost(mode string) {
	reported := make(chan struct{})
	var once sync.Once
	tr := &CommandTransport{Command: agentCommand(mode), Stderr: lineFunc(func(line string) {
		if _, _, ok := pidsLine(line); ok {
			fmt.Println(line)
			once.Do(func() { close(reported) })
		}
	})}
	if _, err := Connect(context.Background(), tr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
	<-reported
	select {} // until killed
}

// A client process killed by SIGKILL cannot close anything, yet the agent
// it started — which ignores stdin EOF and SIGTERM — and the agent's own
// child do not outlive it.
func TestHostKilledAgentGroupDies(t *testing.T) {
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), testHostEnv+"=stubborn")
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		host.Process.Kill()
		host.Wait()
		t.Fatal("the host reported no pids")
	}
	agent, grandchild, ok := pidsLine(sc.Text())
	if !ok {
		t.Fatalf("host said %q", sc.Text())
	}
	t.Cleanup(func() { _ = sigkill(-agent) })
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	waitGroupGone(t, agent, agent, grandchild)
}
