package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

// WebSocketTransport speaks ACP over the RFD's WebSocket profile: a GET
// with Upgrade: websocket to URL (the same endpoint as Streamable HTTP),
// then one JSON-RPC message per text frame in each direction. Binary
// frames from the server are read past. The client's first message is
// initialize, as on every transport. Close performs the close handshake
// (code 1000), waiting at most 5 s for the server's close frame.
//
// Everything travels on one stream, in the order the server wrote it, so
// every ordering guarantee of the client holds as on stdio, the
// session/load replay included.
//
// When the server closes the socket or it breaks, the client's pending
// calls fail with an error wrapping acp.ErrConnClosed and a *CloseError
// (code and reason; 1006 when no close frame came, also when the server
// broke the framing rules, which the client answers with close 1002). The
// client speaks RFC 6455 without extensions or subprotocols, and answers
// pings. A handshake answered
// with another status than 101 fails Connect with a *StatusError (426: the
// server has no WebSocket; use HTTPTransport).
type WebSocketTransport struct {
	// URL is the endpoint: wss://agents.example.com/acp (https:// is read
	// as wss://, and http:// as ws://, which the insecure rule covers).
	URL string
	Options
}

// Connect performs the handshake, bounded by ctx and RequestTimeout.
func (t *WebSocketTransport) Connect(ctx context.Context) (acp.Conn, error) {
	raw := t.URL
	// The WebSocket and the Streamable HTTP profile share one endpoint, so
	// an http(s) URL names it just as well.
	switch {
	case len(raw) > 8 && raw[:8] == "https://":
		raw = "wss://" + raw[8:]
	case len(raw) > 7 && raw[:7] == "http://":
		raw = "ws://" + raw[7:]
	}
	u, err := checkURL(raw, "wss", "ws", t.AllowInsecure)
	if err != nil {
		return nil, err
	}
	client, err := t.httpClient(true)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeoutCause(ctx, t.timeout(),
		fmt.Errorf("acp/remote: the WebSocket handshake with %s got no response in %v (Options.RequestTimeout)", u.Redacted(), t.timeout()))
	defer cancel()
	req, err := http.NewRequestWithContext(dctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	rwc, resp, err := wsHandshake(req, client, u, t.header(nil))
	if err != nil {
		if t.HTTPClient == nil {
			client.CloseIdleConnections()
		}
		if errors.Is(err, errNotUpgraded) {
			defer resp.Body.Close()
			return nil, statusError("the WebSocket handshake", resp)
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if cause := context.Cause(dctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, cause
		}
		return nil, fmt.Errorf("acp/remote: WebSocket handshake with %s: %w", u.Redacted(), err)
	}
	c := &wsConn{rwc: rwc, in: newInbox(), max: t.maxMessage(), done: make(chan struct{})}
	if t.HTTPClient == nil {
		c.client = client
	}
	// The inbox wakes the client once per burst rather than per message:
	// before each read of the network (see flushReader), and when
	// inboxSignal bytes wait.
	c.in.deferred = true
	c.br = bufio.NewReaderSize(flushReader{rwc, c.in}, wsReadBuf)
	c.connID = resp.Header.Get(HeaderConnectionID)
	go c.readLoop()
	return c, nil
}

// wsReadBuf is the read buffer of a WebSocket connection: a burst of small
// messages costs a read per 32 KiB, not per message.
const wsReadBuf = 32 << 10

// flushReader is the network under a WebSocket's read buffer: before each
// read, which may wait, the inbox wakes the client for what was queued.
type flushReader struct {
	r  io.Reader
	in *inbox
}

func (f flushReader) Read(p []byte) (int, error) {
	f.in.flush()
	return f.r.Read(p)
}

type wsConn struct {
	rwc    io.ReadWriteCloser // the upgraded connection
	br     *bufio.Reader      // rwc's, read by readLoop only
	in     *inbox
	max    int
	client *http.Client // ours, to close its idle connections; nil when the caller's
	connID string       // from the 101 response (the RFD's; informative)

	done chan struct{} // the reader has stopped

	partial []byte // the writer's unfinished line

	// Frame reading (readLoop's): what is left of the data frame being
	// read, and whether it ends its message.
	remain int64
	fin    bool
	ctl    [maxControlBytes]byte // a control frame's payload (a field: on the stack it escaped, an allocation per frame)

	wmu  sync.Mutex // frames are written whole: the client's, pongs, close
	wbuf []byte     // frames gathered for one write (at most maxFrameBatch and a header)

	mu        sync.Mutex
	closing   bool        // Close began: the close frame is (being) sent
	remote    *CloseError // the server's close frame, once read
	drained   bool        // the server closed it drained (closeErr)
	closeOnce sync.Once
}

func (c *wsConn) Read(p []byte) (int, error) { return c.in.Read(p) }

// Write sends each complete line as one text frame; the frames of one
// Write go out together.
func (c *wsConn) Write(p []byte) (int, error) {
	rest := p
	if len(c.partial) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.partial = append(c.partial, p...)
			return len(p), nil
		}
		line := append(c.partial, p[:i]...)
		c.partial = nil
		if err := c.writeLines(line, true); err != nil {
			return len(p), err
		}
		rest = p[i+1:]
	}
	end := bytes.LastIndexByte(rest, '\n')
	if err := c.writeLines(rest[:end+1], false); err != nil {
		return len(p), err
	}
	if tail := rest[end+1:]; len(tail) > 0 {
		c.partial = append(c.partial, tail...)
	}
	return len(p), nil
}

// writeLines sends each line of b (each ending in a newline; or all of b
// as one line when whole) as a text frame, all in as few writes as
// maxFrameBatch allows. Blank lines send nothing.
func (c *wsConn) writeLines(b []byte, whole bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for len(b) > 0 {
		line := b
		if !whole {
			i := bytes.IndexByte(b, '\n')
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if err := c.frameLocked(opText, line); err != nil {
			return c.writeErr(err)
		}
	}
	if err := c.flushLocked(); err != nil {
		return c.writeErr(err)
	}
	return nil
}

// frameLocked adds one frame to the write buffer, writing what the buffer
// holds whenever it reaches maxFrameBatch. c.wmu is held.
func (c *wsConn) frameLocked(op byte, payload []byte) error {
	var key uint32
	c.wbuf, key = appendFrameHeader(c.wbuf, op, len(payload))
	for len(payload) > 0 {
		n := min(len(payload), maxFrameBatch)
		c.wbuf, key = appendMasked(c.wbuf, payload[:n], key)
		payload = payload[n:]
		if len(c.wbuf) >= maxFrameBatch {
			if err := c.flushLocked(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushLocked writes the gathered frames. c.wmu is held.
func (c *wsConn) flushLocked() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.rwc.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if cap(c.wbuf) > 2*maxFrameBatch {
		c.wbuf = nil
	}
	return err
}

// control sends one control frame at once.
func (c *wsConn) control(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.frameLocked(op, payload); err != nil {
		return err
	}
	return c.flushLocked()
}

// writeErr is what a write that failed with err reports.
func (c *wsConn) writeErr(err error) error {
	c.partial = nil
	if c.endedDrained() {
		return nil // not delivered; the reader reports acp.ErrDrained
	}
	c.mu.Lock()
	remote := c.remote
	c.mu.Unlock()
	if remote != nil {
		return c.closeErr(remote)
	}
	return c.closeErr(err)
}

func (c *wsConn) readLoop() {
	defer close(c.done)
	m := newMessage(c.in, c.max, nil)
	var scratch []byte // for a message over max, passed through in parts
	var b batch
	defer b.release()
	for {
		// What was gathered goes to the client before a read that may
		// wait, and when it is big enough.
		if buffered := c.br.Buffered(); b.due(buffered) {
			if c.in.put(b.take()) != nil {
				return // the client closed
			}
			if buffered == 0 {
				b.release() // an idle connection holds no batch
			}
		}
		h, err := c.nextData()
		if err == nil && h.op == opContinuation {
			err = protocolErr("a continuation frame begins a message")
		}
		if err != nil {
			if len(b.buf) > 0 {
				_ = c.in.put(b.take()) // what came before the end, first
			}
			c.readFailed(err)
			return
		}
		if h.op == opText && h.fin && h.length <= min(int64(c.max), batchSmall) && int64(c.br.Buffered()) >= h.length {
			// A whole small message, already read: gathered straight
			// from the read buffer.
			p, _ := c.br.Peek(int(h.length))
			b.add(p)
			_, _ = c.br.Discard(len(p))
			continue
		}
		if len(b.buf) > 0 && c.in.put(b.take()) != nil {
			return
		}
		c.remain, c.fin = h.length, h.fin
		if h.op == opBinary {
			// The RFD: binary frames are ignored.
			if _, err := io.Copy(io.Discard, (*frameReader)(c)); err != nil {
				c.readFailed(err)
				return
			}
			continue
		}
		if err := m.readFrom((*frameReader)(c), &scratch); !errors.Is(err, io.EOF) {
			m.abandon()
			if !errors.Is(err, io.ErrClosedPipe) {
				c.readFailed(err)
			}
			return
		}
		if err := m.finish(nil); err != nil {
			return // the client closed
		}
	}
}

// A batch gathers whole small messages (each at most batchSmall bytes,
// and MaxMessageBytes) as lines, to pass them to the inbox in one put of
// at most batchBytes and one batchSmall message: a burst of small frames
// then costs the inbox's locks once per batch, not per message, and each
// message one copy. Its buffer comes from batchPool while it holds
// something.
type batch struct{ buf []byte }

const (
	batchSmall = 16 << 10
	batchBytes = 32 << 10
)

var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, batchBytes+batchSmall+1); return &b }}

// add appends message p (flattened; dropped when blank) and its newline.
func (b *batch) add(p []byte) {
	if b.buf == nil {
		b.buf = (*batchPool.Get().(*[]byte))[:0]
	}
	start := len(b.buf)
	b.buf = append(b.buf, p...)
	msg := b.buf[start:]
	flatten(msg)
	if isBlank(msg) {
		b.buf = b.buf[:start]
		return
	}
	b.buf = append(b.buf, '\n')
}

// due reports whether the batch should go now: it is big enough, or
// nothing more is buffered (the next read may wait for the network).
func (b *batch) due(buffered int) bool {
	return len(b.buf) > 0 && (len(b.buf) >= batchBytes || buffered == 0)
}

// take returns what was gathered, valid until the next add; the caller
// hands it to the inbox, which copies it.
func (b *batch) take() []byte {
	p := b.buf
	b.buf = b.buf[:0]
	return p
}

// release gives the buffer back to batchPool.
func (b *batch) release() {
	if b.buf != nil {
		p := b.buf[:0]
		b.buf = nil
		batchPool.Put(&p)
	}
}

// readFailed ends the connection for what the reader met: a protocol
// violation is answered with a close frame (1002) first.
func (c *wsConn) readFailed(err error) {
	if errors.Is(err, errProtocol) {
		_ = c.control(opClose, closePayload(closeProtocol, ""))
	}
	c.rwc.Close()
	c.in.fail(c.closeErr(err))
}

// nextData reads frames up to the next data frame, answering pings, and
// ending at a close frame (a *CloseError, after the reply).
func (c *wsConn) nextData() (frameHeader, error) {
	for {
		h, err := readHeader(c.br)
		if err != nil {
			return h, err
		}
		if h.op < opClose {
			return h, nil
		}
		p := c.ctl[:h.length]
		if _, err := io.ReadFull(c.br, p); err != nil {
			return h, eofErr(err, true)
		}
		switch h.op {
		case opPing:
			// A failed pong shows in the next read.
			_ = c.control(opPong, p)
		case opClose:
			code, reason, err := parseClose(p)
			if err != nil {
				return h, err
			}
			ce := &CloseError{Code: code, Reason: reason}
			c.mu.Lock()
			c.remote = ce
			reply := !c.closing
			c.mu.Unlock()
			if reply {
				// The reply echoes the code (none for none).
				if code == closeNoStatus {
					_ = c.control(opClose, nil)
				} else {
					_ = c.control(opClose, closePayload(code, ""))
				}
			}
			return h, ce
		}
	}
}

// closePayload is a close frame's payload.
func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// frameReader reads the payload of the message whose first frame
// readLoop took, across its continuation frames (and the control frames
// between them); io.EOF at its end.
type frameReader wsConn

func (f *frameReader) Read(p []byte) (int, error) {
	c := (*wsConn)(f)
	for c.remain == 0 {
		if c.fin {
			return 0, io.EOF
		}
		h, err := c.nextData()
		if err == nil && h.op != opContinuation {
			err = protocolErr("a new message before the last one ended")
		}
		if err != nil {
			return 0, err
		}
		c.remain, c.fin = h.length, h.fin
	}
	if int64(len(p)) > c.remain {
		p = p[:c.remain]
	}
	n, err := c.br.Read(p)
	c.remain -= int64(n)
	return n, eofErr(err, true)
}

// endedDrained waits, after a failed write, for the reader to learn how
// the socket ended (briefly: the socket is gone), and reports whether the
// server drained it.
func (c *wsConn) endedDrained() bool {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drained
}

// closeErr says how the socket ended.
func (c *wsConn) closeErr(err error) error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return io.EOF
	}
	if e, ok := errors.AsType[*CloseError](err); ok {
		if e.Code == closeGoingAway && strings.Contains(e.Reason, drainedMark) {
			// The server drained the connection: it answered all it
			// received before this close.
			c.mu.Lock()
			c.drained = true
			c.mu.Unlock()
			return fmt.Errorf("%w: %w", acp.ErrDrained, e)
		}
		return e
	}
	return &CloseError{Code: closeAbnormal, Err: err}
}

// Close performs the close handshake (at most closeWait for the server's
// close frame) and waits for the reader.
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.in.close()
		// A server that reads nothing must not hold Close: the socket is
		// closed under a write (or the wait) that takes too long.
		t := time.AfterFunc(closeWait, func() { c.rwc.Close() })
		if c.control(opClose, closePayload(closeNormal, "")) == nil {
			<-c.done
		}
		t.Stop()
		c.rwc.Close()
		<-c.done
		if c.client != nil {
			c.client.CloseIdleConnections()
		}
	})
	return nil
}

// closeWait bounds the close handshake.
const closeWait = 5 * time.Second
