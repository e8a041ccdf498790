package acp

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
	"golang.org/x/sys/unix"
)

// pipeSize reports the capacity of the pipe f is an end of.
func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	if err := rc.Control(func(fd uintptr) { n, serr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return n
}

// burstAgent writes 600 000 bytes to stdout, then "done" to stderr, then
// waits for its stdin to end.
func burstAgent() *exec.Cmd {
	return exec.Command("/bin/sh", "-c", "head -c 600000 /dev/zero; echo done >&2; exec cat >/dev/null")
}

// With PipeBytes, an agent's burst larger than the kernel's default pipe
// is written before the client reads any of it: the agent reports it is
// past its write while nothing reads its stdout. Without, its pipe is the
// kernel's default, which that burst does not fit.
func TestCommandTransportPipeBytes(t *testing.T) {
	done := make(chan struct{})
	tr := &CommandTransport{
		Command:   burstAgent(),
		PipeBytes: 1 << 20,
		Stderr: lineFunc(func(line string) {
			if strings.TrimSpace(line) == "done" {
				close(done)
			}
		}),
		ShutdownGrace: 5 * time.Second,
	}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n := pipeSize(t, conn.(*link).r.(*exitReader).f); n < 1<<20 {
		t.Errorf("the agent's stdout holds %d bytes, want at least %d", n, 1<<20)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent is still writing its 600 000 bytes, none of them read: the pipe was not grown")
	}

	plain := &CommandTransport{Command: burstAgent(), ShutdownGrace: time.Second, TerminateGrace: time.Second}
	conn2, err := plain.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if n := pipeSize(t, conn2.(*link).r.(*exitReader).f); n >= 600000 {
		t.Errorf("with PipeBytes zero the agent's stdout holds %d bytes, want the kernel's default", n)
	}
}

// A size the kernel refuses (MaxInt, past the 2 GiB it allows anyone)
// leaves the pipe as it was, and the agent runs and answers.
func TestCommandTransportPipeBytesRefused(t *testing.T) {
	tr := &CommandTransport{Command: agentCommand("echo"), PipeBytes: math.MaxInt}
	c, err := Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("an agent whose pipe size was refused did not start: %v", err)
	}
	defer c.Close()
	if _, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatalf("the agent did not answer: %v", err)
	}
	def := &CommandTransport{Command: burstAgent(), ShutdownGrace: time.Second, TerminateGrace: time.Second}
	conn, err := def.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := pipeSize(t, conn.(*link).r.(*exitReader).f)
	if err := setPipeSize(conn.(*link).r.(*exitReader).f, math.MaxInt); err == nil {
		t.Fatal("the kernel took a pipe of MaxInt bytes")
	}
	if got := pipeSize(t, conn.(*link).r.(*exitReader).f); got != want {
		t.Errorf("a refused size changed the pipe from %d to %d bytes", want, got)
	}
}
