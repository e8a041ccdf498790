package remote

// Tests of the WebSocket client's reading: on the caller's goroutine, read
// ahead in a burst, and Close whether or not anyone reads.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"

	"net"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
)

// scriptedWS serves one WebSocket. What the test sends on the returned
// channel is written to the client as it is, at once; the server answers
// the client's close frame with one (once its writes are done) and ends.
func scriptedWS(t *testing.T) (string, chan<- []byte) {
	t.Helper()
	send := make(chan []byte)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw := acceptWS(w, r, "")
		if conn == nil {
			return
		}
		defer conn.Close()
		rw.Flush()
		var wmu sync.Mutex
		closed := make(chan struct{})
		go func() {
			// The client's frames: a close frame is answered.
			defer close(closed)
			br := bufio.NewReader(rw)
			for {
				op, _, _, err := readClientFrame(br)
				if err != nil {
					return
				}
				if op == opClose {
					wmu.Lock()
					conn.Write([]byte{0x88, 0x02, 0x03, 0xe8})
					wmu.Unlock()
					return
				}
			}
		}()
		for {
			select {
			case b := <-send:
				wmu.Lock()
				_, err := conn.Write(b)
				wmu.Unlock()
				if err != nil {
					return
				}
			case <-closed:
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL, send
}

// acceptWS answers r's WebSocket handshake for a test server: a 101, with
// extra header lines (each ending in \r\n) after the accept key, written
// to the returned buffer, not yet flushed; a nil conn if the connection
// cannot be taken over. The key is computed here, not by the client's
// wsAccept, so that a mistake there fails the handshake.
func acceptWS(w http.ResponseWriter, r *http.Request, extra string) (net.Conn, *bufio.ReadWriter) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil
	}
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n" + extra + "\r\n")
	return conn, rw
}

// readClientFrame reads one frame a client sent a test server: its
// opcode, whether it was masked, and its payload unmasked.
func readClientFrame(br *bufio.Reader) (op byte, masked bool, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, false, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, err = io.ReadFull(br, l[:])
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, err = io.ReadFull(br, l[:])
		n = binary.BigEndian.Uint64(l[:])
	}
	var key [4]byte
	if masked = h[1]&0x80 != 0; masked && err == nil {
		_, err = io.ReadFull(br, key[:])
	}
	if err != nil || n > 1<<30 {
		return 0, false, nil, io.ErrUnexpectedEOF
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(br, payload); err != nil {
		return 0, false, nil, err
	}
	for i := range payload {
		payload[i] ^= key[i%4]
	}
	return h[0] & 0x0f, masked, payload, nil
}

// textFrames is the server's unmasked text frames of msgs, one each.
func textFrames(msgs ...string) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, 0x81)
		switch n := len(m); {
		case n < 126:
			b = append(b, byte(n))
		case n < 1<<16:
			b = binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
		default:
			b = binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
		}
		b = append(b, m...)
	}
	return b
}

func wsConnect(t *testing.T, url string) *wsConn {
	t.Helper()
	conn, err := (&WebSocketTransport{URL: url}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return conn.(*wsConn)
}

// transportGoroutines counts the goroutines running the transport's code.
func transportGoroutines() int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	return strings.Count(b.String(), "remote.(*wsConn)")
}

// msg is the i-th message of a test: JSON of about 100 bytes.
func msg(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","n":%d,"pad":"%s"}}`, i, strings.Repeat(".", i%40))
}

// burstFrames is the frames of messages from to from+n-1, for one write.
func burstFrames(from, n int) []byte {
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = msg(from + i)
	}
	return textFrames(msgs...)
}

// An idle WebSocket has no goroutine of the transport's: the client's
// reader reads the frames itself, so a message that arrives alone wakes
// one goroutine, not a read loop and then the client.
func TestWSReadsOnTheCallersGoroutine(t *testing.T) {
	url, send := scriptedWS(t)
	c := wsConnect(t, url)
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 3 {
		send <- textFrames(msg(i))
		line, err := br.ReadString('\n')
		if err != nil || line != msg(i)+"\n" {
			t.Fatalf("line %d: %q, %v", i, line, err)
		}
		if n := transportGoroutines(); n != 0 {
			t.Fatalf("%d goroutines of the transport between messages, want none", n)
		}
	}
}

// Bursts are read ahead (pump) and single messages read directly, in any
// alternation, and every line comes through once, in order. The read
// ahead ends with its burst; Close leaves no goroutine (TestMain's
// goleak).
func TestWSBurstsAndSingleMessages(t *testing.T) {
	before := pumpStarts.Load()
	url, send := scriptedWS(t)
	c := wsConnect(t, url)
	defer c.Close()
	// As the client's line reader reads: 32 KiB at a time.
	br := bufio.NewReaderSize(c, 32<<10)
	next := 0
	expect := func(n int) {
		t.Helper()
		for range n {
			line, err := br.ReadString('\n')
			if err != nil || line != msg(next)+"\n" {
				t.Fatalf("line %d: %.80q, %v", next, line, err)
			}
			next++
		}
	}
	burst := func(n int) { send <- burstFrames(next, n) }
	for round := range 3 {
		burst(3000 + round)
		expect(3000 + round)
		for range 5 {
			burst(1)
			expect(1)
		}
	}
	if pumpStarts.Load() == before {
		t.Error("three bursts of 300 KiB were not read ahead")
	}
}

// Close ends a read ahead that waits for a client that stopped reading in
// the middle of a burst: Close reads to the server's close frame itself,
// which the server sends once the rest of its burst is read.
func TestWSCloseInABurst(t *testing.T) {
	url, send := scriptedWS(t)
	c := wsConnect(t, url)
	go func() { send <- burstFrames(0, 20000) }()
	br := bufio.NewReaderSize(c, 32<<10)
	for i := range 1000 {
		if line, err := br.ReadString('\n'); err != nil || line != msg(i)+"\n" {
			t.Fatalf("line %d: %.80q, %v", i, line, err)
		}
	}
	c.Close()
	if c.remote == nil {
		t.Errorf("Close returned without the server's close frame (ended with %v)", c.rerr)
	}
	// What is left to read ends, at io.EOF.
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Errorf("reading after Close: %v, want the end", err)
	}
}

// Close while the client's reader reads a burst (the usual case: Close on
// one goroutine, the reader on another): both return, the reader at the
// end of its input, and what it read is the burst's start, in order.
func TestWSCloseWhileReading(t *testing.T) {
	url, send := scriptedWS(t)
	c := wsConnect(t, url)
	go func() { send <- burstFrames(0, 50000) }()
	type result struct {
		lines int
		err   error
	}
	got := make(chan result)
	started := make(chan struct{})
	go func() {
		br := bufio.NewReaderSize(c, 32<<10)
		n := 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				got <- result{n, err}
				return
			}
			if line != msg(n)+"\n" {
				got <- result{n, fmt.Errorf("line %d: %.80q", n, line)}
				return
			}
			if n++; n == 2000 {
				close(started)
			}
		}
	}()
	<-started
	c.Close()
	r := <-got
	if r.err != io.EOF {
		t.Errorf("the reader ended after %d lines with %v, want io.EOF", r.lines, r.err)
	}
	t.Logf("read %d lines of 50 000 before Close ended the input", r.lines)
}

// Close of a connection nobody reads performs the handshake by reading
// in the client's place: it returns once the server's close frame came,
// not at closeWait.
func TestWSCloseUnread(t *testing.T) {
	url, send := scriptedWS(t)
	c := wsConnect(t, url)
	send <- textFrames(msg(0), msg(1))
	c.Close()
	if c.remote == nil {
		t.Errorf("Close returned without the server's close frame (ended with %v)", c.rerr)
	}
	if _, err := c.Read(make([]byte, 10)); err != io.EOF {
		t.Errorf("a Read after Close: %v, want io.EOF", err)
	}
}

// scriptReader is a network that yields its chunks, one a Read, and then
// reports a Read the test did not expect (one that would have waited).
type scriptReader struct {
	t      *testing.T
	chunks [][]byte
}

func (r *scriptReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		r.t.Error("Read waited for another frame while it had a message to return")
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks = r.chunks[1:]
	return n, nil
}

// writeRecorder is the socket's write side: the client's frames.
type writeRecorder struct{ bytes.Buffer }

func (w *writeRecorder) Read([]byte) (int, error) { return 0, io.EOF }
func (w *writeRecorder) Close() error             { return nil }

// A message followed by a ping, and then nothing: Read answers the ping
// and returns the message, without waiting for a frame that has not come
// (the agent's last answer before a quiet spell must not wait for the
// next keep-alive).
func TestWSReadDoesNotWaitBehindAPing(t *testing.T) {
	ping := []byte{0x89, 0x02, 'h', 'i'}
	for _, tc := range []struct {
		name  string
		wire  []byte
		lines string
	}{
		{"message, ping", append(textFrames(msg(0)), ping...), msg(0) + "\n"},
		{"message, ping, ping", append(append(textFrames(msg(0)), ping...), ping...), msg(0) + "\n"},
		{"ping, message, ping", append(append(append([]byte{}, ping...), textFrames(msg(0))...), ping...), msg(0) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writeRecorder{}
			c := &wsConn{rwc: w, max: 1 << 20, done: make(chan struct{}), idle: make(chan struct{}, 1),
				ahead: make(chan aheadBlock, aheadBlocks), closed: make(chan struct{})}
			c.br = bufio.NewReaderSize(&scriptReader{t: t, chunks: [][]byte{tc.wire}}, wsReadBuf)
			p := make([]byte, 4096)
			n, err := c.Read(p)
			if err != nil || string(p[:n]) != tc.lines {
				t.Fatalf("Read: %q, %v; want %q", p[:n], err, tc.lines)
			}
			if pongs := bytes.Count(w.Bytes(), []byte{0x8a, 0x82}); pongs != bytes.Count(tc.wire, ping) {
				t.Errorf("%d pongs sent for %d pings", pongs, bytes.Count(tc.wire, ping))
			}
		})
	}
}

// frameReady decides whether Read, holding bytes to return, may read the
// next frame: only if reading it cannot wait for the network.
func TestFrameReady(t *testing.T) {
	text := textFrames(strings.Repeat("x", 200)) // a 16-bit length
	huge := []byte{0x81, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'x'}
	for _, tc := range []struct {
		name          string
		buf           []byte
		header, whole bool
	}{
		{"nothing", nil, false, false},
		{"half a header", text[:1], false, false},
		{"a header, part of its payload", text[:10], true, false},
		{"a whole text message", text, true, true},
		{"a fragment, whole", []byte{0x01, 0x01, 'x'}, true, false},
		{"a binary message, whole", []byte{0x82, 0x01, 'x'}, true, false},
		{"a ping, whole", []byte{0x89, 0x02, 'h', 'i'}, true, true},
		{"a ping, part of it", []byte{0x89, 0x02, 'h'}, false, false},
		{"a 64-bit length near 2^63", huge, true, false},
	} {
		br := bufio.NewReaderSize(bytes.NewReader(tc.buf), wsReadBuf)
		br.Peek(len(tc.buf)) // buffered, as if read
		if got := frameReady(br, false); got != tc.header {
			t.Errorf("%s: frameReady(header) = %v, want %v", tc.name, got, tc.header)
		}
		if got := frameReady(br, true); got != tc.whole {
			t.Errorf("%s: frameReady(whole) = %v, want %v", tc.name, got, tc.whole)
		}
	}
}
