// cork_test.go tests the gathering of a burst into few writes (the corked
// WebSocket, the SSE buffer): order is kept, and a message with nothing
// queued behind it is written at once, not held for the next one.
package gateway

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
)

// countConn records each Write it is given.
type countConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *countConn) took() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

func TestCorkConn(t *testing.T) {
	under := &countConn{}
	cc := &corkConn{Conn: under}

	// Uncorked: written through, one write each.
	cc.Write([]byte("a"))
	if w := under.took(); len(w) != 1 || string(w[0]) != "a" {
		t.Fatalf("uncorked: %q", w)
	}

	// Corked: gathered; the first write after the cork is lifted carries
	// them, in order, in one write.
	cc.cork(true)
	cc.Write([]byte("b"))
	cc.Write([]byte("c"))
	if w := under.took(); len(w) != 0 {
		t.Fatalf("corked writes went out: %q", w)
	}
	cc.cork(false)
	cc.Write([]byte("d"))
	if w := under.took(); len(w) != 1 || string(w[0]) != "bcd" {
		t.Fatalf("after the cork: %q, want one write \"bcd\"", w)
	}
	if cc.buf != nil {
		t.Fatal("an empty corkConn holds a buffer")
	}

	// A corked burst past corkBytes goes out when the buffer is full; a
	// write as large as the buffer goes through unbuffered, after what was
	// gathered.
	cc.cork(true)
	part := bytes.Repeat([]byte("x"), corkBytes/4+1)
	for range 4 {
		cc.Write(part)
	}
	if w := under.took(); len(w) != 1 || len(w[0]) != 3*len(part) {
		t.Fatalf("full buffer: %d writes", len(w))
	}
	big := bytes.Repeat([]byte("y"), corkBytes)
	cc.Write(big)
	if w := under.took(); len(w) != 2 || len(w[0]) != len(part) || len(w[1]) != corkBytes {
		t.Fatalf("large write: %d writes", len(w))
	}

	// flush sends what is gathered and lifts the cork.
	cc.Write([]byte("e"))
	if err := cc.flush(); err != nil {
		t.Fatal(err)
	}
	cc.Write([]byte("f"))
	if w := under.took(); len(w) != 2 || string(w[0]) != "e" || string(w[1]) != "f" {
		t.Fatalf("flush: %q", w)
	}
}

// rawAgent answers initialize; the test then writes its output (outW).
type rawAgent struct {
	in   *io.PipeReader
	inW  *io.PipeWriter
	out  *io.PipeReader
	outW *io.PipeWriter
}

func (a *rawAgent) Read(b []byte) (int, error)  { return a.out.Read(b) }
func (a *rawAgent) Write(b []byte) (int, error) { return a.inW.Write(b) }
func (a *rawAgent) Close() error {
	a.in.CloseWithError(io.ErrClosedPipe)
	a.outW.Close()
	return nil
}

func dialRaw(agents chan<- *rawAgent) DialFunc {
	return func(context.Context) (acp.Conn, error) {
		a := &rawAgent{}
		a.in, a.inW = io.Pipe()
		a.out, a.outW = io.Pipe()
		go func() {
			br := bufio.NewReader(a.in)
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			id := line[strings.Index(line, `"id":`)+5:]
			id = id[:strings.IndexAny(id, ",}")]
			io.WriteString(a.outW, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":1}}`+"\n")
			agents <- a
			io.Copy(io.Discard, br)
		}()
		return a, nil
	}
}

// burst renders notifications from..to-1, each naming its number.
func burst(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"x/n","params":{"n":%d,"pad":"%s"}}`+"\n", i, strings.Repeat(".", 100))
	}
	return b.String()
}

// updateBurst renders session updates from..to-1, each naming its number
// in its text: lines route's fast path takes in runs, queued in the
// agent's read block when a run is half of it (copyRun.queueIn).
func updateBurst(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d%s"}}}}`+"\n", i, strings.Repeat(".", 60))
	}
	return b.String()
}

// numberOf is the number a message of burst or updateBurst names.
func numberOf(m map[string]any) int {
	p, _ := m["params"].(map[string]any)
	if n, ok := p["n"].(float64); ok {
		return int(n)
	}
	u, _ := p["update"].(map[string]any)
	c, _ := u["content"].(map[string]any)
	text, _ := c["text"].(string)
	n, err := strconv.Atoi(strings.TrimRight(text, "."))
	if err != nil {
		return -1
	}
	return n
}

// checkBursts writes bursts of messages (render's) as the agent, each
// after the last has arrived, and a lone message between them: every
// message arrives, in order, and a lone one arrives with nothing written
// after it (held, recv would wait for ever and fail at its timeout).
func checkBursts(t *testing.T, a *rawAgent, render func(from, to int) string, recv func() map[string]any) {
	t.Helper()
	n := 0
	for _, size := range []int{1, 2000, 1, 1, 500, 1} {
		go io.WriteString(a.outW, render(n, n+size))
		for end := n + size; n < end; n++ {
			if m := recv(); numberOf(m) != n {
				t.Fatalf("message %v, want n %d", m, n)
			}
		}
	}
	// A burst whose read ends inside the next line: the burst arrives
	// while the agent has not finished that line (the gateway holds no
	// message for a line it cannot read yet).
	next := render(n+3, n+4)
	cut := len(next) / 2
	go io.WriteString(a.outW, render(n, n+3)+next[:cut])
	for end := n + 3; n < end; n++ {
		if m := recv(); numberOf(m) != n {
			t.Fatalf("message %v, want n %d", m, n)
		}
	}
	go io.WriteString(a.outW, next[cut:])
	if m := recv(); numberOf(m) != n {
		t.Fatalf("the completed line: %v, want n %d", m, n)
	}
}

func TestWebSocketBurstsAndLoneMessages(t *testing.T) {
	agents := make(chan *rawAgent, 1)
	// No ping (a write that would carry gathered frames) within the wait.
	_, u := start(t, dialRaw(agents), &Options{PingInterval: time.Hour})
	c, err := dialWS(t, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	c.until(isResponse(0))
	a := <-agents
	recv := func() map[string]any {
		m, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	checkBursts(t, a, burst, recv)
	// Updates, which the gateway queues in runs (in the blocks it read
	// them into, or copies), arrive whole and in order as its writer
	// sends them and gives their blocks back.
	checkBursts(t, a, updateBurst, recv)
}

func TestSSEBurstsAndLoneMessages(t *testing.T) {
	agents := make(chan *rawAgent, 1)
	// No keep-alive comment (which flushes) comes within the test's wait.
	_, u := start(t, dialRaw(agents), &Options{KeepAliveInterval: time.Hour})
	c := &client{t: t, url: u}
	c.initialize()
	s := c.open("")
	checkBursts(t, <-agents, burst, func() map[string]any { return s.next(t) })
}

// TestCorkFrames: the data frames wsWrite writes itself are well formed
// for every length encoding (7, 16 and 64 bits), go out in order with what
// the library writes between them (a control frame stays whole, between
// two frames), and a corked burst is gathered until the last frame.
func TestCorkFrames(t *testing.T) {
	under := &countConn{}
	cc := &corkConn{Conn: under}
	// Around corkBytes too: a frame of header and payload under it is
	// gathered, one of it or more goes out as it is.
	sizes := []int{0, 1, 125, 126, 1 << 10, corkBytes - 5, corkBytes - 4, corkBytes - 3, 65535, 65536, 70000}
	pong := []byte{0x8a, 0x00} // the library's (unmasked) empty pong
	for i, n := range sizes {
		if err := cc.writeFrame(bytes.Repeat([]byte{byte('a' + i)}, n), i < len(sizes)-1, nil); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if w := under.took(); len(w) != 0 {
				t.Fatalf("corked small frames went out: %d writes", len(w))
			}
			cc.Write(pong)
		}
	}
	var wire []byte
	for _, w := range under.took() {
		wire = append(wire, w...)
	}
	if cc.buf != nil {
		t.Fatal("the burst is written but the corkConn holds a buffer")
	}
	br := bufio.NewReader(bytes.NewReader(wire))
	next := func() (op byte, payload []byte) {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			t.Fatal(err)
		}
		if h[0]&0x80 == 0 || h[1]&0x80 != 0 {
			t.Fatalf("header %x: want fin set and no mask", h)
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			io.ReadFull(br, b[:])
			n = uint64(b[0])<<8 | uint64(b[1])
		case 127:
			var b [8]byte
			io.ReadFull(br, b[:])
			n = 0
			for _, c := range b {
				n = n<<8 | uint64(c)
			}
		}
		payload = make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			t.Fatal(err)
		}
		return h[0] & 0x0f, payload
	}
	for i, n := range sizes {
		op, p := next()
		if op != 0x1 || len(p) != n || (n > 0 && (p[0] != byte('a'+i) || p[n-1] != byte('a'+i))) {
			t.Fatalf("frame %d: opcode %d, %d bytes, want a text frame of %d", i, op, len(p), n)
		}
		if i == 2 {
			if op, p := next(); op != 0xa || len(p) != 0 {
				t.Fatalf("after frame 2: opcode %d (%d bytes), want the pong", op, len(p))
			}
		}
	}
	if br.Buffered() != 0 {
		t.Fatalf("%d bytes after the last frame", br.Buffered())
	}
}

// TestWriteFrameAllocs: a frame gathered in a corked burst costs no
// allocation. Its header once escaped to the heap through the long path's
// net.Buffers: an allocation for every message the gateway sent.
func TestWriteFrameAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race; ./test.sh runs this without it")
	}
	cc := &corkConn{Conn: &countConn{}}
	payload := bytes.Repeat([]byte("x"), 150) // a 16-bit length
	if err := cc.writeFrame(payload, true, nil); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if err := cc.writeFrame(payload, true, nil); err != nil {
			t.Fatal(err)
		}
		if err := cc.writeFrame(payload[:10], true, nil); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("a corked frame allocated %.1f times, want 0", n)
	}
}

// writeFrames writes what writeFrame writes for each message in turn, all
// but the last corked and the last as asked, in the same socket writes.
func TestWriteFramesAsWriteFrame(t *testing.T) {
	var msgs [][]byte
	for i, n := range []int{0, 1, 125, 126, 1 << 10, corkBytes - 5, 300, corkBytes - 3, 65536, 7, 9} {
		msgs = append(msgs, bytes.Repeat([]byte{byte('a' + i)}, n))
	}
	for _, corkLast := range []bool{false, true} {
		one, each := &countConn{}, &countConn{}
		if err := (&corkConn{Conn: one}).writeFrames(msgs, corkLast, nil); err != nil {
			t.Fatal(err)
		}
		cc := &corkConn{Conn: each}
		for i, msg := range msgs {
			if err := cc.writeFrame(msg, corkLast || i < len(msgs)-1, nil); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := one.took(), each.took(); len(got) != len(want) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
			t.Errorf("corkLast %v: writeFrames made %d writes (%d bytes), writeFrame one by one %d (%d bytes)", corkLast, len(got), len(bytes.Join(got, nil)), len(want), len(bytes.Join(want, nil)))
		}
	}
}
