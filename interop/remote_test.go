package interop

// Our remote transports (package remote) against the TypeScript SDK's own
// server of the RFD "Streamable HTTP & WebSocket transport"
// (experimental/server + experimental/node, and ws for the upgrades) in
// front of the same interop agent: tsagent/server.mjs. Each scenario runs
// over both profiles.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// startTSServer runs `node server.mjs` and returns its endpoint URL. The
// server exits when its stdin closes, at the test's end.
func startTSServer(t *testing.T, env ...string) string {
	t.Helper()
	return startServerMJS(t, needTool(t, "node"), needTool(t, "npm"), env...)
}

// startTSServerB is startTSServer for benchmarks.
func startTSServerB(b *testing.B) string {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Fatal(err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		b.Fatal(err)
	}
	return startServerMJS(b, node, npm, "TSAGENT_QUIET=1")
}

func startServerMJS(t testing.TB, node, npm string, env ...string) string {
	t.Helper()
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript agent's dependencies failed: %v", npmErr)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = tsagentDir
	cmd.Env = append(os.Environ(), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("server.mjs: %v", err)
		}
		if t.Failed() {
			t.Logf("server.mjs stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's URL: %v (stderr: %s)", err, stderr.String())
	}
	return strings.TrimSpace(line)
}

var remoteProfiles = []struct {
	name string
	tr   func(u string, o remote.Options) acp.Transport
}{
	{"http", func(u string, o remote.Options) acp.Transport { return &remote.HTTPTransport{URL: u, Options: o} }},
	{"ws", func(u string, o remote.Options) acp.Transport { return &remote.WebSocketTransport{URL: u, Options: o} }},
}

func connectRemote(t *testing.T, tr acp.Transport, opts *acp.ClientOptions) *acp.Client {
	t.Helper()
	c, err := acp.Connect(testCtx(t), tr, opts)
	if err != nil {
		t.Fatalf("acp.Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRemoteInterop(t *testing.T) {
	t.Parallel()
	remoteScenarios(t, startTSServer(t))
}

// TestRemoteAgainstGateway runs the same scenarios through our own gateway
// (package gateway, one agent.mjs process per connection): our client and
// our server agree on the RFD's wire as each agrees with the TypeScript SDK.
func TestRemoteAgainstGateway(t *testing.T) {
	t.Parallel()
	remoteScenarios(t, startTSGateway(t, nodeTools(t), nil))
}

// remoteScenarios runs the interop scenarios over both profiles against
// the endpoint u.
func remoteScenarios(t *testing.T, u string) {
	for _, p := range remoteProfiles {
		t.Run(p.name, func(t *testing.T) {
			t.Run("updates", func(t *testing.T) {
				ctx := testCtx(t)
				c := connectRemote(t, p.tr(u, remote.Options{}), nil)
				if ai := c.InitializeResponse().AgentInfo; ai == nil || ai.Name != "acp-interop-tsagent" {
					t.Errorf("agent %+v", c.InitializeResponse().AgentInfo)
				}
				s := newSession(t, ctx, c, t.TempDir())
				_, st, stop, err := run(t, ctx, s, "updates")
				if err != nil || stop != schema.StopReasonEndTurn {
					t.Fatalf("stop %q, %v", stop, err)
				}
				// Every update of the turn came before its answer.
				if len(st.Messages) == 0 || st.Messages[0].Text != "Hello, world!" || len(st.ToolCalls) != 1 || len(st.Plan) == 0 {
					t.Errorf("turn state: %+v", st)
				}
				checkReports(t, "echo", mustRun(t, ctx, s, "hello there"), "echo:hello there")
			})
			t.Run("permission", func(t *testing.T) {
				ctx := testCtx(t)
				c := connectRemote(t, p.tr(u, remote.Options{}), &acp.ClientOptions{
					Permission: func(context.Context, *acp.PermissionRequest) (schema.PermissionOutcome, error) {
						return acp.SelectedOutcome("allow-once"), nil
					},
				})
				s := newSession(t, ctx, c, t.TempDir())
				turn, _, stop, err := run(t, ctx, s, "permission")
				if err != nil || stop != schema.StopReasonEndTurn {
					t.Fatalf("stop %q, %v", stop, err)
				}
				checkReports(t, "permission", reports(turn.State()), "outcome:selected:allow-once")
				if tc, _ := turn.ToolCall("perm-1"); tc.Status != schema.ToolCallStatusCompleted {
					t.Errorf("tool call %+v", tc)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				ctx := testCtx(t)
				asked := make(chan struct{}, 1)
				c := connectRemote(t, p.tr(u, remote.Options{}), &acp.ClientOptions{
					Permission: func(ctx context.Context, _ *acp.PermissionRequest) (schema.PermissionOutcome, error) {
						asked <- struct{}{}
						<-ctx.Done()
						return acp.SelectedOutcome("allow-once"), nil
					},
				})
				s := newSession(t, ctx, c, t.TempDir())
				turn, err := s.Prompt(ctx, schema.Text("cancel"))
				if err != nil {
					t.Fatal(err)
				}
				recv(t, asked, "the permission request")
				turn.Cancel()
				stop, err := turn.Wait()
				if err != nil || stop != schema.StopReasonCancelled {
					t.Fatalf("stop %q, %v", stop, err)
				}
				checkReports(t, "cancel", reports(turn.State()), "permission:cancelled", "session/cancel:received")
			})
			t.Run("error", func(t *testing.T) {
				ctx := testCtx(t)
				c := connectRemote(t, p.tr(u, remote.Options{}), nil)
				s := newSession(t, ctx, c, t.TempDir())
				_, st, _, err := run(t, ctx, s, "error")
				var e *schema.Error
				if !errors.As(err, &e) || e.Code != schema.CodeInternalError {
					t.Fatalf("err %v; want the agent's -32603", err)
				}
				if diff := cmp.Diff([]acp.Message{{MessageID: "t1-e1", Text: "about to fail"}}, st.Messages); diff != "" {
					t.Errorf("messages before the error (-want +got):\n%s", diff)
				}
				checkReports(t, "after the error", mustRun(t, ctx, s, "next"), "echo:next")
			})
			t.Run("load", func(t *testing.T) {
				ctx := testCtx(t)
				// A session created on one connection is loaded on another.
				first := connectRemote(t, p.tr(u, remote.Options{}), nil)
				id := newSession(t, ctx, first, t.TempDir()).ID()
				first.Close()
				c := connectRemote(t, p.tr(u, remote.Options{}), nil)
				s, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: t.TempDir()})
				if err != nil {
					t.Fatalf("LoadSession: %v", err)
				}
				want := acp.TurnState{
					UserMessages: []acp.Message{{MessageID: "h-u1", Text: "hello from history"}},
					Messages:     []acp.Message{{MessageID: "h-a1", Text: "hi from history", Order: 1}},
				}
				complete := func() bool { return cmp.Equal(want, s.State().History) }
				if p.name == "ws" && !complete() {
					// One stream: the replay is folded before LoadSession returns.
					t.Fatalf("History when LoadSession returned (-want +got):\n%s", cmp.Diff(want, s.State().History))
				}
				// Over Streamable HTTP the replay (session stream) may trail
				// the answer (connection stream): see remote.HTTPTransport.
				for range s.Changes(ctx) {
					if complete() {
						break
					}
				}
				if !complete() {
					t.Fatalf("History (-want +got):\n%s", cmp.Diff(want, s.State().History))
				}
				checkReports(t, "prompt after load", mustRun(t, ctx, s, "again"), "echo:again")
			})
		})
	}
}

// Bearer token and affinity cookie, enforced by the server: without the
// token the connection is refused with its status; with it, every request
// of the connection carries the cookie the server set (the server answers
// 403 otherwise).
func TestRemoteInteropTokenAndCookie(t *testing.T) {
	t.Parallel()
	u := startTSServer(t, "TSSERVER_TOKEN=s3cret", "TSSERVER_COOKIE=affinity=node-2")
	for _, p := range remoteProfiles {
		t.Run(p.name, func(t *testing.T) {
			ctx := testCtx(t)
			_, err := acp.Connect(ctx, p.tr(u, remote.Options{}), nil)
			var se *remote.StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
				t.Fatalf("without the token: %v; want a 401 *remote.StatusError", err)
			}
			jar, _ := cookiejar.New(nil)
			c := connectRemote(t, p.tr(u, remote.Options{Header: http.Header{"Authorization": {"Bearer s3cret"}}, Jar: jar}), nil)
			s := newSession(t, ctx, c, t.TempDir())
			checkReports(t, "echo", mustRun(t, ctx, s, "hi"), "echo:hi")
			pu, _ := url.Parse(u)
			if got := jar.Cookies(pu); len(got) != 1 || got[0].Value != "node-2" {
				t.Errorf("jar holds %v", got)
			}
		})
	}
}

// The acp command with --url against the TypeScript server, both profiles:
// the --json output is the same as against a local agent.
func TestRemoteInteropCommand(t *testing.T) {
	t.Parallel()
	u := startTSServer(t, "TSSERVER_TOKEN=s3cret")
	bin := filepath.Join(t.TempDir(), "acp")
	build := exec.Command("go", "build", "-o", bin, "github.com/acpclient/acp/examples/acp")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the acp command: %v\n%s", err, out)
	}
	for _, endpoint := range []string{u, strings.Replace(u, "http://", "ws://", 1)} {
		cmd := exec.Command(bin, "--json", "-p", "permission", "--permission", "allow", "--url", endpoint, "--header", "Authorization: Bearer s3cret")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", endpoint, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var first, last struct {
			Event      string `json:"event"`
			StopReason string `json:"stopReason"`
		}
		if json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[len(lines)-1]), &last) != nil ||
			first.Event != "session" || last.Event != "turn_end" || last.StopReason != "end_turn" {
			t.Errorf("%s: output:\n%s", endpoint, out)
		}
		if !strings.Contains(string(out), `"event":"permission"`) || !strings.Contains(string(out), "outcome:selected:allow-once") {
			t.Errorf("%s: no permission round in:\n%s", endpoint, out)
		}
	}
}
