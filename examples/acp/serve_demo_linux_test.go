//go:build linux

package main

// acp serve's WebSocket URL and agent pid lines, with the built-in demo.

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// `acp serve` with the demo says the endpoint's WebSocket URL beside the
// HTTP one, and logs the pid of each agent it starts; a client on the
// WebSocket URL runs a turn, and a second connection (a second demo
// process) continues its session.
func TestServeShowsWebSocketURLAndPIDs(t *testing.T) {
	t.Setenv(demoStateEnv, t.TempDir())
	s := startServe(t, "--listen", "127.0.0.1:0")
	ws := "ws" + strings.TrimPrefix(s.url, "http")
	out, errOut, code := runCLI(t, "", "--url", ws, "--json", "-p", "/echo over the socket")
	if code != 0 || !strings.Contains(out, "over the socket") {
		t.Fatalf("--url %s: exit %d: %s%s", ws, code, out, errOut)
	}
	// The next connection's demo process resumes the first one's session
	// (they share the state directory).
	sid := parseEvents(t, out)[0]["sessionId"].(string)
	out, errOut, code = runCLI(t, "", "--url", ws, "--session", sid, "-p", "/echo again")
	if code != 0 || !strings.Contains(out, "again") || !strings.Contains(errOut, "session "+sid) {
		t.Fatalf("--url %s --session %s: exit %d: %s%s", ws, sid, code, out, errOut)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.stderrDone
	s.cmd.Wait()
	errOut = s.stderr()
	if !strings.Contains(errOut, "acp serve: Streamable HTTP at "+s.url+", WebSocket at "+ws+"\n") {
		t.Errorf("no WebSocket URL on stderr:\n%s", errOut)
	}
	pids := regexp.MustCompile(`msg="agent started" pid=(\d+) `).FindAllStringSubmatch(errOut, -1)
	if len(pids) != 2 || pids[0][1] == pids[1][1] {
		t.Errorf("want two agents' pids logged, got %v:\n%s", pids, errOut)
	}
}
