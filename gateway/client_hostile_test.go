package gateway

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// checkClean records the goroutines alive now and, when the test's other
// cleanups (registered later, so run earlier: the gateway's Shutdown, the
// server's Close) are done, fails the test if any new goroutine is left or
// live reports an agent still alive.
func checkClean(t *testing.T, live func() int64) {
	t.Helper()
	before := runtime.NumGoroutine()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if live != nil {
			if n := live(); n != 0 {
				t.Errorf("%d agents alive after the test", n)
			}
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("goroutines left: %v", err)
		}
		t.Logf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
	})
}

// startPublic serves g as NewServer would (header limits and timeouts).
func startPublic(t *testing.T, dial DialFunc, opts *Options) (*Gateway, string) {
	t.Helper()
	g := New(dial, opts)
	ts := httptest.NewUnstartedServer(g)
	ts.Config = NewServer(g)
	ts.Start()
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ts.Close()
	})
	return g, ts.URL
}

// raw sends req on a new TCP connection (half-closing it after if
// closeWrite) and returns the status of the answer, 0 if the server
// closed without one.
func raw(t *testing.T, u, req string, closeWrite bool) int {
	t.Helper()
	nc := rawConn(t, u)
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := nc.Write([]byte(req)); err != nil {
		return 0
	}
	if closeWrite {
		nc.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A hostile HTTP client: malformed and huge headers, lying or broken
// bodies, a body sent a byte at a time, bogus upgrades, absolute-form
// targets, pipelining, and mixed-up connection and session ids. Each gets
// a 4xx (or the connection closed), none starts an agent or reaches the
// one agent started on purpose with a message it should not get, and no
// goroutine or agent is left.
func TestHostileHTTPClient(t *testing.T) {
	d := newFreshDial(t) // checks goroutines and agents at the end
	_, u := startPublic(t, d.Dial, &Options{ReadTimeout: 300 * time.Millisecond})
	c := &client{t: t, url: u}
	c.initialize()
	conn := c.open("")
	sid := newSession(t, c, conn, 1)
	sess := c.open(sid)

	post := func(headers, body string) string {
		return fmt.Sprintf("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", len(body), headers, body)
	}
	note := `{"jsonrpc":"2.0","method":"_x","params":{}}`
	cases := []struct {
		name       string
		req        string
		closeWrite bool
		want       []int // acceptable statuses; 0: closed without an answer
	}{
		{"header without a colon", "GET / HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n", false, []int{400}},
		{"NUL in a header", "GET / HTTP/1.1\r\nHost: localhost\r\nAcp-Connection-Id: a\x00b\r\n\r\n", false, []int{400}},
		{"header over 64 KiB", "GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", false, []int{431, 0}},
		{"10000 small headers", "GET / HTTP/1.1\r\nHost: localhost\r\n" + strings.Repeat("X-A: b\r\n", 10000) + "\r\n", false, []int{431, 0}},
		{"negative Content-Length", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n", false, []int{400}},
		{"two Content-Lengths", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", false, []int{400}},
		{"Content-Length over MaxBodyBytes", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n{", false, []int{413}},
		{"bad chunk size", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nAcp-Connection-Id: " + c.conn + "\r\n\r\nzz\r\n", false, []int{400}},
		{"body shorter than Content-Length", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\nAcp-Connection-Id: " + c.conn + "\r\n\r\n{\"jsonrpc\"", true, []int{400}},
		{"malformed Content-Type", strings.Replace(post("Acp-Connection-Id: "+c.conn+"\r\n", note), "application/json", "application/json;;=", 1), false, []int{415}},
		{"garbage Accept", "GET / HTTP/1.1\r\nHost: localhost\r\nAccept: ;;;/\r\nAcp-Connection-Id: " + c.conn + "\r\n\r\n", false, []int{406}},
		{"two connection ids", post("Acp-Connection-Id: not-it\r\nAcp-Connection-Id: "+c.conn+"\r\n", note), false, []int{404}},
		{"connection id list", post("Acp-Connection-Id: not-it, "+c.conn+"\r\n", note), false, []int{404}},
		{"POST with Upgrade", post("Upgrade: websocket\r\nConnection: Upgrade\r\n", note), false, []int{400}},
		{"GET Upgrade: h2c", "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n", false, []int{400, 406}},
		{"upgrade on HTTP/1.0", "GET / HTTP/1.0\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", false, []int{426}},
		{"upgrade with POST", "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", false, []int{415}},
		{"absolute-form target to another host", "POST http://evil.example/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false, []int{403}},
		{"HTTP/1.0 without Host", "POST / HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false, []int{403}},
		{"PUT", "PUT / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n", false, []int{405}},
		{"OPTIONS preflight", "OPTIONS / HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\n\r\n", false, []int{403}},
		{"session header and body disagree", post("Acp-Connection-Id: "+c.conn+"\r\nAcp-Session-Id: other\r\n", prompt(5, sid, "x")), false, []int{400}},
		{"two session ids", post("Acp-Connection-Id: "+c.conn+"\r\nAcp-Session-Id: other\r\nAcp-Session-Id: "+sid+"\r\n", prompt(5, sid, "x")), false, []int{400}},
		{"initialize naming a connection", post("Acp-Connection-Id: "+c.conn+"\r\n", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`), false, []int{400}},
		{"a response nobody asked for", post("Acp-Connection-Id: "+c.conn+"\r\n", `{"jsonrpc":"2.0","id":"never-asked","result":{}}`), false, []int{202}},
	}
	for _, tc := range cases {
		got := raw(t, u, tc.req, tc.closeWrite)
		ok := false
		for _, w := range tc.want {
			ok = ok || got == w
		}
		if !ok {
			t.Errorf("%s: %d, want one of %v", tc.name, got, tc.want)
		}
	}

	// A body sent a byte at a time: cut at ReadTimeout, nothing forwarded.
	nc := rawConn(t, u)
	fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nAcp-Connection-Id: %s\r\n\r\n", c.conn)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	tick := time.NewTicker(10 * time.Millisecond) // the client's pace, not a synchronization
	defer tick.Stop()
trickle:
	for {
		select {
		case s := <-answered:
			if s != 408 {
				t.Errorf("trickled body: %d, want 408", s)
			}
			break trickle
		case <-tick.C:
			nc.Write([]byte(" "))
		}
	}

	// Pipelined: two requests in one write, both answered in order.
	nc = rawConn(t, u)
	two := post("Acp-Connection-Id: "+c.conn+"\r\n", note)
	nc.Write([]byte(two + two))
	br := bufio.NewReader(nc)
	for i := range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 202 {
			t.Fatalf("pipelined request %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}

	// The connection's session stream has one receiver; a second gets 409.
	if s := c.openStatus(sid); s.status != 409 {
		t.Errorf("a second receiver: %d", s.status)
	}
	// After all that, only the agent started on purpose exists, and it
	// got nothing it should not have: the next thing on the session's
	// stream is the answer to this prompt.
	c.post(sid, prompt(9, sid, "still here"))
	if got := chunkText(sess.next(t)); got != "echo:still here" {
		t.Fatalf("after the hostile client: %q", got)
	}
	if n := d.n.Load(); n != 1 {
		t.Fatalf("%d agents started, want 1", n)
	}
}
