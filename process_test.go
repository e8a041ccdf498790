package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentCommand returns a command that runs this test binary as the agent.
func agentCommand(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ACP_TEST_AGENT="+mode)
	return cmd
}

// runTestAgent is a tiny scripted agent speaking raw JSON lines:
//
//	die:      answers initialize; on session/new writes to stderr and exits 3.
//	stubborn: ignores stdin EOF and SIGTERM, starts a grandchild (sleep),
//	          reports both pids on stderr, and keeps answering.
//	hang:     like stubborn, but never answers initialize.
//	version2: answers initialize with protocol version 2.
//	echo:     answers session/new and session/prompt (end_turn after one chunk).
//	leaveout: on session/new starts a grandchild holding stdout, answers, exits 4.
func runTestAgent(mode string) {
	if mode == "stubborn" || mode == "hang" {
		signal.Ignore(syscall.SIGTERM)
		gc := exec.Command("sleep", "300")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "cannot start grandchild:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "pids %d %d\n", os.Getpid(), gc.Process.Pid)
	}
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var m rawMsg
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			if mode == "hang" {
				continue
			}
			v := 1
			if mode == "version2" {
				v = 2
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": v}})
		case "session/new":
			if mode == "die" {
				fmt.Fprintln(os.Stderr, "fatal: model quota exceeded")
				os.Exit(3)
			}
			if mode == "leaveout" {
				// A grandchild inherits stdout and outlives the agent,
				// which answers and exits at once.
				gc := exec.Command("sleep", "300")
				gc.Stdout = os.Stdout
				if err := gc.Start(); err != nil {
					fmt.Fprintln(os.Stderr, "cannot start grandchild:", err)
					os.Exit(1)
				}
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"sessionId": "p1"}})
				os.Exit(4)
			}
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"sessionId": "p1"}})
		case "session/prompt":
			send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "p1", "update": chunk("pong")}})
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"stopReason": "end_turn"}})
		}
	}
	if mode == "stubborn" || mode == "hang" {
		select {} // stdin closed: keep running until killed
	}
}

// An agent that dies mid-call fails the call promptly with ErrConnClosed —
// never context.Canceled — carrying the exit status and the stderr tail.
func TestAgentDeathMidCall(t *testing.T) {
	var trace syncBuffer
	c, err := Connect(context.Background(), &CommandTransport{Command: agentCommand("die")}, &ClientOptions{Trace: NewTraceWriter(&trace)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
	elapsed := time.Since(start)
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("error = %v, want ErrConnClosed", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("error %v claims to be a cancellation", err)
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("error %v carries no *ExitError", err)
	}
	if ee.ExitCode != 3 || !strings.Contains(ee.StderrTail, "model quota exceeded") {
		t.Errorf("exit error = %+v", ee)
	}
	if !strings.Contains(err.Error(), "session/new") {
		t.Errorf("error %q does not name the method", err)
	}
	// The call has no deadline: it failed because the agent died, not
	// because anything timed out. (It takes a few ms here; a wall-clock
	// bound would flake under -race on a loaded machine.)
	t.Logf("the call failed %v after it was sent", elapsed)
	if err := c.Wait(); !errors.Is(err, ErrConnClosed) {
		t.Errorf("Wait = %v", err)
	}
	if _, err := c.NewSession(context.Background(), nil); !errors.Is(err, ErrConnClosed) {
		t.Errorf("call after death = %v, want ErrConnClosed", err)
	}
	c.Close()
	if !strings.Contains(trace.String(), `"dir":"!","note":"stderr: fatal: model quota exceeded"`) {
		t.Errorf("the trace lacks the stderr line:\n%s", trace.String())
	}
}

// An agent that ignores stdin EOF and SIGTERM and has a grandchild is still
// gone, with its grandchild, when Close returns.
func TestCloseStubbornAgentAndGrandchild(t *testing.T) {
	pids := make(chan []int, 1)
	pr, pw, _ := os.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "pids" {
				a, _ := strconv.Atoi(f[1])
				b, _ := strconv.Atoi(f[2])
				pids <- []int{a, b}
			}
		}
	}()
	defer pr.Close()
	tr := &CommandTransport{Command: agentCommand("stubborn"), ShutdownGrace: 200 * time.Millisecond, TerminateGrace: 200 * time.Millisecond, Stderr: pw}
	c, err := Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ps []int
	select {
	case ps = <-pids:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not report its pids")
	}
	c.Close()
	pw.Close()
	for _, pid := range ps {
		if alive(pid) {
			t.Errorf("process %d survived Close", pid)
			sigkill(pid)
		}
	}
}

func TestVersionMismatchClosesConnection(t *testing.T) {
	cmd := agentCommand("version2")
	_, err := Connect(context.Background(), &CommandTransport{Command: cmd, ShutdownGrace: time.Second}, nil)
	if !errors.Is(err, schema.ErrUnsupportedVersion) {
		t.Fatalf("Connect error = %v, want ErrUnsupportedVersion", err)
	}
	if cmd.ProcessState == nil {
		t.Error("the agent process was not waited for")
	}
}

func TestSubprocessTurn(t *testing.T) {
	c, err := Connect(context.Background(), &CommandTransport{Command: agentCommand("echo")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("ping"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	if got := turn.State().Messages[0].Text; got != "pong" {
		t.Errorf("text = %q", got)
	}
}

// An agent that answers and closes its output at once: the answer is not
// lost to the stop (jrpc2 delivers responses on goroutines that can lose
// that race; the reader waits for them).
func TestAnswerThenEOF(t *testing.T) {
	for i := range 50 {
		c, a := connectRaw(t, nil, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
			errc <- err
		}()
		m := a.expect("session/new")
		a.reply(m, map[string]any{"sessionId": "s1"})
		a.out.Close()
		if err := <-errc; err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		c.Close()
	}
}

// A SIGKILLed agent: the pending call fails with ErrConnClosed and the
// signal in its exit status.
func TestAgentKilledMidCall(t *testing.T) {
	cmd := agentCommand("stubborn")
	c, err := Connect(context.Background(), &CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errc := make(chan error, 1)
	go func() {
		err := c.Call(context.Background(), "_never_answered", nil, nil)
		errc <- err
	}()
	// The stubborn agent ignores unknown methods: the call stays pending.
	sigkill(cmd.Process.Pid)
	err = <-errc
	var ee *ExitError
	if !errors.Is(err, ErrConnClosed) || errors.Is(err, context.Canceled) || !errors.As(err, &ee) {
		t.Fatalf("error = %v", err)
	}
	if ee.Status != "signal: killed" || ee.ExitCode != -1 {
		t.Errorf("exit = %+v", ee)
	}
}

// The issue's own numbers: a 100 MB line against the default 64 MiB cap.
// The pending call fails clearly; the connection serves the next call.
func TestHundredMegabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB through a pipe")
	}
	c, a := connectRaw(t, nil, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		errc <- err
	}()
	m := a.expect("session/new")
	go func() {
		a.write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"sessionId":"big","_meta":{"pad":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 100 {
			a.write(chunk)
		}
		a.write("\"}}}\n")
	}()
	err := <-errc
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "session/new") {
		t.Fatalf("error = %v", err)
	}
	if s := newSessionRaw(t, c, a); s.ID() != "s1" {
		t.Fatal("the connection did not survive")
	}
}
