package gateway

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// "restartable" is the script agent as a process that, like a real
// agent's sessions on disk, knows the session its predecessor created
// ("sess-1", as acptest numbers them): a new process resumes or loads it.
var _ = func() bool {
	acptest.Register("restartable", func() *acptest.Agent {
		o := scriptOptions()
		o.History = map[string][]any{"sess-1": nil}
		return acptest.New(o)
	})
	return true
}()

// remoteProfiles are the two ways package remote reaches the gateway.
var remoteProfiles = []struct {
	name string
	tr   func(url string) acp.Transport
}{
	{"http", func(u string) acp.Transport { return &remote.HTTPTransport{URL: u} }},
	{"ws", func(u string) acp.Transport { return &remote.WebSocketTransport{URL: u} }},
}

// supervised connects a remote client with supervision on; its restart
// events (past the death) arrive on the channel.
func supervised(t *testing.T, tr acp.Transport) (*acp.Client, <-chan acp.RestartEvent) {
	t.Helper()
	events := make(chan acp.RestartEvent, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := acp.Connect(ctx, tr, &acp.ClientOptions{Restart: &acp.RestartPolicy{
		// A gateway coming back refuses connections for a moment: a
		// short backoff and a larger budget ride that out quickly.
		MaxRestarts: 50, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		OnRestart: func(ev acp.RestartEvent) {
			if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
				events <- ev
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, events
}

// restored waits, bounded, for the restart to bring session id back.
func restored(t *testing.T, events <-chan acp.RestartEvent, id string) acp.RestartEvent {
	t.Helper()
	select {
	case ev := <-events:
		if ev.Phase != acp.RestartRestored || !slices.Equal(ev.Restored, []string{id}) || len(ev.Lost) != 0 {
			t.Fatalf("restart event %+v, want session %s restored", ev, id)
		}
		return ev
	case <-time.After(60 * time.Second):
		t.Fatal("no restart within a minute")
	}
	return acp.RestartEvent{}
}

func echo(t *testing.T, s *acp.Session, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := s.Prompt(ctx, schema.Text(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatalf("turn %q: %v", text, err)
	}
	if m := turn.State().Messages; len(m) != 1 || m[0].Text != "echo:"+text {
		t.Fatalf("turn %q said %+v", text, m)
	}
}

// The agent process behind the gateway is killed (SIGKILL, between turns,
// and in a turn): the gateway ends that connection, the remote client —
// Streamable HTTP and WebSocket — with supervision on connects again (a
// new agent process behind a new gateway connection), resumes the session,
// and the conversation goes on; the interrupted turn fails with
// ErrAgentRestarted.
func TestRemoteAgentKilled(t *testing.T) {
	for _, p := range remoteProfiles {
		for _, midTurn := range []bool{false, true} {
			name := p.name + "/between-turns"
			if midTurn {
				name = p.name + "/mid-turn"
			}
			t.Run(name, func(t *testing.T) {
				var mu sync.Mutex
				var cmds []*exec.Cmd
				agents := &CommandAgent{Command: func(ctx context.Context) (*exec.Cmd, error) {
					cmd := acptest.Command("restartable")
					mu.Lock()
					cmds = append(cmds, cmd)
					mu.Unlock()
					return cmd, nil
				}, ShutdownGrace: time.Second}
				_, url := start(t, agents.Dial, nil)
				c, events := supervised(t, p.tr(url))
				s, err := c.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				echo(t, s, "before")
				mu.Lock()
				first := cmds[0]
				mu.Unlock()
				if midTurn {
					turn, err := s.Prompt(bounded(t), schema.Text("wait"))
					if err != nil {
						t.Fatal(err)
					}
					for u := range turn.Updates() {
						if _, ok := u.(*schema.AgentMessageChunk); ok {
							break // "waiting": the agent is in the turn
						}
					}
					first.Process.Kill() // SIGKILL
					if _, err := turn.Wait(); !errors.Is(err, acp.ErrAgentRestarted) || errors.Is(err, acp.ErrConnClosed) {
						t.Fatalf("the interrupted turn: %v, want ErrAgentRestarted", err)
					}
				} else {
					first.Process.Kill() // SIGKILL
				}
				ev := restored(t, events, s.ID())
				echo(t, s, "after")
				mu.Lock()
				n := len(cmds)
				mu.Unlock()
				if n != 2 || ev.Connection != 2 {
					t.Errorf("%d agent processes, connection %d; want 2 and 2", n, ev.Connection)
				}
				if err := s.Err(); err != nil {
					t.Errorf("Session.Err: %v", err)
				}
			})
		}
	}
}

// The gateway itself is restarted — shut down (every connection closed,
// every agent shut down) and a new one started on the same address: the
// remote client reconnects to the new one, through refused connections in
// between, and the session is resumed on it. The agent keeps its sessions
// across connections here (one in-process agent, like a real one's
// sessions on disk).
func TestRemoteGatewayRestarted(t *testing.T) {
	for _, p := range remoteProfiles {
		t.Run(p.name, func(t *testing.T) {
			d := newPipeDial(t, nil)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			serveOn := func(ln net.Listener) (stop func()) {
				g := New(d.Dial, nil)
				srv := NewServer(g)
				done := make(chan struct{})
				go func() { defer close(done); srv.Serve(ln) }()
				var once sync.Once
				stop = func() {
					once.Do(func() {
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						defer cancel()
						if err := g.Shutdown(ctx); err != nil {
							t.Errorf("gateway Shutdown: %v", err)
						}
						if err := srv.Shutdown(ctx); err != nil {
							t.Errorf("server Shutdown: %v", err)
						}
						<-done
					})
				}
				t.Cleanup(stop)
				return stop
			}
			stop := serveOn(ln)
			url := "http://" + addr + "/"
			if p.name == "ws" {
				url = "ws://" + addr + "/"
			}
			c, events := supervised(t, p.tr(url))
			s, err := c.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			echo(t, s, "before")

			stop()
			ln2, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("listening again on %s: %v", addr, err)
			}
			serveOn(ln2)

			ev := restored(t, events, s.ID())
			echo(t, s, "after")
			if ev.Connection < 2 {
				t.Errorf("restored on connection %d", ev.Connection)
			}
			if got := strings.Join(texts(s), "|"); got != "echo:before|echo:after" {
				t.Errorf("the conversation: %q", got)
			}
		})
	}
}

// texts joins the agent messages of every turn of the session.
func texts(s *acp.Session) []string {
	var out []string
	for _, t := range s.Turns() {
		for _, m := range t.State().Messages {
			out = append(out, m.Text)
		}
	}
	return out
}

// bounded is a context for one call of the test.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
