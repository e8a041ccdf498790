//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/registry"
)

// served is a running `acp serve` subprocess.
type served struct {
	cmd        *exec.Cmd
	url        string
	grandchild chan int
	draining   chan struct{} // closed at the "draining" line
	errMu      sync.Mutex
	errOut     bytes.Buffer
	stderrDone chan struct{}
}

func (s *served) stderr() string {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.errOut.String()
}

// startServe runs `acp serve ARGS` as a process and reads the URL from its
// first stdout line.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve"}, args...)...)
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
	s := &served{cmd: cmd, grandchild: make(chan int, 16), draining: make(chan struct{}), stderrDone: make(chan struct{})}
	hung := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	t.Cleanup(func() {
		hung.Stop()
		_ = cmd.Process.Kill()
		<-s.stderrDone
		_ = cmd.Wait()
	})
	go func() {
		defer close(s.stderrDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.errMu.Lock()
			s.errOut.WriteString(sc.Text() + "\n")
			s.errMu.Unlock()
			if pid, ok := strings.CutPrefix(sc.Text(), "acptest: grandchild pid="); ok {
				n, _ := strconv.Atoi(pid)
				s.grandchild <- n
			}
			if sc.Text() == "acp serve: draining" {
				close(s.draining)
			}
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		<-s.stderrDone
		t.Fatalf("no URL line: %v\nstderr:\n%s", err, s.stderr())
	}
	s.url = strings.TrimSpace(line)
	go io.Copy(io.Discard, stdout)
	return s
}

func post(t *testing.T, url, token, conn, session, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if conn != "" {
		req.Header.Set("Acp-Connection-Id", conn)
	}
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// openSSE opens a stream and returns its data lines on a channel.
func openSSE(t *testing.T, url, token, conn, session string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Acp-Connection-Id", conn)
	if session != "" {
		req.Header.Set("Acp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

func waitFor(t *testing.T, ch <-chan string, substr string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %q", substr)
			}
			if strings.Contains(d, substr) {
				return d
			}
		case <-timeout:
			t.Fatalf("no %q on the stream in 30s", substr)
		}
	}
}

// `acp serve --listen 127.0.0.1:0 --token T -- AGENT` prints its URL
// first, refuses requests without the token, serves a turn, and on
// SIGTERM drains: the agent (which ignores stdin EOF and has a child)
// gets its SIGTERM from the staged shutdown, nothing of it is left, and
// the command exits 0. While it drains (the turn runs on, to the
// --drain-timeout), a new connection gets 503 and the health check 503.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv(markEnv, mark)
	agent := childAgentArgs(t, "sigterm-marker")
	s := startServe(t, append([]string{"--listen", "127.0.0.1:0", "--token", "tok", "--drain-timeout", "2s"}, agent...)...)
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || !strings.HasSuffix(s.url, "/acp") || strings.HasSuffix(s.url, ":0/acp") {
		t.Fatalf("first line %q, want the bound endpoint URL", s.url)
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	if code, _, _ := post(t, s.url, "", "", "", initialize); code != 401 {
		t.Fatalf("without the token: %d", code)
	}
	code, h, body := post(t, s.url, "tok", "", "", initialize)
	conn := h.Get("Acp-Connection-Id")
	if code != 200 || conn == "" {
		t.Fatalf("initialize: %d %s\nstderr:\n%s", code, body, s.stderr())
	}
	connStream := openSSE(t, s.url, "tok", conn, "")
	if code, _, body := post(t, s.url, "tok", conn, "", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`); code != 202 {
		t.Fatalf("session/new: %d %s", code, body)
	}
	var resp struct {
		Result struct{ SessionID string } `json:"result"`
	}
	json.Unmarshal([]byte(waitFor(t, connStream, `"id":1`)), &resp)
	sid := resp.Result.SessionID
	sess := openSSE(t, s.url, "tok", conn, sid)
	if code, _, body := post(t, s.url, "tok", conn, sid, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"work"}]}}`); code != 202 {
		t.Fatalf("prompt: %d %s", code, body)
	}
	waitFor(t, sess, "working")
	var gc int
	select {
	case gc = <-s.grandchild:
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent never reported its child\nstderr:\n%s", s.stderr())
	}
	_, pgid, ok := proctest.State(gc)
	if !ok {
		t.Fatalf("grandchild %d is not running", gc)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })

	healthURL := strings.TrimSuffix(s.url, "/acp") + "/healthz"
	// One keep-alive connection for the health checks, counted: the
	// drain must not close it (a proxy's idle connection closed just as
	// its next POST arrives is how a prompt the backend served gets sent
	// again, to the other backend: serve.go).
	var dials atomic.Int64
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	defer hc.CloseIdleConnections()
	if resp, err := hc.Get(healthURL); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz while serving: %v %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// While it drains (the turn never ends by itself: the drain lasts
	// its --drain-timeout), the listener stays open for the running
	// turns' requests; a new connection gets 503 with Retry-After (the
	// proxies in docs/deploy retry it on another backend), and the
	// health check 503.
	<-s.draining
	if code, h, body := post(t, s.url, "tok", "", "", initialize); code != 503 || h.Get("Retry-After") == "" {
		t.Errorf("initialize while draining: %d %q, want 503 with Retry-After", code, body)
	}
	health, err := hc.Get(healthURL)
	if err != nil {
		t.Fatal(err)
	}
	health.Body.Close()
	if health.StatusCode != 503 {
		t.Errorf("/healthz while draining: %d, want 503", health.StatusCode)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the health checks took %d TCP connections: the drain closed the idle keep-alive one", n)
	}
	<-s.stderrDone
	err = s.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil {
		t.Errorf("acp serve exited %v after SIGTERM, want 0\nstderr:\n%s", err, s.stderr())
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the agent never got SIGTERM: %v", err)
	}
	if m := proctest.GroupMembers(pgid); len(m) > 0 {
		t.Errorf("the agent's process group still has %v", m)
	}
	// The session stream ended with the drain.
	for range sess {
	}
}

// Without a token on loopback, only loopback Host names are served (DNS
// rebinding); the demo agent is the default agent.
func TestServeLoopbackHosts(t *testing.T) {
	s := startServe(t, "--listen", "127.0.0.1:0")
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	if code, h, body := post(t, s.url, "", "", "", initialize); code != 200 || h.Get("Acp-Connection-Id") == "" || !strings.Contains(body, `"protocolVersion":1`) {
		t.Fatalf("initialize: %d %s\nstderr:\n%s", code, body, s.stderr())
	}
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(initialize))
	req.Host = "rebound.example"
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("a foreign Host: %d", resp.StatusCode)
	}
}

// `acp serve --agent ID` resolves (and downloads, once) the registry's
// agent at start and runs it for each connection.
func TestServeAgentFromRegistry(t *testing.T) {
	platform := registry.Platform(runtime.GOOS, runtime.GOARCH)
	isolateCache(t)
	archive := zipOfSelf(t, "demo/demo-agent")
	sum := sha256.Sum256(archive)
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		w.Write(archive)
	}))
	defer srv.Close()
	file := writeRegistry(t, registry.Agent{ID: "demo", Name: "Demo", Version: "1.0.0", Description: "the demo agent", Distribution: registry.Distribution{
		Binary: map[string]registry.BinaryTarget{platform: {
			Archive: srv.URL + "/demo.zip", SHA256: hex.EncodeToString(sum[:]),
			Cmd: "./demo/demo-agent", Env: map[string]string{demoEnv: "1"},
		}}}})
	s := startServe(t, "--listen", "127.0.0.1:0", "--agent", "demo", "--registry", file)
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	for range 2 {
		if code, h, body := post(t, s.url, "", "", "", initialize); code != 200 || h.Get("Acp-Connection-Id") == "" || !strings.Contains(body, `"protocolVersion":1`) {
			t.Fatalf("initialize: %d %s\nstderr:\n%s", code, body, s.stderr())
		}
	}
	if n := downloads.Load(); n != 1 {
		t.Fatalf("%d downloads", n)
	}
}

// `acp --url` against `acp serve` (the demo agent behind it), both
// profiles, with a token: the two halves of the remote story together, as
// a user runs them. The turn ends as against the local demo agent: the same
// messages in its state, a permission asked (how the demo agent splits its
// text into chunks varies from run to run, so the update count does not).
func TestURLAgainstServe(t *testing.T) {
	s := startServe(t, "--listen", "127.0.0.1:0", "--token", "T")
	local, errOut, code := runCLI(t, "", "--json", "-p", "hello")
	if code != 0 {
		t.Fatalf("local demo agent: exit %d: %s", code, errOut)
	}
	messages := func(evs []event) string {
		b, _ := json.Marshal(evs[len(evs)-1]["state"].(map[string]any)["messages"])
		return string(b)
	}
	want := messages(parseEvents(t, local))
	for _, u := range []string{s.url, strings.Replace(s.url, "http://", "ws://", 1)} {
		out, errOut, code := runCLI(t, "", "--json", "-p", "hello", "--url", u, "--header", "Authorization: Bearer T")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s\nserve stderr:\n%s", u, code, errOut, s.stderr())
		}
		evs := parseEvents(t, out)
		k := kinds(evs)
		if len(k) < 3 || k[0] != "session" || k[len(k)-1] != "turn_end" || !slices.Contains(k, "permission") {
			t.Fatalf("%s: events %v", u, k)
		}
		if got := messages(evs); got != want {
			t.Errorf("%s: turn_end messages %s; want %s (as against the local agent)", u, got, want)
		}
		if out, _, code := runCLI(t, "", "--json", "-p", "hello", "--url", u); code != 1 || !strings.Contains(out, "401") {
			t.Errorf("%s without the token: exit %d, %s", u, code, out)
		}
	}
}

// `acp serve --listen 127.0.0.2:0` (any loopback address) answers on the
// URL it prints: the default Host check accepts every loopback address.
func TestServeOtherLoopbackAddress(t *testing.T) {
	s := startServe(t, "--listen", "127.0.0.2:0")
	if !strings.HasPrefix(s.url, "http://127.0.0.2:") {
		t.Fatalf("URL %q", s.url)
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	if code, _, body := post(t, s.url, "", "", "", initialize); code != 200 {
		t.Fatalf("initialize on the printed URL: %d %s\nstderr:\n%s", code, body, s.stderr())
	}
}

// agentGroups lists the process groups of the live (not zombie) children
// of pid: one per agent process, which CommandTransport starts in a group
// of its own (with a watchdog shell that shares the group).
//
// Two things keep the count from exceeding what was alive at one moment.
// A scan of /proc is not a snapshot: an agent read early in it may exit,
// and the one started in its slot be listed later in the same scan. So
// every process found is read again after the scan (its start time the
// same, against a reused pid), and only those alive at both reads count:
// each was alive from its first read to its second, and every first read
// comes before every second, so all of them were alive together when the
// scan ended. And a child between fork and setpgid (the watchdog is
// started after its agent, into the agent's group) is still in the
// parent's group: it is not a group of its own, so the parent's group is
// never counted.
func agentGroups(pid int) map[int]bool {
	type proc struct{ pgrp, start string }
	stat := func(name string) (p proc, ppid string, ok bool) {
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			return p, "", false
		}
		// pid (comm) state ppid pgrp ... starttime (the 22nd field): comm
		// may hold spaces, so cut at the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			return p, "", false
		}
		return proc{pgrp: f[2], start: f[19]}, f[1], true
	}
	own, _, _ := stat(strconv.Itoa(pid))
	found := map[string]proc{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if p, ppid, ok := stat(d.Name()); ok && ppid == strconv.Itoa(pid) && p.pgrp != own.pgrp {
			found[d.Name()] = p
		}
	}
	groups := map[int]bool{}
	for name, p := range found {
		if again, _, ok := stat(name); ok && again == p {
			g, _ := strconv.Atoi(p.pgrp)
			groups[g] = true
		}
	}
	return groups
}

// `acp serve --max-connections 4` against clients that connect and hang
// up at once, retrying on 503 until two slots' worth of agents have come
// and gone, and bogus WebSocket upgrades beside them all along, with an
// agent that ignores stdin EOF (so each takes the staged shutdown's grace
// to exit): never more than 4 agent processes alive, counted in /proc
// while it runs. (One burst of requests is not enough: all but 4 are
// refused before any agent is closed, and a slot freed when its
// connection closes, not when its agent has exited, goes unseen.)
func TestServeAgentsBoundedByMaxConnections(t *testing.T) {
	const maxConns, agents = 4, 8
	s := startServe(t, append([]string{"--listen", "127.0.0.1:0", "--max-connections", strconv.Itoa(maxConns)}, childAgentArgs(t, "stubborn")...)...)
	pid := s.cmd.Process.Pid
	var peak atomic.Int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(len(agentGroups(pid))); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	u := strings.TrimPrefix(s.url, "http://")
	host, path, _ := strings.Cut(u, "/")
	var ok, busy, bogus, failed atomic.Int64
	done := make(chan struct{})
	var doneOnce sync.Once
	finished := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	giveUp := time.AfterFunc(time.Minute, func() { doneOnce.Do(func() { close(done) }) })
	defer giveUp.Stop()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for !finished() {
				nc, err := net.Dial("tcp", host)
				if err != nil {
					return
				}
				fmt.Fprintf(nc, "GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", path, host)
				if resp, err := http.ReadResponse(bufio.NewReader(nc), nil); err == nil {
					resp.Body.Close()
				}
				nc.Close()
				bogus.Add(1)
			}
		})
	}
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	for range 16 {
		wg.Go(func() {
			for !finished() {
				req, _ := http.NewRequest("POST", s.url, strings.NewReader(initialize))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case 200:
				case 503:
					busy.Add(1)
					// A client's backoff, not a wait for anything: the
					// loop ends on the count alone.
					time.Sleep(20 * time.Millisecond)
					continue
				default: // the agent did not start or answer: stop, and say so below
					failed.Add(1)
					doneOnce.Do(func() { close(done) })
					return
				}
				if ok.Add(1) >= agents {
					doneOnce.Do(func() { close(done) })
				}
				del, _ := http.NewRequest("DELETE", s.url, nil)
				del.Header.Set("Acp-Connection-Id", resp.Header.Get("Acp-Connection-Id"))
				if r, err := http.DefaultClient.Do(del); err == nil {
					r.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	t.Logf("acp serve --max-connections %d: peak %d agent processes alive; %d initialized and hung up, %d refused 503, %d bogus upgrades", maxConns, peak.Load(), ok.Load(), busy.Load(), bogus.Load())
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d initialize POSTs got neither 200 nor 503\nstderr:\n%s", n, s.stderr())
	}
	if n := ok.Load(); n < agents {
		t.Fatalf("only %d agents initialized in a minute (want %d): slots not freed after their agents exited?\nstderr:\n%s", n, agents, s.stderr())
	}
	if p := peak.Load(); p > maxConns {
		t.Fatalf("%d agent processes alive at once, --max-connections %d", p, maxConns)
	}
}
