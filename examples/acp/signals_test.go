//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"
)

// markEnv names the file the "sigterm-marker" agent creates when it gets
// SIGTERM.
const markEnv = "ACP_CLI_TEST_SIGTERM_MARK"

func init() {
	// An agent like claude-agent-acp: it ignores stdin EOF, has a child
	// that shares its stdout, and never ends the turn by itself. It exits
	// on SIGTERM, first leaving a mark that the staged shutdown reached it.
	acptest.Register("sigterm-marker", func() *acptest.Agent {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			_ = os.WriteFile(os.Getenv(markEnv), []byte("SIGTERM\n"), 0o644)
			os.Exit(0)
		}()
		return acptest.New(&acptest.Options{
			IgnoreStdinEOF:  true,
			SpawnGrandchild: true,
			OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
				t.Say("working")
				select {}
			},
		})
	})
}

// The command killed mid-turn by SIGTERM (as timeout does) or SIGHUP (a
// closed terminal), or interrupted while it waits for the next prompt,
// shuts the agent down in stages, so the agent gets its SIGTERM, and exits
// 128+signal with neither the agent nor its child left.
func TestSignalShutsAgentDown(t *testing.T) {
	for _, tc := range []struct {
		sig    syscall.Signal
		prompt bool // -p (mid-turn); else interactive, between turns
	}{
		{syscall.SIGTERM, true},
		{syscall.SIGHUP, true},
		{syscall.SIGINT, false},
	} {
		sig := tc.sig
		t.Run(sig.String(), func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "mark")
			t.Setenv(markEnv, mark)
			agent := childAgentArgs(t, "sigterm-marker")
			args := []string{"--json", "--stderr"}
			ready := `"working"` // the turn is under way
			if tc.prompt {
				args = append(args, "-p", "work")
			} else {
				ready = `"event":"session"` // next, it reads a prompt
			}
			cmd := exec.Command(os.Args[0], append(args, agent...)...)
			cmd.Env = append(os.Environ(), cliMainEnv+"=1")
			stdin, err := cmd.StdinPipe() // open, so no EOF ends the command
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Turns a command that ignores the signal into a failure.
			hung := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
			defer hung.Stop()
			grandchild := make(chan int, 1)
			var errOut bytes.Buffer
			stderrDone := make(chan struct{})
			go func() {
				defer close(stderrDone)
				defer close(grandchild)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					errOut.WriteString(sc.Text() + "\n")
					if pid, ok := strings.CutPrefix(sc.Text(), "acptest: grandchild pid="); ok {
						n, _ := strconv.Atoi(pid)
						grandchild <- n
					}
				}
			}()
			var out bytes.Buffer
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), ready) {
					break
				}
			}
			gc, ok := <-grandchild
			if !ok {
				t.Fatalf("the agent never reported its child\nstdout:\n%s", out.String())
			}
			_, pgid, ok := proctest.State(gc)
			if !ok {
				t.Fatalf("grandchild %d is not running", gc)
			}
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
			}
			<-stderrDone
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("the command ended with %v, want exit status %d\nstdout:\n%s\nstderr:\n%s", err, 128+int(sig), out.String(), errOut.String())
			}
			if _, err := os.Stat(mark); err != nil {
				t.Errorf("the agent never got SIGTERM: %v", err)
			}
			if !strings.Contains(out.String(), `{"event":"error","message":"`+sig.String()+`: the agent was shut down`) {
				t.Errorf("no error event for the signal:\n%s", out.String())
			}
			// The command has exited: nothing of the agent's may be left.
			if m := proctest.GroupMembers(pgid); len(m) > 0 {
				t.Errorf("the agent's process group still has %v", m)
			}
		})
	}
}

// SIGTERM while the command waits at its prompt on a terminal, where the
// line editor has put the terminal in raw mode: the command exits 143 and
// leaves the terminal as it found it (echo, line editing), not raw.
func TestSignalAtPromptRestoresTerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	cmd := exec.Command(os.Args[0], "--cwd", t.TempDir())
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer hung.Stop()
	sc := &screen{}
	sc.cond = sync.NewCond(&sc.mu)
	go sc.read(master)

	const cooked = syscall.ECHO | syscall.ICANON
	sc.expect(t, "> ") // written by the line editor, after it made the terminal raw
	if lflag(t, slave)&cooked != 0 {
		t.Fatal("the terminal is not raw at the prompt")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("the command ended with %v, want exit status 143", err)
	}
	if lflag(t, slave)&cooked != cooked {
		t.Error("the command left the terminal raw")
	}
}

// lflag returns the terminal's local mode flags.
func lflag(t *testing.T, f *os.File) uint32 {
	t.Helper()
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatalf("TCGETS: %v", e)
	}
	return tio.Lflag
}

// Under nohup SIGHUP arrives ignored, and the command must keep it so:
// catching it to shut down would undo nohup.
func TestNohupKeepsSIGHUPIgnored(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup here")
	}
	cmd := exec.Command(nohup, os.Args[0], "--json", "--cwd", t.TempDir())
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	stdin, err := cmd.StdinPipe() // open, so no EOF ends the command
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hung := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer hung.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), `"event":"session"`) {
	}
	ignored, caught := signalMasks(t, cmd.Process.Pid)
	const hup = 1 << (syscall.SIGHUP - 1)
	if ignored&hup == 0 || caught&hup != 0 {
		t.Errorf("SIGHUP is not ignored (SigIgn %x, SigCgt %x)", ignored, caught)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("the command ended with %v, want exit status 143", err)
	}
}

// signalMasks returns the ignored and caught signal masks of pid.
func signalMasks(t *testing.T, pid int) (ignored, caught uint64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		switch k {
		case "SigIgn":
			ignored = n
		case "SigCgt":
			caught = n
		}
	}
	return ignored, caught
}
