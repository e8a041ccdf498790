package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/coder/websocket"
)

// A WebSocket client that stops reading while its agent streams 20 MiB:
// the gateway holds at most MaxBufferedBytes (plus a message) and closes
// the connection with ErrStalled; the agent is shut down.
func TestHostileWebSocketNeverReads(t *testing.T) {
	d := newFreshDial(t)
	g, u := start(t, d.Dial, &Options{MaxBufferedBytes: 256 << 10, StallTimeout: 200 * time.Millisecond})
	c, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := c.resp.Header.Get(HeaderConnectionID)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	c.until(isResponse(0))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	sid := result(c.until(isResponse(1)))["sessionId"].(string)
	g.mu.Lock()
	gc := g.conns[id]
	g.mu.Unlock()
	peak := samplePeak(gc)
	c.send(prompt(2, sid, "flood 20480")) // and read nothing more
	r := waitGone(t, g, id)
	if p := peak(); p > 256<<10+2048 {
		t.Fatalf("held up to %d bytes", p)
	}
	if !strings.Contains(r, ErrStalled.Error()) {
		t.Fatalf("reason %q", r)
	}
	waitFor(t, func() bool { return d.live.Load() == 0 })
}

// samplePeak samples c.buffered until the returned func is called, which
// returns the peak.
func samplePeak(c *conn) func() int64 {
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			c.mu.Lock()
			if b := int64(c.buffered); b > peak.Load() {
				peak.Store(b)
			}
			c.mu.Unlock()
			select {
			case <-stop:
				return
			default:
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	return func() int64 { close(stop); <-done; return peak.Load() }
}

// A client that floods malformed frames and reads none of the error
// replies: the replies are bounded like the agent's output, and the
// connection closes with ErrStalled.
func TestHostileWebSocketGarbageFlood(t *testing.T) {
	d := newFreshDial(t)
	g, u := start(t, d.Dial, &Options{MaxBufferedBytes: 16 << 10, StallTimeout: 200 * time.Millisecond})
	c, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := c.resp.Header.Get(HeaderConnectionID)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	c.until(isResponse(0))
	g.mu.Lock()
	gc := g.conns[id]
	g.mu.Unlock()
	peak := samplePeak(gc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; ; i++ {
		if err := c.ws.Write(ctx, websocket.MessageText, []byte("{garbage")); err != nil {
			break // the gateway closed the socket
		}
		if gone(g, id) != "" {
			break
		}
	}
	r := waitGone(t, g, id)
	if p := peak(); p > 16<<10+1024 {
		t.Fatalf("held up to %d bytes", p)
	}
	if !strings.Contains(r, ErrStalled.Error()) {
		t.Fatalf("reason %q", r)
	}
}

// Upgrades that are not WebSocket handshakes get 4xx from the library
// and start no agent that outlives them.
func TestHostileBadUpgrade(t *testing.T) {
	d := newFreshDial(t)
	g, u := start(t, d.Dial, nil)
	nc := rawConn(t, u)
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n") // no key, no version
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	waitConns(t, g, 0)
	waitFor(t, func() bool { return d.live.Load() == 0 })
}

// exitDial gives every connection an agent of its own whose Close returns
// only once the test lets it: a process slow to exit (the staged shutdown
// waits seconds for a stubborn one). It counts the agents alive, from the
// start of Dial to the return of Close, and their peak.
type exitDial struct {
	live, peak, n atomic.Int64
	exit          chan struct{} // closed: agents may exit
	once          sync.Once
}

func newExitDial(t *testing.T) *exitDial {
	d := &exitDial{exit: make(chan struct{})}
	checkClean(t, d.live.Load)
	return d
}

func (d *exitDial) release() { d.once.Do(func() { close(d.exit) }) }

func (d *exitDial) Dial(context.Context) (acp.Conn, error) {
	n := d.live.Add(1)
	for p := d.peak.Load(); n > p && !d.peak.CompareAndSwap(p, n); p = d.peak.Load() {
	}
	d.n.Add(1)
	a := acptest.New(scriptOptions())
	r, w := a.Pipe()
	return &exitConn{pipeConn: pipeConn{r, w}, a: a, d: d}, nil
}

type exitConn struct {
	pipeConn
	a    *acptest.Agent
	d    *exitDial
	once sync.Once
}

func (c *exitConn) Close() error {
	err := c.pipeConn.Close()
	c.once.Do(func() {
		<-c.d.exit
		c.a.Close()
		c.d.live.Add(-1)
	})
	return err
}

// An upgrade that is not a valid WebSocket handshake is refused (4xx, as
// the library would) before any agent starts.
func TestHostileBogusUpgrades(t *testing.T) {
	d := newExitDial(t)
	_, u := start(t, d.Dial, &Options{MaxConnections: 4})
	t.Cleanup(d.release) // runs before the gateway's Shutdown, which waits for Close
	bogus := []string{
		"Upgrade: websocket\r\nConnection: Upgrade\r\n", // no key, no version
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n",
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n",
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		"Upgrade: websocket\r\nConnection: keep-alive\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
	}
	var wg sync.WaitGroup
	var notRefused atomic.Int64
	for i := range 150 {
		wg.Go(func() {
			nc := rawConn(t, u)
			fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: localhost\r\n%s\r\n", bogus[i%len(bogus)])
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil || resp.StatusCode < 400 || resp.StatusCode >= 500 {
				notRefused.Add(1)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	t.Logf("150 bogus upgrades: %d agents started, %d not refused with 4xx", d.n.Load(), notRefused.Load())
	if d.n.Load() != 0 || notRefused.Load() != 0 {
		t.Fatalf("bogus upgrades: %d agents started, %d not refused", d.n.Load(), notRefused.Load())
	}
}

// An agent counts against MaxConnections until it has exited (its Close
// returned), not merely until its connection closed: 150 clients that
// connect and hang up at once, against agents slow to exit, never have
// more than MaxConnections agents alive; new ones get 503 meanwhile.
func TestHostileSlowExitsBound(t *testing.T) {
	d := newExitDial(t)
	_, u := start(t, d.Dial, &Options{MaxConnections: 4})
	t.Cleanup(d.release)
	var wg sync.WaitGroup
	var ok, busy atomic.Int64
	for i := range 150 {
		wg.Go(func() {
			if i%2 == 0 {
				c, err := dialWS(t, u, nil)
				if err != nil {
					if c.resp != nil && c.resp.StatusCode == 503 {
						busy.Add(1)
					}
					return
				}
				ok.Add(1)
				c.ws.CloseNow()
				return
			}
			req, _ := http.NewRequest("POST", u, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				ok.Add(1)
				del, _ := http.NewRequest("DELETE", u, nil)
				del.Header.Set(HeaderConnectionID, resp.Header.Get(HeaderConnectionID))
				if r, err := http.DefaultClient.Do(del); err == nil {
					r.Body.Close()
				}
			case 503:
				busy.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("150 connect-and-hang-up clients against agents slow to exit: peak %d agents alive (MaxConnections 4), %d dialled, %d connected, %d refused 503",
		d.peak.Load(), d.n.Load(), ok.Load(), busy.Load())
	if p := d.peak.Load(); p > 4 {
		t.Fatalf("%d agents alive at once, MaxConnections 4", p)
	}
	d.release()
	waitFor(t, func() bool { return d.live.Load() == 0 })
	(&client{t: t, url: u}).initialize() // the slots are free again
}

// A WebSocket that never sends initialize is closed at InitializeTimeout
// (1008, ErrInitializeTimeout), and its agent is shut down.
func TestHostileWebSocketNeverInitializes(t *testing.T) {
	d := newFreshDial(t)
	reasons := make(chan error, 1)
	_, u := start(t, d.Dial, &Options{InitializeTimeout: 100 * time.Millisecond, OnClose: func(_ string, r error) { reasons <- r }})
	c, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = c.recv(); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("read: %v", err)
	}
	if r := <-reasons; !errors.Is(r, ErrInitializeTimeout) {
		t.Fatalf("reason %v", r)
	}
	waitFor(t, func() bool { return d.live.Load() == 0 })
}
