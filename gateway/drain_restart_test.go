package gateway

// A drain end to end: a supervised acp.Client over package remote, several
// sessions on one connection, v1 and v2, the gateway drained and started
// again on its address.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// heldStream is an http.RoundTripper that, once armed, holds back what
// one session's SSE stream carries until the test lets it go: the order a
// proxy may deliver the streams in (each a connection of its own, with no
// order between them).
type heldStream struct {
	base    http.RoundTripper
	mu      sync.Mutex
	session string        // armed: this session's stream is held
	release chan struct{} // closed by let
	once    sync.Once
}

func (h *heldStream) let() { h.once.Do(func() { close(h.release) }) }

func (h *heldStream) arm(session string) {
	h.mu.Lock()
	h.session = session
	h.mu.Unlock()
}

func (h *heldStream) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet {
		return resp, err
	}
	if sid := r.Header.Get(HeaderSessionID); sid != "" && resp.StatusCode == http.StatusOK {
		resp.Body = &heldBody{ReadCloser: resp.Body, h: h, session: sid, ctx: r.Context()}
	}
	return resp, nil
}

// heldBody is a session stream's body; what it reads while its session
// is the held one waits for the release.
type heldBody struct {
	io.ReadCloser
	h       *heldStream
	session string
	ctx     context.Context
}

func (b *heldBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.mu.Lock()
	held := b.h.session == b.session
	b.h.mu.Unlock()
	if held {
		select {
		case <-b.h.release:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	return n, err
}

// restartable serves gateways for one agent on one address, each in
// place of the last, as a rolling restart does.
type restartable struct {
	t    *testing.T
	dial DialFunc
	addr string
	g    *Gateway
	stop func()
}

func (r *restartable) serve() {
	t := r.t
	var ln net.Listener
	var err error
	if r.addr == "" {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	} else {
		ln, err = net.Listen("tcp", r.addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	g := New(r.dial, nil)
	// A client that does not come back for its ended session streams
	// holds a drained connection this long (5 s by default).
	g.hold = 200 * time.Millisecond
	srv := NewServer(g)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	var once sync.Once
	r.g, r.stop = g, func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			g.Shutdown(ctx)
			srv.Shutdown(ctx)
			<-done
		})
	}
	t.Cleanup(r.stop)
}

// A drain moves a connection as a whole, with every session on it: the
// running turn finishes, the answers already on their way on the other
// sessions' streams are read (over Streamable HTTP one session's stream
// is held back until the server has closed the connection: the drained
// 404 of the first stream does not end it), a prompt sent during the drain is
// refused CodeNotDelivered and sent again after the one restart as the
// same Turn, and every session is restored. The agent gets each prompt
// exactly once. For v1 and v2, over Streamable HTTP and WebSocket.
func TestDrainMovesEverySession(t *testing.T) {
	for _, version := range []int{1, 2} {
		for _, p := range []string{"http", "ws"} {
			t.Run(fmt.Sprintf("v%d/%s", version, p), func(t *testing.T) {
				var mu sync.Mutex
				got := map[string]int{} // prompts the agent received, by text
				opts := scriptOptions()
				opts.AnyVersion = true
				script := opts.OnPrompt
				opts.OnPrompt = func(tn *acptest.Turn) (schema.StopReason, error) {
					mu.Lock()
					got[tn.PromptText()]++
					mu.Unlock()
					return script(tn)
				}
				r := &restartable{t: t, dial: newPipeDial(t, opts).Dial}
				r.serve()
				held := &heldStream{base: http.DefaultTransport, release: make(chan struct{})}
				var tr acp.Transport = &remote.WebSocketTransport{URL: "ws://" + r.addr + "/"}
				if p == "http" {
					tr = &remote.HTTPTransport{URL: "http://" + r.addr + "/", Options: remote.Options{HTTPClient: &http.Client{Transport: held}}}
				}
				var restarts atomic.Int32
				events := make(chan acp.RestartEvent, 16)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				c, err := acp.Connect(ctx, tr, &acp.ClientOptions{ProtocolVersion: version, Restart: &acp.RestartPolicy{
					MaxRestarts: 50, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
					OnRestart: func(ev acp.RestartEvent) {
						if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
							restarts.Add(1)
							events <- ev
						}
					},
				}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var sessions []*acp.Session
				for range 3 {
					s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
					if err != nil {
						t.Fatal(err)
					}
					sessions = append(sessions, s)
				}
				running, delivered, refused := sessions[0], sessions[1], sessions[2]

				waiting, err := running.Prompt(ctx, schema.Text("wait"))
				if err != nil {
					t.Fatal(err)
				}
				for u := range waiting.Updates() {
					if _, ok := u.(*schema.AgentMessageChunk); ok {
						break
					}
				}
				// Delivered before the drain; its answer is held back on
				// its stream over HTTP.
				held.arm(delivered.ID())
				answered, err := delivered.Prompt(ctx, schema.Text("before"))
				if err != nil {
					t.Fatal(err)
				}
				// Delivered: Prompt returns once the frame is written,
				// which over WebSocket is before the gateway forwards it.
				waitFor(t, func() bool {
					mu.Lock()
					defer mu.Unlock()
					return got["before"] == 1
				})
				drained := make(chan error, 1)
				g := r.g
				go func() { drained <- g.Drain(ctx) }()
				waitFor(t, func() bool {
					rec := httptest.NewRecorder()
					g.Health().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
					return rec.Code == 503
				})
				retried, err := refused.Prompt(ctx, schema.Text("during"))
				if err != nil {
					t.Fatal(err)
				}
				waiting.Cancel()
				if stop, err := waiting.Wait(); err != nil || stop != schema.StopReasonCancelled {
					t.Errorf("the running turn: %q, %v; want cancelled", stop, err)
				}
				if err := <-drained; err != nil {
					t.Errorf("Drain: %v", err)
				}
				// The gateway has closed the connection; the held stream's
				// answer is still to be read, then the gateway restarts.
				held.let()
				if _, err := answered.Wait(); err != nil {
					t.Errorf("turn %q: %v", "before", err)
				}
				r.stop()
				r.serve()
				for _, tc := range []struct {
					turn *acp.Turn
					text string
				}{{answered, "before"}, {retried, "during"}} {
					if _, err := tc.turn.Wait(); err != nil {
						t.Errorf("turn %q: %v", tc.text, err)
					} else if m := tc.turn.State().Messages; len(m) != 1 || m[0].Text != "echo:"+tc.text {
						t.Errorf("turn %q said %+v", tc.text, m)
					}
				}
				var ev acp.RestartEvent
				select {
				case ev = <-events:
				case <-ctx.Done():
					t.Fatal("no restart")
				}
				ids := []string{running.ID(), delivered.ID(), refused.ID()}
				slices.Sort(ids)
				restoredIDs := slices.Sorted(slices.Values(ev.Restored))
				if ev.Phase != acp.RestartRestored || !slices.Equal(restoredIDs, ids) || len(ev.Lost) != 0 {
					t.Errorf("the restart: %+v; want all of %v restored", ev, ids)
				}
				for _, s := range sessions {
					echo(t, s, "after "+s.ID())
				}
				if n := restarts.Load(); n != 1 {
					t.Errorf("%d restarts, want 1", n)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, text := range []string{"wait", "before", "during"} {
					if got[text] != 1 {
						t.Errorf("the agent got %q %d times, want once (all: %v)", text, got[text], got)
					}
				}
				if errors.Is(c.Err(), acp.ErrConnClosed) {
					t.Errorf("the client ended: %v", c.Err())
				}
			})
		}
	}
}

// Drains back to back, with no proxy to soften the timing: a supervised
// client runs turns without pause on two sessions of one Streamable HTTP
// connection while the gateway is drained and replaced on its address, at
// once, eight times; v1 and v2. No turn fails. (The gateway closes a
// drained connection as the client comes back for its last session
// stream, so the connection's stream ends, and is asked for again in vain
// from the next gateway, before the client has read that last 404: the
// connection's end waits for the session streams, which say drained.)
func TestDrainBackToBack(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			opts := scriptOptions()
			opts.AnyVersion = true
			r := &restartable{t: t, dial: newPipeDial(t, opts).Dial}
			r.serve()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := acp.Connect(ctx, &remote.HTTPTransport{URL: "http://" + r.addr + "/"}, &acp.ClientOptions{ProtocolVersion: version, Restart: &acp.RestartPolicy{
				MaxRestarts: 500, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var mu sync.Mutex
			var done int
			var failed []error
			progress := make(chan struct{}, 1)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 2 {
				s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						n := i % 3 * 20
						turn, err := s.Prompt(ctx, schema.Text(fmt.Sprintf("chunks %d", n)))
						if err == nil {
							_, err = turn.Wait()
						}
						if err == nil && len(turn.State().Messages) != min(n, 1) {
							err = fmt.Errorf("answered %+v", turn.State().Messages)
						}
						mu.Lock()
						if err != nil {
							failed = append(failed, fmt.Errorf("session %s turn %d: %w", s.ID(), i, err))
						} else {
							done++
						}
						mu.Unlock()
						select {
						case progress <- struct{}{}:
						default:
						}
					}
				}()
			}
			count := func() int { mu.Lock(); defer mu.Unlock(); return done }
			for range 8 {
				for target := count() + 20; count() < target; {
					select {
					case <-progress:
					case <-ctx.Done():
						t.Fatalf("no progress: %d turns", count())
					}
				}
				dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
				if err := r.g.Drain(dctx); err != nil {
					t.Errorf("Drain: %v", err)
				}
				dcancel()
				r.stop()
				r.serve()
			}
			close(stop)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			for _, err := range failed {
				t.Error(err)
			}
			t.Logf("v%d: %d turns over 8 drains, %d failed", version, done, len(failed))
		})
	}
}
