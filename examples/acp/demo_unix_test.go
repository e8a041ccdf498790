//go:build unix

package main

// The walk-through's other way to kill the demo: `kill -9 PID` from
// another terminal, with the pid the command printed, during /slow.

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestDemoKilledFromOutside(t *testing.T) {
	args := append(stateDir(t), "--cwd", t.TempDir(), "--restart", "-p", "/slow", "-p", "/echo back")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
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
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	// The pid from the agent line on stderr; the rest of stderr kept.
	var errOut bytes.Buffer
	pids := make(chan int, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		br := bufio.NewReader(stderr)
		re := regexp.MustCompile(`^acp: ACP demo agent \(pid (\d+)\)`)
		for {
			line, err := br.ReadString('\n')
			errOut.WriteString(line)
			if m := re.FindStringSubmatch(line); m != nil {
				pid, _ := strconv.Atoi(m[1])
				pids <- pid
			}
			if err != nil {
				close(pids)
				return
			}
		}
	})
	pid, ok := <-pids
	if !ok {
		cmd.Wait()
		t.Fatalf("no agent line with a pid:\n%s", errOut.String())
	}
	// Kill it once /slow is streaming: its 50 chunks take a second.
	br := bufio.NewReader(stdout)
	var out bytes.Buffer
	for !strings.Contains(out.String(), "chunk 1 of 50.") {
		b, err := br.ReadByte()
		if err != nil {
			t.Fatalf("stdout ended before /slow streamed: %q", out.String())
		}
		out.WriteByte(b)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	out.Write(rest)
	wg.Wait()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1 (a -p turn was lost)", err)
	}
	if !strings.Contains(errOut.String(), "acp: the agent died (signal: killed); restarting it") ||
		!regexp.MustCompile(`acp: the agent is back \(connection 2, pid \d+\); restored session demo-`).MatchString(errOut.String()) {
		t.Errorf("stderr:\n%s", errOut.String())
	}
	if !strings.HasSuffix(out.String(), "back\n") || strings.Contains(out.String(), "chunk 50 of 50") {
		t.Errorf("stdout:\n%s", out.String())
	}
}
