//go:build unix

package proxytest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// rollingChunks is the length of the runners' long turns: long enough that
// a drain usually finds one running.
const rollingChunks = 200

// secondSession is, like sharedSession, a session every agent process
// knows: each client of the rolling restart runs turns on both at once,
// on its one connection.
const secondSession = "shared-2"

func init() { acptest.Register("rollingagent", rollingAgent) }

// rollingAgent is the rolling restart's agent: it speaks the version the
// client offers (v1 or v2), knows both shared sessions, and answers
// "backend" with its backend's name and "chunks N" with N chunks "x".
func rollingAgent() *acptest.Agent {
	return acptest.New(&acptest.Options{
		AnyVersion: true,
		History:    map[string][]any{sharedSession: nil, secondSession: nil},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			word, arg, _ := strings.Cut(t.PromptText(), " ")
			if word == "backend" {
				return "end_turn", t.Say(os.Getenv(backendEnv))
			}
			n, _ := strconv.Atoi(arg)
			for range n {
				if err := t.Say("x"); err != nil {
					return "", err
				}
			}
			return "end_turn", nil
		},
	})
}

func rollingCommand() *exec.Cmd { return acptest.Command("rollingagent") }

// runner runs turns back to back on one session of a supervised client,
// alternating a long one ("chunks N") and one that names its backend,
// and counts them.
type runner struct {
	profile string // the transport, the ACP version and the session
	sess    *acp.Session
	turns   chan string // the backend of each "backend" turn; "" for the others

	mu       sync.Mutex
	done     int
	failed   []error
	longest  time.Duration
	backends map[string]int
}

func (r *runner) run(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		text := "backend"
		if i%2 == 0 {
			text = fmt.Sprintf("chunks %d", rollingChunks)
		}
		start := time.Now()
		got, err := r.turn(text)
		took := time.Since(start)
		r.mu.Lock()
		r.longest = max(r.longest, took)
		if err != nil {
			r.failed = append(r.failed, fmt.Errorf("turn %d %q: %w", i, text, err))
		} else {
			r.done++
			if text == "backend" {
				r.backends[got]++
			}
		}
		r.mu.Unlock()
		if err == nil {
			select {
			case r.turns <- got:
			default:
			}
		}
	}
}

// turn runs one turn and checks its answer.
func (r *runner) turn(text string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn, err := r.sess.Prompt(ctx, schema.Text(text))
	if err != nil {
		return "", err
	}
	if _, err := turn.Wait(); err != nil {
		return "", err
	}
	var out string
	for _, m := range turn.State().Messages {
		out += m.Text
	}
	switch {
	case text == "backend" && out != "a" && out != "b":
		return "", fmt.Errorf("answered %q, want a backend's name", out)
	case text != "backend" && out != strings.Repeat("x", rollingChunks):
		return "", fmt.Errorf("answered %d bytes (%d x, other text %q), want %d x", len(out), strings.Count(out, "x"), strings.ReplaceAll(out, "x", ""), rollingChunks)
	}
	return out, nil
}

// wait waits until r has finished n more turns than it had.
func (r *runner) wait(t *testing.T, n int) {
	t.Helper()
	r.mu.Lock()
	target := r.done + n
	r.mu.Unlock()
	timeout := time.After(2 * time.Minute)
	for {
		r.mu.Lock()
		done := r.done
		r.mu.Unlock()
		if done >= target {
			return
		}
		select {
		case <-r.turns:
		case <-timeout:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("%s: no progress (%d turns done, failures %v)", r.profile, r.done, r.failed)
		}
	}
}

// nginxFailTimeout is the upstreams' fail_timeout the rolling restart
// runs nginx with (the file's is 10 s): how long nginx skips a backend
// that refused a connection or answered 503.
const nginxFailTimeout = 2 * time.Second

// rollingProxies start the proxies for the rolling restart.
var rollingProxies = []struct {
	name  string
	start func(*testing.T, *cert, *backend, *backend) *proxy
}{
	{"nginx", func(t *testing.T, c *cert, a, b *backend) *proxy {
		return startNginxWith(t, c, a, b, "", nginxFailTimeout.String())
	}},
	{"haproxy", startHAProxy},
}

// waitBack waits, after backend b restarted, until the proxy sends new
// connections to it again, as a rolling deploy waits before it stops the
// next backend: HAProxy says so when its health check passes (its log);
// open-source nginx has no active check and tries a backend it skipped
// again only after fail_timeout, which is all there is to wait for.
func waitBack(t *testing.T, p *proxy, b *backend) {
	t.Helper()
	if p.name == "nginx" {
		// Twice: nginx counts fail_timeout in whole seconds (a backend
		// marked at the end of a second is skipped up to a second
		// longer), and each worker process keeps its own marks.
		time.Sleep(2 * nginxFailTimeout)
		return
	}
	// Down as far as HAProxy knows: it logged the server DOWN more often
	// than UP (a restart quicker than its checks goes unnoticed).
	down := func() bool {
		out := p.out.String()
		return strings.Count(out, "Server acp/"+b.name+" is DOWN") > strings.Count(out, "Server acp/"+b.name+" is UP")
	}
	for i := 0; down(); i++ {
		if i == 1500 {
			t.Fatalf("HAProxy did not take backend %s back within 30 s:\n%s", b.name, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A rolling restart through each proxy loses no turn: a client per
// profile (Streamable HTTP, WebSocket) and ACP version (v1, v2) runs turns
// back to back on two sessions every backend can reach, both on its one
// connection, while each backend in turn drains (acp serve's SIGTERM: its listener
// closes, its running turns finish, new requests are refused as not
// delivered) and starts again on its address, twice over. Every turn must
// succeed, with its whole answer; the figures (turns, the longest turn,
// each drain's length) are logged (go test -v).
func TestRollingRestart(t *testing.T) {
	for _, px := range rollingProxies {
		t.Run(px.name, func(t *testing.T) {
			s := &setup{cert: newCert(t), a: startBackendAgent(t, "a", 0, rollingCommand), b: startBackendAgent(t, "b", 0, rollingCommand)}
			s.proxy = px.start(t, s.cert, s.a, s.b)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var wg sync.WaitGroup
			var runners []*runner
			restarts := make(chan acp.RestartEvent, 1024)
			for _, profile := range profiles {
				for _, version := range []int{1, 2} {
					client := fmt.Sprintf("%s v%d", profile, version)
					// ACP_ROLLING_TRACE=DIR keeps each client's frames
					// (acp view DIR/haproxy-http-v1.jsonl): how a failed
					// turn was found to have been answered twice.
					var trace *acp.TraceWriter
					if dir := os.Getenv("ACP_ROLLING_TRACE"); dir != "" {
						f, err := os.Create(fmt.Sprintf("%s/%s-%s-v%d.jsonl", dir, px.name, profile, version))
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { f.Close() })
						trace = acp.NewTraceWriter(f)
					}
					c := connect(t, s.transport(t, profile, newJar(t)), &acp.ClientOptions{ProtocolVersion: version, Trace: trace, Restart: &acp.RestartPolicy{
						MaxRestarts: 1000, MinBackoff: 5 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
						OnRestart: func(ev acp.RestartEvent) {
							if testing.Verbose() {
								t.Logf("%s: restart %s conn %d: %v", client, ev.Phase, ev.Connection, ev.Err)
							}
							if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
								restarts <- ev
							}
						},
					}})
					if got := c.InitializeResponse().ProtocolVersion; got != version {
						t.Fatalf("%s: negotiated v%d", client, got)
					}
					// Two sessions on the one connection: a drain moves
					// them together.
					for _, id := range []string{sharedSession, secondSession} {
						sess, err := c.LoadSession(bounded(t), &schema.LoadSessionRequest{SessionID: id, Cwd: t.TempDir()})
						if err != nil {
							t.Fatal(err)
						}
						r := &runner{profile: client + " " + id, sess: sess, turns: make(chan string, 1), backends: map[string]int{}}
						runners = append(runners, r)
						wg.Add(1)
						go func() { defer wg.Done(); r.run(ctx) }()
					}
				}
			}
			defer func() { stop(); wg.Wait() }()
			for _, r := range runners {
				r.wait(t, 4)
			}
			backends := []*backend{s.a, s.b}
			began := time.Now()
			drains := 0
			for round := range 2 {
				for i, b := range backends {
					start := time.Now()
					if err := b.drain(); err != nil {
						t.Errorf("round %d: backend %s's drain: %v (turns still running at its deadline)", round, b.name, err)
					}
					took := time.Since(start)
					backends[i] = startBackendAt(t, b.name, b.addr, 0, rollingCommand)
					drains++
					waitBack(t, s.proxy, b)
					t.Logf("round %d: backend %s drained in %v and restarted", round, b.name, took.Round(time.Millisecond))
					for _, r := range runners {
						r.wait(t, 10) // every session goes on, wherever it is now
					}
				}
			}
			stop()
			wg.Wait()
			elapsed := time.Since(began)
			restored, total, failed := 0, 0, 0
			for len(restarts) > 0 {
				if ev := <-restarts; ev.Phase == acp.RestartGaveUp {
					t.Errorf("a client gave up: %v", ev.Err)
				} else {
					restored++
				}
			}
			for _, r := range runners {
				t.Logf("%s %s: %d turns in %v over %d drains, %d failed; longest turn %v; backends answering %v",
					px.name, r.profile, r.done, elapsed.Round(time.Millisecond), drains, len(r.failed), r.longest.Round(time.Millisecond), r.backends)
				total += r.done
				failed += len(r.failed)
				for _, err := range r.failed {
					t.Errorf("%s: %v", r.profile, err)
				}
			}
			t.Logf("%s: %d turns on %d sessions (%d clients), %d failed; %d reconnections (restarts restored)", px.name, total, len(runners), len(runners)/2, failed, restored)
		})
	}
}
