package gateway

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
