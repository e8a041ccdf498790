package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/coder/websocket"
)

// The zero Options select the documented defaults.
func TestDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	want := Options{
		MaxConnections: 64, MaxSessions: 64, MaxPendingRequests: 1024, MaxBodyBytes: 16 << 20,
		MaxConnectionBodyBytes: 16 << 20, MaxGatewayBodyBytes: 64 << 20, AgentWriteTimeout: 30 * time.Second,
		MaxMessageBytes: 64 << 20, MaxBufferedBytes: 16 << 20, StallTimeout: 30 * time.Second,
		IdleTimeout: 5 * time.Minute, ReadTimeout: 30 * time.Second, InitializeTimeout: 60 * time.Second,
		KeepAliveInterval: 15 * time.Second, PingInterval: 30 * time.Second, Logger: o.Logger,
	}
	if fmt.Sprint(o) != fmt.Sprint(want) {
		t.Fatalf("defaults\n got %+v\nwant %+v", o, want)
	}
	if o.Logger == nil {
		t.Fatal("no default logger")
	}
	// A body MaxBodyBytes allows always fits the bounds on bodies in flight.
	if o := (Options{MaxBodyBytes: 100 << 20, MaxConnectionBodyBytes: 1}).withDefaults(); o.MaxConnectionBodyBytes != 100<<20 || o.MaxGatewayBodyBytes != 100<<20 {
		t.Fatalf("bounds under MaxBodyBytes: %d %d", o.MaxConnectionBodyBytes, o.MaxGatewayBodyBytes)
	}
	s := NewServer(http.NotFoundHandler())
	if s.ReadHeaderTimeout != 10*time.Second || s.MaxHeaderBytes != 64<<10 || s.WriteTimeout != 0 || !s.Protocols.UnencryptedHTTP2() || !s.Protocols.HTTP1() {
		t.Fatalf("NewServer: %+v", s)
	}
}

// gone is the reason the gateway kept for a closed connection.
func gone(g *Gateway, id string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gone[id]
}

// waitGone waits until connection id has closed and returns the reason.
func waitGone(t *testing.T, g *Gateway, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r := gone(g, id); r != "" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %s did not close", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// MaxConnections: past it, initialize and the WebSocket upgrade get 503
// with Retry-After and start no agent; a closed connection frees its slot.
func TestMaxConnections(t *testing.T) {
	d := newPipeDial(t, nil)
	g, u := start(t, d.Dial, &Options{MaxConnections: 2})
	a, b := &client{t: t, url: u}, &client{t: t, url: u}
	a.initialize()
	b.initialize()
	r := (&client{t: t, url: u}).post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "too many connections") {
		t.Fatalf("third initialize: %d %v %s", r.status, r.header, r.body)
	}
	if c, _ := dialWS(t, u, nil); c.resp == nil || c.resp.StatusCode != 503 {
		t.Fatalf("WebSocket past the limit: %v", c.resp)
	}
	if d.n != 2 {
		t.Fatalf("%d agents started, want 2", d.n)
	}
	a.do("DELETE", "", "")
	// The slot is free once the agent has exited, not at the DELETE.
	waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.count < 2 })
	(&client{t: t, url: u}).initialize()
}

// MaxSessions: a GET for a session past it gets 429; an agent message for
// a session past it closes the connection with ErrTooManySessions.
func TestMaxSessions(t *testing.T) {
	d := newPipeDial(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		for i := range 5 {
			t.Notify("session/update", map[string]any{"sessionId": fmt.Sprint("other-", i), "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "x"}}})
		}
		return "", nil
	}})
	g, u := start(t, d.Dial, &Options{MaxSessions: 2})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	c.open("s1")
	c.open("s2")
	if s := c.openStatus("s3"); s.status != 429 {
		t.Fatalf("third session stream: %d", s.status)
	}
	sid := newSession(t, c, conn, 1)
	_ = sid
	c2 := &client{t: t, url: u}
	c2.initialize()
	conn2 := c2.open("")
	sid2 := newSession(t, c2, conn2, 1)
	c2.post(sid2, prompt(2, sid2, "go"))
	if r := waitGone(t, g, c2.conn); !strings.Contains(r, ErrTooManySessions.Error()) {
		t.Fatalf("reason %q", r)
	}
	if r := c2.post(sid2, prompt(3, sid2, "x")); r.status != 404 || !strings.Contains(r.body, "too many sessions") {
		t.Fatalf("after the limit: %d %s", r.status, r.body)
	}
}

// MaxPendingRequests: requests the agent has not answered are bounded;
// past the bound a POST gets 429 and is not forwarded.
func TestMaxPendingRequests(t *testing.T) {
	d := newPipeDial(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{"session/new": acptest.NeverAnswer}})
	_, u := start(t, d.Dial, &Options{MaxPendingRequests: 2})
	c := &client{t: t, url: u}
	c.initialize()
	for i := range 2 {
		if r := c.post("", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`, i+1)); r.status != 202 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	if r := c.post("", `{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`); r.status != 429 {
		t.Fatalf("third pending request: %d %s", r.status, r.body)
	}
	// Notifications are not requests: they pass.
	if r := c.post("", `{"jsonrpc":"2.0","method":"_x/note","params":{}}`); r.status != 202 {
		t.Fatalf("notification: %d %s", r.status, r.body)
	}
}

// MaxBodyBytes: a larger POST gets 413; a larger WebSocket frame closes
// the socket with 1009.
func TestMaxBodyBytes(t *testing.T) {
	d := newPipeDial(t, nil)
	_, u := start(t, d.Dial, &Options{MaxBodyBytes: 1024})
	c := &client{t: t, url: u}
	c.initialize()
	big := fmt.Sprintf(`{"jsonrpc":"2.0","method":"_x","params":{"pad":%q}}`, strings.Repeat("a", 2000))
	if r := c.post("", big); r.status != 413 {
		t.Fatalf("big POST: %d %s", r.status, r.body)
	}
	w, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	w.until(isResponse(0))
	w.send(big)
	_, err = w.recv()
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("big frame: %v", err)
	}
}

// MaxMessageBytes: an agent line past it closes the connection with
// ErrAgentMessageTooLarge, which the next request's 404 says.
func TestMaxMessageBytes(t *testing.T) {
	d := newPipeDial(t, nil)
	g, u := start(t, d.Dial, &Options{MaxMessageBytes: 4096})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	c.post(sid, prompt(2, sid, "big 10000"))
	if r := waitGone(t, g, c.conn); !strings.Contains(r, ErrAgentMessageTooLarge.Error()) {
		t.Fatalf("reason %q", r)
	}
	if r := c.post(sid, prompt(3, sid, "x")); r.status != 404 || !strings.Contains(r.body, "over the size limit") {
		t.Fatalf("after: %d %s", r.status, r.body)
	}
}

// MaxBufferedBytes and StallTimeout: output for a session whose stream
// nobody opens is held up to the bound (plus one message), then the
// gateway stops reading the agent; when nothing is taken for StallTimeout
// the connection closes with ErrStalled.
func TestBufferedOutputBound(t *testing.T) {
	d := newPipeDial(t, nil)
	g, u := start(t, d.Dial, &Options{MaxBufferedBytes: 64 << 10, StallTimeout: 100 * time.Millisecond})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	g.mu.Lock()
	gc := g.conns[c.conn]
	g.mu.Unlock()
	c.post(sid, prompt(2, sid, "flood 1000")) // 1 MiB, never read
	if r := waitGone(t, g, c.conn); !strings.Contains(r, ErrStalled.Error()) {
		t.Fatalf("reason %q", r)
	}
	gc.mu.Lock()
	held := gc.buffered
	gc.mu.Unlock()
	if held > 64<<10+2048 || held < 64<<10 {
		t.Fatalf("held %d bytes at the stall, want the bound 65536 plus at most one message", held)
	}
}

// IdleTimeout: an HTTP connection with no request and no stream is
// reaped with ErrIdle and its agent closed.
func TestIdleReaped(t *testing.T) {
	closed := make(chan struct{}, 1)
	d := newPipeDial(t, nil)
	dial := func(ctx context.Context) (acp.Conn, error) {
		c, err := d.Dial(ctx)
		return notifyClose{c, closed}, err
	}
	reasons := make(chan error, 1)
	g, u := start(t, dial, &Options{IdleTimeout: 20 * time.Millisecond, OnClose: func(_ string, err error) { reasons <- err }})
	c := &client{t: t, url: u}
	c.initialize()
	if r := waitGone(t, g, c.conn); !strings.Contains(r, ErrIdle.Error()) {
		t.Fatalf("reason %q", r)
	}
	if err := <-reasons; !errors.Is(err, ErrIdle) {
		t.Fatalf("OnClose got %v", err)
	}
	<-closed
}

type notifyClose struct {
	acp.Conn
	ch chan struct{}
}

func (n notifyClose) Close() error {
	err := n.Conn.Close()
	n.ch <- struct{}{}
	return err
}

// An open stream keeps a connection from being reaped.
func TestIdleNotWhileStreamOpen(t *testing.T) {
	d := newPipeDial(t, nil)
	g, u := start(t, d.Dial, &Options{IdleTimeout: 20 * time.Millisecond})
	c := &client{t: t, url: u}
	c.initialize()
	s := c.open("")
	time.Sleep(200 * time.Millisecond) // ten idle timeouts: an absence, not a synchronisation
	if r := gone(g, c.conn); r != "" {
		t.Fatalf("reaped with a stream open: %s", r)
	}
	s.body.Close()
	waitGone(t, g, c.conn)
}

// InitializeTimeout: an agent that never answers initialize gets 504 and
// is shut down.
func TestInitializeTimeout(t *testing.T) {
	d := newPipeDial(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{"initialize": acptest.NeverAnswer}})
	g, u := start(t, d.Dial, &Options{InitializeTimeout: 50 * time.Millisecond})
	r := (&client{t: t, url: u}).post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if r.status != 504 {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	waitConns(t, g, 0)
	// Over WebSocket: an initialize the agent never answers closes the
	// socket with 1011.
	w, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if _, err := w.recv(); websocket.CloseStatus(err) != websocket.StatusInternalError || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("WebSocket: %v", err)
	}
	waitConns(t, g, 0)
}

// A dial that fails answers 502 and holds no slot.
func TestDialFails(t *testing.T) {
	g, u := start(t, func(context.Context) (acp.Conn, error) { return nil, errors.New("no agent today") }, &Options{MaxConnections: 1})
	for range 3 {
		r := (&client{t: t, url: u}).post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
		if r.status != 502 || !strings.Contains(r.body, "no agent today") {
			t.Fatalf("initialize: %d %s", r.status, r.body)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.count != 0 {
		t.Fatalf("count %d", g.count)
	}
}

// KeepAliveInterval: an idle SSE stream gets comment lines.
func TestKeepAlive(t *testing.T) {
	d := newPipeDial(t, nil)
	_, u := start(t, d.Dial, &Options{KeepAliveInterval: 10 * time.Millisecond})
	c := &client{t: t, url: u}
	c.initialize()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderConnectionID, c.conn)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != ":\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
}

// An SSE stream's first body byte goes out with its headers, not at the
// first keep-alive: nginx over HTTP/2 holds the headers until then, and
// clients wait for them before they POST.
func TestSSEOpensWithComment(t *testing.T) {
	d := newPipeDial(t, nil)
	_, u := start(t, d.Dial, &Options{KeepAliveInterval: time.Hour})
	c := &client{t: t, url: u}
	c.initialize()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderConnectionID, c.conn)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != ":\n" {
		t.Fatalf("first line %q, %v (want the opening comment long before the hour's keep-alive)", line, err)
	}
}

// rawConn opens a TCP connection to the test server.
func rawConn(t *testing.T, u string) net.Conn {
	t.Helper()
	p, _ := url.Parse(u)
	nc, err := net.Dial("tcp", p.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// rawSessionStream opens session's SSE stream of c's connection with a
// hand-written HTTP/1.1 GET on a connection of its own, the response not
// yet read.
func rawSessionStream(t *testing.T, c *client, session string) net.Conn {
	t.Helper()
	nc := rawConn(t, c.url)
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nAcp-Connection-Id: %s\r\nAcp-Session-Id: %s\r\n\r\n", c.conn, session)
	return nc
}

// PingInterval: a WebSocket client that never answers pings (it never
// reads) is closed with ErrIdle.
func TestWebSocketPingUnanswered(t *testing.T) {
	d := newPipeDial(t, nil)
	g, u := start(t, d.Dial, &Options{PingInterval: 20 * time.Millisecond})
	nc := rawConn(t, u)
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	id := resp.Header.Get(HeaderConnectionID)
	if r := waitGone(t, g, id); !strings.Contains(r, "no pong") {
		t.Fatalf("reason %q", r)
	}
}

// ReadTimeout: a body that trickles (slowloris) gets 408 and forwards
// nothing.
func TestSlowBody(t *testing.T) {
	d := newPipeDial(t, nil)
	_, u := start(t, d.Dial, &Options{ReadTimeout: 50 * time.Millisecond})
	nc := rawConn(t, u)
	fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 {
		t.Fatalf("slow body: %d %s", resp.StatusCode, b)
	}
	if d.n != 0 {
		t.Fatal("an agent started")
	}
}

// The agent's unanswered requests are remembered up to MaxPendingRequests
// too; the answer to one past it is forwarded without the session check.
func TestMaxPendingAgentRequests(t *testing.T) {
	d := newPipeDial(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		for range 10 {
			t.Start("_x/ask", map[string]any{"sessionId": t.SessionID()})
		}
		t.Say("asked")
		return "", nil
	}})
	g, u := start(t, d.Dial, &Options{MaxPendingRequests: 3})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	c.post(sid, prompt(2, sid, "go"))
	var ids []string
	sess.until(t, func(m map[string]any) bool {
		if m["method"] == "_x/ask" {
			ids = append(ids, mustJSON(m["id"]))
		}
		return chunkText(m) == "asked"
	})
	g.mu.Lock()
	gc := g.conns[c.conn]
	g.mu.Unlock()
	gc.mu.Lock()
	n := len(gc.replies)
	gc.mu.Unlock()
	if n != 3 || len(ids) != 10 {
		t.Fatalf("%d remembered of %d requests", n, len(ids))
	}
	answer := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	if r := c.post("", answer(ids[0])); r.status != 400 {
		t.Fatalf("a remembered request answered without its session: %d", r.status)
	}
	if r := c.post("", answer(ids[9])); r.status != 202 {
		t.Fatalf("an untracked request's answer: %d %s", r.status, r.body)
	}
}
