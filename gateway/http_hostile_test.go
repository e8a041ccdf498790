package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// freshDial gives every connection an agent of its own (no shared
// sessions), and counts the agents alive.
type freshDial struct {
	mu     sync.Mutex
	agents []*acptest.Agent
	live   atomic.Int64
	n      atomic.Int64
}

func newFreshDial(t *testing.T) *freshDial {
	d := &freshDial{}
	// Every test of the hostile suite leaves no goroutine and no agent
	// (checked last: this cleanup runs after the gateway's Shutdown).
	checkClean(t, d.live.Load)
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, a := range d.agents {
			a.Close()
		}
	})
	return d
}

func (d *freshDial) Dial(context.Context) (acp.Conn, error) {
	a := acptest.New(scriptOptions())
	d.mu.Lock()
	d.agents = append(d.agents, a)
	d.mu.Unlock()
	d.live.Add(1)
	d.n.Add(1)
	r, w := a.Pipe()
	return &countedConn{pipeConn{r, w}, d, sync.Once{}}, nil
}

type countedConn struct {
	pipeConn
	d    *freshDial
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.d.live.Add(-1) })
	return c.pipeConn.Close()
}

// Thousands of initializes at once (and hundreds of WebSocket upgrades)
// against MaxConnections 32: exactly 32 agents start, every other request
// gets 503 at once, and Shutdown leaves no agent (goleak checks the
// goroutines).
func TestHostileThousandsOfConnections(t *testing.T) {
	d := newFreshDial(t)
	g, u := start(t, d.Dial, &Options{MaxConnections: 32})
	tr := &http.Transport{MaxConnsPerHost: 256, MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var ok, refused, other atomic.Int64
	var wg sync.WaitGroup
	for range 2000 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				other.Add(1)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				ok.Add(1)
			case 503:
				refused.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 32 || refused.Load() != 2000-32 || other.Load() != 0 {
		t.Fatalf("200: %d, 503: %d, other: %d", ok.Load(), refused.Load(), other.Load())
	}
	for range 300 {
		wg.Go(func() {
			if c, _ := dialWS(t, u, nil); c.resp == nil || c.resp.StatusCode != 503 {
				other.Add(1)
			}
		})
	}
	wg.Wait()
	if other.Load() != 0 || d.n.Load() != 32 {
		t.Fatalf("%d upgrades not refused; %d agents started", other.Load(), d.n.Load())
	}
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := d.live.Load(); n != 0 {
		t.Fatalf("%d agents alive after Shutdown", n)
	}
}

// A client that opens its session stream and never reads it, while the
// agent streams 20 MiB: the gateway holds at most MaxBufferedBytes (plus
// a message) and closes the connection with ErrStalled once nothing has
// been taken for StallTimeout; the agent is shut down.
func TestHostileNeverReadsSSE(t *testing.T) {
	d := newFreshDial(t)
	g, u := start(t, d.Dial, &Options{MaxBufferedBytes: 256 << 10, StallTimeout: 200 * time.Millisecond})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	rawSessionStream(t, c, sid) // opened, never read
	g.mu.Lock()
	gc := g.conns[c.conn]
	g.mu.Unlock()
	waitFor(t, func() bool {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		return gc.streams[sid] != nil && gc.streams[sid].receiver
	})
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			gc.mu.Lock()
			if b := int64(gc.buffered); b > peak.Load() {
				peak.Store(b)
			}
			gc.mu.Unlock()
			select {
			case <-stop:
				return
			default:
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	c.post(sid, prompt(2, sid, "flood 20480"))
	r := waitGone(t, g, c.conn)
	close(stop)
	<-sampled
	if !strings.Contains(r, ErrStalled.Error()) {
		t.Fatalf("reason %q", r)
	}
	if p := peak.Load(); p > 256<<10+2048 {
		t.Fatalf("held up to %d bytes, bound 262144 plus one message", p)
	}
	waitFor(t, func() bool { return d.live.Load() == 0 })
}

// Giant bodies are cut at MaxBodyBytes (413) without the gateway reading
// much past it.
func TestHostileGiantBody(t *testing.T) {
	d := newFreshDial(t)
	_, u := start(t, d.Dial, nil)
	c := &client{t: t, url: u}
	c.initialize()
	body := &countingReader{r: io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","method":"_x","params":{"pad":"`), infinite('a'))}
	req, _ := http.NewRequest("POST", u, io.LimitReader(body, 256<<20))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderConnectionID, c.conn)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	} // else: the server closed while the client still wrote, also a refusal
	if n := body.n.Load(); n > 48<<20 {
		t.Fatalf("the client got to send %d bytes of a body capped at 16 MiB", n)
	}
	// The connection is unharmed.
	conn := c.open("")
	newSession(t, c, conn, 1)
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

type infinite byte

func (f infinite) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(f)
	}
	return len(b), nil
}

// Malformed bodies and headers each get a 4xx with a reason, forward
// nothing, and leave the connection working.
func TestHostileMalformed(t *testing.T) {
	d := newFreshDial(t)
	_, u := start(t, d.Dial, nil)
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)
	for _, body := range []string{
		"", "null", "1", `"str"`, "{}", "\x00\x01", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1}",
		strings.Repeat(`{"a":`, 100000), `{"jsonrpc":"2.0","id":[1],"method":"session/prompt","params":{"sessionId":"` + sid + `"}}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 2000) + `","method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"` + sid + `"}} trailing`,
	} {
		r := c.post(sid, body)
		if r.status < 400 || r.status >= 500 || strings.TrimSpace(r.body) == "" {
			t.Errorf("%.40q: %d %q", body, r.status, r.body)
		}
	}
	for name, hdr := range map[string][2]string{
		"long session id": {HeaderSessionID, strings.Repeat("s", 5000)},
	} {
		r := c.do("POST", "", prompt(9, sid, "x"), hdr[0], hdr[1])
		if r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	long := &client{t: t, url: u, conn: strings.Repeat("c", 60000)}
	if r := long.post("", prompt(9, sid, "x")); r.status != 404 {
		t.Errorf("long connection id: %d", r.status)
	}
	c.post(sid, prompt(2, sid, "still here"))
	if got := chunkText(sess.next(t)); got != "echo:still here" {
		t.Fatalf("after the garbage: %q", got)
	}
}

// A client that names another connection's session reaches only its own
// agent: it gets that agent's "not found", and neither connection sees the
// other's messages.
func TestHostileOtherConnectionsSession(t *testing.T) {
	d := newFreshDial(t)
	_, u := start(t, d.Dial, nil)
	a := &client{t: t, url: u}
	a.initialize()
	aConn := a.open("")
	sid := newSession(t, a, aConn, 1)
	aSess := a.open(sid)

	b := &client{t: t, url: u}
	b.initialize()
	b.open("")
	bSess := b.open(sid) // on b's connection: an empty stream of b's own
	if r := b.post(sid, prompt(2, sid, "steal")); r.status != 202 {
		t.Fatalf("b's prompt: %d %s", r.status, r.body)
	}
	m := bSess.next(t)
	if !isResponse(2)(m) || m["error"] == nil {
		t.Fatalf("b got %v, want its agent's error", m)
	}
	a.post(sid, prompt(2, sid, "mine"))
	if got := chunkText(aSess.next(t)); got != "echo:mine" {
		t.Fatalf("a got %q", got)
	}
	aSess.until(t, isResponse(2))
	// b's stream got nothing of a's turn: the next thing on it is b's own.
	b.post(sid, prompt(3, sid, "again"))
	if m := bSess.next(t); !isResponse(3)(m) {
		t.Fatalf("b's stream carried %v", m)
	}
	// Nor can b end a's connection without a's id.
	if r := b.do("DELETE", "", ""); r.status != 202 {
		t.Fatal(r.status)
	}
	a.post(sid, prompt(4, sid, "alive"))
	if got := chunkText(aSess.next(t)); got != "echo:alive" {
		t.Fatalf("a after b's DELETE: %q", got)
	}
}

// Slowloris: hundreds of POSTs whose bodies never finish each get 408
// within ReadTimeout; no agent starts and no goroutine stays (goleak).
func TestHostileSlowloris(t *testing.T) {
	d := newFreshDial(t)
	_, u := start(t, d.Dial, &Options{ReadTimeout: 100 * time.Millisecond})
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 200 {
		wg.Go(func() {
			nc := rawConn(t, u)
			fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",")
			nc.SetReadDeadline(time.Now().Add(20 * time.Second))
			b := make([]byte, 64)
			n, _ := io.ReadAtLeast(nc, b, 12)
			if !strings.HasPrefix(string(b[:n]), "HTTP/1.1 408") {
				bad.Add(1)
			}
		})
	}
	wg.Wait()
	if bad.Load() != 0 || d.n.Load() != 0 {
		t.Fatalf("%d without 408; %d agents started", bad.Load(), d.n.Load())
	}
}

// DNS rebinding against the zero Options: a web page whose own DNS name
// resolves to the gateway's loopback address sends its own name as Host
// (and as Origin, so the Origin check passes). Without a Token only
// loopback names are served: every rebinding variant gets 403 and starts
// no agent, while localhost, any 127.0.0.0/8 address and [::1] work.
func TestHostileDNSRebinding(t *testing.T) {
	d := newFreshDial(t)
	_, u := start(t, d.Dial, nil)
	port := u[strings.LastIndex(u, ":")+1:]
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
	try := func(host string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", u, strings.NewReader(initialize))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, h := range []string{
		"rebind.evil.example:" + port, "rebind.evil.example", "localhost.evil.example:" + port,
		"127.0.0.1.evil.example:" + port, "0x7f000001:" + port, "2130706433:" + port,
		"[::ffff:7f00:1]x:" + port, "evil:" + port, "localhost:" + port + "@evil",
		"[::2]:" + port, "10.0.0.1:" + port, "0.0.0.0:" + port,
	} {
		// net/http itself answers 400 to a Host it cannot parse.
		if s := try(h); s != 403 && s != 400 {
			t.Errorf("Host %q: %d, want 403", h, s)
		}
	}
	if n := d.n.Load(); n != 0 {
		t.Errorf("rebinding: %d agents started, want 0", n)
	}
	t.Logf("agents started by 12 rebinding Hosts: %d", d.n.Load())
	req, _ := http.NewRequest("GET", u, nil)
	req.Host = "rebind.evil.example:" + port
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("WebSocket upgrade with a rebinding Host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if n := d.n.Load(); n != 0 {
		t.Errorf("%d agents started, want 0", n)
	}
	for _, h := range []string{"localhost:" + port, "LOCALHOST:" + port, "127.0.0.1:" + port, "127.0.0.2:" + port, "127.1.2.3", "[::1]:" + port, "localhost"} {
		if s := try(h); s != 200 {
			t.Errorf("Host %q: %d, want 200", h, s)
		}
	}
}

// With a Token the Host is not checked (the token is the defence), unless
// AllowedHosts lists names; without one, AllowedHosts adds to the
// loopback names.
func TestHostsWithTokenOrAllowedHosts(t *testing.T) {
	d := newFreshDial(t)
	_, tok := start(t, d.Dial, &Options{Token: "t"})
	_, extra := start(t, d.Dial, &Options{AllowedHosts: []string{"*.proxy.internal"}})
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`
	for _, tc := range []struct {
		url, host, token string
		want             int
	}{
		{tok, "agents.example.com", "t", 200},
		{tok, "agents.example.com", "", 401},
		{extra, "a.proxy.internal:443", "", 200},
		{extra, "localhost", "", 200},
		{extra, "evil.example", "", 403},
	} {
		req, _ := http.NewRequest("POST", tc.url, strings.NewReader(initialize))
		req.Host = tc.host
		req.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s Host %q token %q: %d, want %d", tc.url, tc.host, tc.token, resp.StatusCode, tc.want)
		}
	}
}

// 24 concurrent 8 MiB notification POSTs on one connection whose agent
// does not read its stdin: the connection holds at most
// MaxConnectionBodyBytes of them (the rest get 429, their bodies unread),
// the one being written fails with 504 at AgentWriteTimeout, the
// connection closes with ErrAgentStalled, and the peak heap grows by at
// most 64 MiB. (Before the bound: +663 MiB, none answered after 12 s.)
func TestHostileBodiesInFlight(t *testing.T) {
	checkClean(t, nil)
	reasons := make(chan error, 1)
	_, u := start(t, dialStuck, &Options{AgentWriteTimeout: 500 * time.Millisecond, OnClose: func(_ string, r error) { reasons <- r }})
	c := &client{t: t, url: u}
	c.initialize()
	peak := heapPeak()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 24 {
		wg.Go(func() {
			s, body, err := postBig(u, c.conn, 8<<20)
			if err != nil {
				s = -1 // the server closed while the client still wrote: not read
			}
			mu.Lock()
			defer mu.Unlock()
			statuses[s]++
			if s == 504 && !strings.Contains(body, ErrAgentStalled.Error()) {
				t.Errorf("504 body %q", body)
			}
		})
	}
	wg.Wait()
	p := peak()
	t.Logf("24 x 8 MiB POSTs to an agent that does not read: peak heap +%d MiB; statuses %v", p>>20, statuses)
	if p > 64<<20 {
		t.Errorf("peak heap +%d MiB, bound 64 MiB", p>>20)
	}
	if statuses[504] == 0 || statuses[202] != 0 || statuses[504]+statuses[429]+statuses[404]+statuses[-1] != 24 {
		t.Errorf("statuses %v: want 504 for the stuck ones, 429 (or unread) for the rest", statuses)
	}
	if r := <-reasons; !errors.Is(r, ErrAgentStalled) {
		t.Errorf("reason %v", r)
	}
}

// MaxConnectionBodyBytes and MaxGatewayBodyBytes: bodies held for stuck
// agents fill the connection's bound (429) and then the gateway's (503);
// neither refused body is read, and nothing is forwarded.
func TestBodyBounds(t *testing.T) {
	checkClean(t, nil)
	g, u := start(t, dialStuck, &Options{MaxBodyBytes: 1 << 20, MaxConnectionBodyBytes: 1 << 20, MaxGatewayBodyBytes: 2 << 20})
	var conns [3]*client
	for i := range conns {
		conns[i] = &client{t: t, url: u}
		conns[i].initialize()
	}
	var wg sync.WaitGroup
	results := make(chan int, 2)
	for _, c := range conns[:2] {
		wg.Go(func() {
			s, _, _ := postBig(u, c.conn, 1<<20)
			results <- s
		})
	}
	waitFor(t, func() bool { g.bodies.mu.Lock(); defer g.bodies.mu.Unlock(); return g.bodies.used == 2<<20 })
	if s, body, err := postBig(u, conns[0].conn, 1000); err != nil || s != 429 {
		t.Errorf("a second body on a full connection: %d %q %v", s, body, err)
	}
	if s, body, err := postBig(u, conns[2].conn, 1000); err != nil || s != 503 {
		t.Errorf("a body on a full gateway: %d %q %v", s, body, err)
	}
	if s, _, err := postBig(u, "", 1000); err != nil || s != 503 {
		t.Errorf("a body naming no connection on a full gateway: %d %v", s, err)
	}
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	for s := range results {
		if s == 202 {
			t.Errorf("a body forwarded to a stuck agent answered 202")
		}
	}
	if g.bodies.used != 0 {
		t.Errorf("%d bytes still counted", g.bodies.used)
	}
}

// The body bounds hold over HTTP/2 without TLS, where one TCP connection
// carries up to 250 concurrent streams: 100 concurrent 1 MiB POSTs on one
// h2c connection to an agent that does not read grow the peak heap by at
// most 64 MiB, the connection's bound refusing the rest with 429, and
// every request gets its status.
func TestHostileBodiesOverH2C(t *testing.T) {
	checkClean(t, nil)
	g := New(dialStuck, &Options{AgentWriteTimeout: 500 * time.Millisecond})
	ts := httptest.NewUnstartedServer(g)
	ts.Config = NewServer(g)
	// The client shares this process's heap: with the server's default
	// 1 MiB frames, Go's client holds a 512 KiB buffer per stream it
	// sends (50 MiB for 100), which is not the gateway's. 16 KiB frames
	// (the protocol's default) keep the client's share small.
	ts.Config.HTTP2 = &http.HTTP2Config{MaxReadFrameSize: 16 << 10}
	ts.Start()
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	var dials atomic.Int64
	tr := &http.Transport{Protocols: p, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(func() { g.Close(); ts.Close(); tr.CloseIdleConnections() })
	hc := &http.Client{Transport: tr}
	c := &client{t: t, url: ts.URL, hc: hc}
	c.initialize()
	peak := heapPeak()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 100 {
		wg.Go(func() {
			body, size := bigNotification(1 << 20)
			req, _ := http.NewRequest("POST", ts.URL, body)
			req.ContentLength = size
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(HeaderConnectionID, c.conn)
			s := -1
			if resp, err := hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				s = resp.StatusCode
			}
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		})
	}
	wg.Wait()
	pk := peak()
	t.Logf("100 x 1 MiB POSTs on %d h2c connection(s) to an agent that does not read: peak heap +%d MiB; statuses %v", dials.Load(), pk>>20, statuses)
	if pk > 64<<20 {
		t.Errorf("peak heap +%d MiB, bound 64 MiB", pk>>20)
	}
	if statuses[202] > 16 || statuses[429] == 0 {
		t.Errorf("statuses %v: want at most 16 MiB of bodies accepted, the rest 429", statuses)
	}
	// A refusal resets its own stream only: with Connection: close on an
	// HTTP/2 answer the server shut the whole TCP connection down, and 83
	// of the 100 requests failed without a status.
	if statuses[-1] != 0 {
		t.Errorf("%d requests failed without a status: a refusal ended the h2c connection", statuses[-1])
	}
}
