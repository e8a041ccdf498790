//go:build linux

package workspace_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/workspace"
)

// hostRootEnv carries the terminal host's workspace root.
const hostRootEnv = "ACP_WORKSPACE_TEST_ROOT"

func init() { helpers["terminal-host"] = runTerminalHost }

// runTerminalHost is a client process: it runs a command through
// Terminals that starts a child and waits, prints the command's
// "pids COMMAND CHILD" line on stdout and then waits to be killed.
func runTerminalHost() {
	lines := make(chan string, 1)
	var buf bytes.Buffer // only the terminal's reader goroutine touches it
	m := &workspace.Terminals{
		Roots: []string{os.Getenv(hostRootEnv)},
		OnOutput: func(_ string, chunk []byte) {
			buf.Write(chunk)
			if line, _, ok := bytes.Cut(buf.Bytes(), []byte("\n")); ok {
				select {
				case lines <- string(line):
				default:
				}
			}
		},
	}
	_, err := m.CreateTerminal(context.Background(), &acp.CreateTerminalRequest{
		SessionID: "s",
		Command:   "sh",
		Args:      []string{"-c", "sleep 300 & echo pids $$ $!; wait"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
	fmt.Println(<-lines)
	select {} // until killed
}

// A client killed by SIGKILL cannot release its terminals, yet the command
// it ran and the command's child do not outlive it.
func TestHostKilledTerminalTreeDies(t *testing.T) {
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperEnv+"=terminal-host", hostRootEnv+"="+t.TempDir())
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
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatal("the host reported no pids")
	}
	f := strings.Fields(sc.Text())
	if len(f) != 3 || f[0] != "pids" {
		f = []string{"", "", ""} // refused below
	}
	command, err1 := strconv.Atoi(f[1])
	child, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || command <= 1 || child <= 1 {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("host said %q", sc.Text())
	}
	// The command leads its process group; if the test fails, end it.
	t.Cleanup(func() { _ = syscall.Kill(-command, syscall.SIGKILL) })
	for _, pid := range []int{command, child} {
		if !proctest.Alive(pid) {
			t.Fatalf("pid %d is not running before the host is killed", pid)
		}
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	proctest.WaitGroupGone(t, command, command, child)
}
