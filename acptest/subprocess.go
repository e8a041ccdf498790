package acptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// EnvAgent is the environment variable that makes a test binary run as a
// registered agent (see [MainIfAgent]).
const EnvAgent = "ACPTEST_AGENT"

// grandchildName is the registered name a SpawnGrandchild agent runs its
// child under: it just sleeps until killed.
const grandchildName = "acptest.grandchild"

var (
	regMu    sync.Mutex
	registry = map[string]func() *Agent{}
)

// Register makes an agent available to [Command] under name. Call it
// before [MainIfAgent], typically from TestMain or a package-level var.
// f runs in the subprocess, and only in the one that is that agent: the
// code around the Register calls runs in every process of the test
// binary (each agent [Command] starts is one), so what only one agent
// needs — a long history, a large file — is best built inside its f.
func Register(name string, f func() *Agent) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[name] = f
}

// MainIfAgent turns the current process into an agent if it was started
// by [Command]: if the environment variable ACPTEST_AGENT names a
// registered agent, it serves stdin/stdout and exits (status 0 at stdin
// EOF, unless Options.IgnoreStdinEOF). Otherwise it returns at once. Call
// it first in TestMain:
//
//	func TestMain(m *testing.M) {
//		acptest.Register("echo", func() *acptest.Agent { return acptest.New(&acptest.Options{...}) })
//		acptest.MainIfAgent()
//		os.Exit(m.Run())
//	}
func MainIfAgent() {
	name := os.Getenv(EnvAgent)
	if name == "" {
		return
	}
	if name == grandchildName {
		for {
			time.Sleep(time.Hour)
		}
	}
	regMu.Lock()
	f := registry[name]
	regMu.Unlock()
	if f == nil {
		fmt.Fprintf(os.Stderr, "acptest: no agent registered as %q\n", name)
		os.Exit(2)
	}
	a := f()
	a.subprocess = true
	err := a.Serve(context.Background(), os.Stdin, os.Stdout)
	if a.opts.IgnoreStdinEOF {
		for {
			time.Sleep(time.Hour)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acptest: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns a command that runs the registered agent name by
// re-executing the test binary (os.Args[0]) with -test.run=^$ and
// ACPTEST_AGENT=name; args follow, and the agent can read them with
// [Args]. Start it like any agent: its stdin and stdout speak ACP and its
// stderr is the agent's log.
func Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), EnvAgent+"="+name)
	return cmd
}

// Args returns the arguments given to [Command] after the name, when
// called in the agent subprocess.
func Args() []string {
	if len(os.Args) < 2 {
		return nil
	}
	return os.Args[2:]
}

// startSubprocessExtras spawns the grandchild once per agent.
func (c *Conn) startSubprocessExtras() {
	a := c.a
	if !a.subprocess || !a.opts.SpawnGrandchild {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.grandchildPID != 0 {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), EnvAgent+"="+grandchildName)
	// Sharing stdout is the point: the client sees no EOF on the agent's
	// stdout until the grandchild dies too.
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "acptest: spawning grandchild: %v\n", err)
		return
	}
	a.grandchildPID = cmd.Process.Pid
	fmt.Fprintf(os.Stderr, "acptest: grandchild pid=%d\n", a.grandchildPID)
	go func() { _ = cmd.Wait() }()
}
