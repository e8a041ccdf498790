//go:build linux

package workspace_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"
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
	_, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{
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

// Pdeathsig fires when the thread that started the command exits, and the
// Go runtime retires a thread when a goroutine locked to it exits. A
// command started from such a goroutine must not die with that thread.
func TestTerminalSurvivesRetiredStarterThread(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	m := &workspace.Terminals{Roots: []string{root}}
	defer m.Close()
	type result struct {
		id  string
		tid int
		err error
	}
	res := make(chan result, 1)
	var r result
	for r.id == "" {
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == os.Getpid() {
				// The runtime never retires the main thread: try another.
				runtime.UnlockOSThread()
				res <- result{}
				return
			}
			// Never unlocked: the thread is retired when this returns.
			c, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{
				SessionID: "s", Command: "sh", Args: []string{"-c", `read x < "$0"; echo "got $x"`, fifo},
			})
			if err != nil {
				res <- result{err: err}
				return
			}
			res <- result{c.TerminalID, syscall.Gettid(), nil}
		}()
		if r = <-res; r.err != nil {
			t.Fatal(r.err)
		}
	}
	task := fmt.Sprintf("/proc/self/task/%d", r.tid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d was not retired", r.tid)
		}
	}
	// The thread is gone, so a Pdeathsig would have been sent. Hand the
	// command its line: opening the FIFO without blocking succeeds once the
	// command has it open for reading, which a killed command never will.
	var w *os.File
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never opened its FIFO: it died with the thread that started it")
		}
	}
	_, err := w.WriteString("alive\n")
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: r.id})
	if err != nil || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("wait = %+v, %v; want exit code 0", st, err)
	}
	out, err := m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: "s", TerminalID: r.id})
	if err != nil || out.Output != "got alive\n" {
		t.Errorf("output = %+v, %v; want got alive", out, err)
	}
}
