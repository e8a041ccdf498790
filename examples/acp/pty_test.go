//go:build linux

package main

import (
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
	"unsafe"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// An agent that asks for permission and, while the dialog waits, is
	// silent for a second (long enough for the working spinner to draw
	// several times) before it says "still here".
	acptest.Register("quietdialog", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "e1", Title: "Edit a.go", Kind: "edit", Status: "pending"})
			go func() {
				time.Sleep(time.Second)
				t.Say("still here")
			}()
			t.RequestPermission(map[string]any{"toolCallId": "e1"}, nil)
			return "end_turn", nil
		}})
	})
	// An agent that dies just after its first turn, saying why on stderr.
	acptest.Register("dies", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("bye")
			t.AfterTurn(func() {
				fmt.Fprintln(os.Stderr, "fatal: out of cheese")
				os.Exit(3)
			})
			return "end_turn", nil
		}})
	})
}

// openPTY returns a pseudo-terminal's master and slave ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// screen collects what the program writes to the terminal.
type screen struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  strings.Builder
	seen int // bytes consumed by expect
	eof  bool
}

func (s *screen) read(f *os.File) {
	b := make([]byte, 4096)
	for {
		n, err := f.Read(b)
		s.mu.Lock()
		s.buf.Write(b[:n])
		if err != nil {
			s.eof = true
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// expect waits until want appears after what was already matched. The
// deadline only turns a hang into a failure.
func (s *screen) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.AfterFunc(20*time.Second, func() {
		s.mu.Lock()
		s.eof = true
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer deadline.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if i := strings.Index(s.buf.String()[s.seen:], want); i >= 0 {
			s.seen += i + len(want)
			return
		}
		if s.eof {
			t.Fatalf("never saw %q; the screen after the last match:\n%s", want, s.buf.String()[s.seen:])
		}
		s.cond.Wait()
	}
}

// startPTY runs the command with args on a new pseudo-terminal, as a
// session leader with it as the controlling terminal (so Ctrl-C typed
// there is SIGINT). typ types on the terminal; the command is killed at
// the end of the test if it is still running.
func startPTY(t *testing.T, args ...string) (cmd *exec.Cmd, sc *screen, typ func(string)) {
	t.Helper()
	master, slave := openPTY(t)
	t.Cleanup(func() { master.Close() })
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	sc = &screen{}
	sc.cond = sync.NewCond(&sc.mu)
	go sc.read(master)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, sc, func(s string) {
		if _, err := master.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
}

// mark returns where the last match ended, for all()[mark:].
func (s *screen) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// rest waits for the end of the output and returns what follows the last
// match.
func (s *screen) rest() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.eof {
		s.cond.Wait()
	}
	return s.buf.String()[s.seen:]
}

// all returns everything the program has written so far.
func (s *screen) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// The interactive mode under a pseudo-terminal: Tab completes the client's
// and the agent's slash commands, a permission request opens a dialog (ask
// is the default on a terminal), Ctrl-C cancels the running turn and
// /quit ends the program.
func TestInteractiveTerminal(t *testing.T) {
	cmd, sc, typ := startPTY(t, "--cwd", t.TempDir())

	sc.expect(t, "> ")
	typ("/he\t") // the client's command
	sc.expect(t, "/help ")
	typ("\r")
	sc.expect(t, "commands: /mode")
	sc.expect(t, "agent commands: /help /echo /slow /kill /background")
	sc.expect(t, "> ")
	typ("/ec\t") // the agent's command, from available_commands_update
	sc.expect(t, "/echo ")
	typ("over and out\r")
	sc.expect(t, "over and out")
	sc.expect(t, "[end_turn]")

	sc.expect(t, "> ")
	typ("hello\r")
	sc.expect(t, "[permission] Write acp-demo.txt? (edit)")
	sc.expect(t, "2) Reject [reject_once]")
	sc.expect(t, "choose: ")
	typ("2\r")
	sc.expect(t, "I did not write acp-demo.txt")
	sc.expect(t, `You said: "hello"`)
	sc.expect(t, "[end_turn]")

	sc.expect(t, "> ")
	typ("/slow\r")
	sc.expect(t, "chunk 1 ")
	typ("\x03") // Ctrl-C: SIGINT to the foreground process group
	sc.expect(t, "cancelling (Ctrl-C again to exit)")
	sc.expect(t, "[cancelled]")

	sc.expect(t, "> ")
	typ("/quit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// Ctrl-C while the permission dialog waits cancels the turn, as it does
// anywhere in a turn (the request is answered cancelled), and the session
// goes on at the prompt.
func TestCtrlCInPermissionDialog(t *testing.T) {
	cmd, sc, typ := startPTY(t, "--cwd", t.TempDir())
	sc.expect(t, "> ")
	typ("hello\r")
	sc.expect(t, "[permission] Write acp-demo.txt? (edit)")
	sc.expect(t, "choose: ")
	typ("\x03")
	sc.expect(t, "cancelling (Ctrl-C again to exit)")
	sc.expect(t, "[permission] Write acp-demo.txt?: cancelled")
	sc.expect(t, "[cancelled]")
	sc.expect(t, "> ")
	typ("hello again\r") // the session is still there
	sc.expect(t, "choose: ")
	typ("2\r")
	sc.expect(t, `You said: "hello again"`)
	sc.expect(t, "[end_turn]")
	sc.expect(t, "> ")
	typ("/quit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// The working spinner stops while the permission dialog waits for an
// answer: it does not draw over the "choose:" prompt.
func TestSpinnerStopsDuringDialog(t *testing.T) {
	cmd, sc, typ := startPTY(t, append([]string{"--cwd", t.TempDir()}, childAgentArgs(t, "quietdialog")...)...)
	sc.expect(t, "> ")
	typ("go\r")
	sc.expect(t, "choose: ")
	from := sc.mark()
	sc.expect(t, "still here")
	if shown := sc.all()[from:]; strings.Contains(shown, "working") {
		t.Errorf("the spinner drew over the dialog: %q", shown)
	}
	typ("2\r")
	sc.expect(t, "[end_turn]")
	sc.expect(t, "> ")
	typ("/quit\r")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// At an idle prompt Ctrl-C ends the command with status 130 and Ctrl-D
// with 0, each on a line of its own (the terminal is raw at the prompt,
// so both come as keys, and the line editor reports both as io.EOF).
func TestCtrlCAndCtrlDAtPrompt(t *testing.T) {
	for _, tc := range []struct {
		key    string
		status int
		rest   string // what follows the prompt
	}{
		{"\x03", 130, "\r\nacp: interrupt: the agent was shut down\r\n"},
		{"\x04", 0, "\r\n"},
	} {
		t.Run(fmt.Sprintf("%q", tc.key), func(t *testing.T) {
			cmd, sc, typ := startPTY(t, "--cwd", t.TempDir())
			sc.expect(t, "> ")
			typ(tc.key)
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.status {
				t.Errorf("exit status %d, want %d", code, tc.status)
			}
			if rest := sc.rest(); rest != tc.rest {
				t.Errorf("after the prompt: %q, want %q", rest, tc.rest)
			}
		})
	}
}

// With --restart=false, an agent that dies while the prompt waits is
// reported at once, with its exit status and the tail of its stderr, and
// the command exits 1, rather than prompting on for a connection that is
// gone. (By default it is restarted: restart_test.go.)
func TestAgentDiesAtPrompt(t *testing.T) {
	cmd, sc, typ := startPTY(t, append([]string{"--restart=false", "--cwd", t.TempDir()}, childAgentArgs(t, "dies")...)...)
	sc.expect(t, "> ")
	typ("go\r")
	sc.expect(t, "[end_turn]")
	sc.expect(t, "acp: the agent has gone: connection closed: agent exit status 3; stderr tail:")
	sc.expect(t, "fatal: out of cheese")
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	if all := sc.all(); strings.Contains(all, "acp: acp:") {
		t.Errorf("a doubled prefix:\n%s", all)
	}
}

// On a terminal too, a failed tool call's line says why (with --fs off the
// demo's allowed write is skipped), escaped like every agent string.
func TestFailedToolCallShowsWhyInTerminal(t *testing.T) {
	cmd, sc, _ := startPTY(t, "--cwd", t.TempDir(), "--permission", "allow", "-p", "write it")
	sc.expect(t, "[tool] Write acp-demo.txt: failed: Skipped: the client does not offer fs/write_text_file.")
	sc.expect(t, "[end_turn]")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// --help on a terminal shows the examples, the interactive commands and the
// exit statuses, and exits 0.
func TestHelpInTerminal(t *testing.T) {
	cmd, sc, _ := startPTY(t, "--help")
	for _, want := range []string{"usage: acp", "examples:", "interactive commands:", "/quit", "exit status:", "130"} {
		sc.expect(t, want)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
