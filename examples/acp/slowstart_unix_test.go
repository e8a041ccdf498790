//go:build unix

package main

// The note for an agent slow to answer initialize, through the real command.

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpclient/acp/acptest"
)

// envStartFIFO names a FIFO the "slowstart" agent opens before it serves:
// it starts only once the test opens the other end.
const envStartFIFO = "ACP_TEST_START_FIFO"

func init() {
	acptest.Register("slowstart", func() *acptest.Agent {
		if f, err := os.Open(os.Getenv(envStartFIFO)); err == nil {
			f.Close()
		}
		return acptest.New(nil)
	})
}

// An agent slow to answer initialize gets one line saying what the
// command waits for; once it answers, the session goes on as usual.
func TestSlowStartSaysWhatItWaitsFor(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "start")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	agent := append([]string{"--", "env", "-u", cliMainEnv, envStartFIFO + "=" + fifo}, agentArgs(t, "slowstart")[1:]...)
	cmd := exec.Command(os.Args[0], append([]string{"--cwd", t.TempDir(), "-p", "hi"}, agent...)...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil || line != "acp: starting env and waiting for its initialize answer…\n" {
		t.Fatalf("first stderr line %q, %v", line, err)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	rest, _ := io.ReadAll(br)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit %v: %s", err, rest)
	}
	if strings.Contains(string(rest), "acp: starting") || !strings.Contains(string(rest), "[end_turn]") {
		t.Errorf("after the start:\n%s", rest)
	}
}
