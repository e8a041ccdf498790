package gateway

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

// The headers of the RFD's identity model.
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
)

// DialFunc starts the agent of one new ACP connection and returns its
// stdio: the agent's stdout to read, its stdin to write, newline-delimited
// JSON-RPC both ways. Close must end the agent (and make a blocked Read or
// Write return); the gateway calls it once, when the connection ends, and
// waits for it in Shutdown. [CommandAgent.Dial] runs a command;
// ctx bounds only the start.
type DialFunc func(ctx context.Context) (acp.Conn, error)

// Gateway is an http.Handler that serves stdio agents on the endpoint of
// the ACP RFD "Streamable HTTP & WebSocket transport", both profiles, one
// agent per ACP connection.
//
// Unstable: the RFD is not yet part of the protocol (stage Active); the
// wire follows the TypeScript SDK 2.4.0 and may change with the RFD. Mount it at the endpoint's path (the RFD's
// example is /acp); it answers every method and path it is given.
//
// It is safe for concurrent use. Messages between one client and its agent
// keep their order in each direction: the client's POSTs reach the agent in
// the order the gateway accepts them (a client that needs an order between
// two POSTs waits for the first's 202), and each stream carries the agent's
// messages in the order the agent wrote them. Messages on different
// streams have no order between them.
type Gateway struct {
	dial DialFunc
	o    Options

	mu       sync.Mutex
	conns    map[string]*conn
	count    int               // agents alive: initializing, serving, or not yet exited
	closing  bool              // Drain or Shutdown: new connections get 503
	draining bool              // Drain: the connections close as they fall idle
	changed  chan struct{}     // closed and replaced when a connection is forgotten (Drain waits on it)
	gone     map[string]string // recently closed id → reason, for 404 bodies
	goneIDs  []string          // ring of the keys of gone
	goneAt   int

	wg sync.WaitGroup // agents being shut down, and their readers

	bodies budget // POST bodies held, MaxGatewayBodyBytes

	stopping     chan struct{} // closed by Shutdown: held session streams end
	stoppingOnce sync.Once
	hold         time.Duration // sessionStreamHold
}

// goneKept is how many closed connections' reasons are kept.
const goneKept = 1024

// New returns a gateway that starts agents with dial. A nil opts is the
// zero Options.
func New(dial DialFunc, opts *Options) *Gateway {
	var o Options
	if opts != nil {
		o = *opts
	}
	g := &Gateway{
		dial:     dial,
		o:        o.withDefaults(),
		conns:    make(map[string]*conn),
		gone:     make(map[string]string),
		stopping: make(chan struct{}),
		changed:  make(chan struct{}),
		hold:     sessionStreamHold,
	}
	g.bodies.max = g.o.MaxGatewayBodyBytes
	return g
}

// Shutdown closes every connection (their streams end, WebSockets get a
// close frame with status 1001) and refuses new ones with 503, then waits
// until every agent has been shut down, or until ctx is done and returns
// its error. It does not stop the http.Server: call it first, then the
// server's Shutdown, which otherwise waits for SSE streams that never end.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.stoppingOnce.Do(func() { close(g.stopping) })
	g.mu.Lock()
	g.closing = true
	conns := make([]*conn, 0, len(g.conns))
	for _, c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		c.close(ErrShutdown)
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close is Shutdown without a deadline.
func (g *Gateway) Close() error { return g.Shutdown(context.Background()) }

// newConn starts an agent for a new connection, within MaxConnections.
// On failure it returns the HTTP status to answer.
func (g *Gateway) newConn(ctx context.Context, ws bool) (*conn, int, error) {
	g.mu.Lock()
	switch {
	case g.closing:
		g.mu.Unlock()
		return nil, http.StatusServiceUnavailable, ErrShutdown
	case g.count >= g.o.MaxConnections:
		g.mu.Unlock()
		return nil, http.StatusServiceUnavailable, fmt.Errorf("gateway: too many connections (%d)", g.o.MaxConnections)
	}
	g.count++
	// The reader and the agent's shutdown in close; added here, under the
	// lock Shutdown takes, so that Shutdown's Wait sees them.
	g.wg.Add(2)
	g.mu.Unlock()
	agent, err := g.dial(ctx)
	if err == nil && agent == nil {
		err = fmt.Errorf("gateway: the dial function returned no agent")
	}
	if err != nil {
		g.release()
		g.wg.Add(-2)
		return nil, http.StatusBadGateway, fmt.Errorf("gateway: starting the agent: %w", err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		g: g, o: &g.o, id: newID(), ws: ws, agent: agent,
		ctx: cctx, cancel: cancel,
		writeSem: make(chan struct{}, 1),
		bodies:   budget{max: g.o.MaxConnectionBodyBytes},
		room:     make(chan struct{}, 1),
		streams:  map[string]*stream{"": newStream()},
		pending:  make(map[string]string),
		replies:  make(map[string]string),
		initWait: make(map[string]chan []byte),
	}
	g.mu.Lock()
	if g.closing { // Shutdown ran while the agent started
		g.mu.Unlock()
		cancel()
		go func() {
			defer g.wg.Add(-2)
			_ = agent.Close()
			g.release()
		}()
		return nil, http.StatusServiceUnavailable, ErrShutdown
	}
	g.conns[c.id] = c
	g.mu.Unlock()
	go c.readAgent()
	return c, 0, nil
}

// release frees the MaxConnections slot of an agent that has exited (its
// Close returned) or never started. Not when its connection closes: a
// client that connects and hangs up at once would otherwise have new
// agents started while the old ones are still in their staged shutdown
// (seconds, for one that ignores stdin EOF), without bound.
func (g *Gateway) release() {
	g.mu.Lock()
	g.count--
	g.mu.Unlock()
}

// forget removes a closed connection and keeps its reason for a while.
// Its slot stays taken until its agent has exited (release).
func (g *Gateway) forget(c *conn, reason error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns[c.id] != c {
		return
	}
	delete(g.conns, c.id)
	close(g.changed)
	g.changed = make(chan struct{})
	if len(g.goneIDs) < goneKept {
		g.goneIDs = append(g.goneIDs, c.id)
	} else {
		delete(g.gone, g.goneIDs[g.goneAt])
		g.goneIDs[g.goneAt] = c.id
		g.goneAt = (g.goneAt + 1) % goneKept
	}
	g.gone[c.id] = reason.Error()
}

// lookup finds the initialized HTTP connection id; else it returns the
// 404 body.
func (g *Gateway) lookup(id string) (*conn, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.conns[id]
	if c == nil || c.ws || !c.isReady() {
		if r, ok := g.gone[id]; ok {
			return nil, "Unknown Acp-Connection-Id (closed: " + r + ")"
		}
		return nil, "Unknown Acp-Connection-Id"
	}
	return c, ""
}

func (c *conn) isReady() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready && c.reason == nil
}

// newID is a random UUID (version 4), as the TypeScript server's
// crypto.randomUUID(): unguessable, so that knowing one connection's id
// says nothing of another's.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ServeHTTP routes one request as the RFD's "Unified Endpoint Routing".
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.o.Token != "" && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="acp"`)
		textError(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if !g.hostAllowed(r.Host) {
		textError(w, "Forbidden: Host not allowed", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(o, r.Host) {
		textError(w, "Forbidden: Origin not allowed", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		g.servePost(w, r)
	case http.MethodGet:
		if isWebSocketUpgrade(r) {
			g.serveWebSocket(w, r)
			return
		}
		g.serveGet(w, r)
	case http.MethodDelete:
		g.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		textError(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func (g *Gateway) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[len(prefix):])), []byte(g.o.Token)) == 1
}

// hostAllowed is the defence against DNS rebinding: a web page whose own
// DNS name resolves to the gateway's loopback address reaches it with that
// name as Host (and as Origin, so the Origin check alone passes it).
// Without a Token, loopback is the only protection, so only loopback names
// are served (localhost and loopback addresses, whose meaning no DNS
// answer can change), plus AllowedHosts. With a Token the token is the
// defence, and the Host is checked only if AllowedHosts is set.
func (g *Gateway) hostAllowed(hostport string) bool {
	host, ok := splitHost(hostport)
	if !ok {
		return false
	}
	if matchAny(g.o.AllowedHosts, host) {
		return true
	}
	if g.o.Token != "" {
		return len(g.o.AllowedHosts) == 0
	}
	return isLoopbackName(host)
}

// splitHost is the lower-cased host of a Host header, without its port and
// brackets; ok is false if the port is not a number.
func splitHost(hostport string) (string, bool) {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		for _, c := range port {
			if c < '0' || c > '9' {
				return "", false
			}
		}
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(host), true
}

// isLoopbackName: "localhost" or a loopback address (127.0.0.0/8, ::1, an
// IPv4-mapped 127.x), written as an address: "127.1" or "2130706433"
// parse as such for some resolvers, not here.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// originAllowed: the Origin's host[:port] is the request's Host (same
// origin; the scheme is not compared, as behind a TLS-terminating proxy it
// differs), or its host matches AllowedOrigins.
func (g *Gateway) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	return matchAny(g.o.AllowedOrigins, strings.ToLower(u.Hostname())) || matchAny(g.o.AllowedOrigins, strings.ToLower(u.Host))
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), s); ok {
			return true
		}
	}
	return false
}

func isWebSocketUpgrade(r *http.Request) bool { return hasToken(r.Header, "Upgrade", "websocket") }

func textError(w http.ResponseWriter, msg string, status int) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}
