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
// pings. The client's own reader reads the frames: an idle connection
// holds no goroutine of the transport's, and one reads ahead only while a
// burst lasts. A handshake answered with another status than 101 fails
// Connect with a *StatusError (426: the server has no WebSocket; use
// HTTPTransport).
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
	c := &wsConn{rwc: rwc, max: t.maxMessage(), done: make(chan struct{}), idle: make(chan struct{}, 1),
		ahead: make(chan aheadBlock, aheadBlocks), closed: make(chan struct{})}
	if t.HTTPClient == nil {
		c.client = client
	}
	c.br = bufio.NewReaderSize(rwc, wsReadBuf)
	c.connID = resp.Header.Get(HeaderConnectionID)
	return c, nil
}

// wsReadBuf is the read buffer of a WebSocket connection: a burst of small
// messages costs a read per 32 KiB, not per message.
const wsReadBuf = 32 << 10

// wsConn is a WebSocket connection. The client's reader reads the frames
// itself, in Read, each message a line passed on once whole: no goroutine
// of the transport's stands between the socket and the client but while a
// burst is read ahead (see Read).
type wsConn struct {
	rwc    io.ReadWriteCloser // the upgraded connection
	client *http.Client       // ours, to close its idle connections; nil when the caller's
	connID string             // from the 101 response (the RFD's; informative)

	// Reading, under rmu (Read, or Close when no Read runs). A message is
	// passed on only once it is whole (in the read buffer, or gathered in
	// held), unless it is over max: then it is passed on as it arrives.
	rmu       sync.Mutex
	br        *bufio.Reader         // rwc's
	max       int                   // Options.MaxMessageBytes
	direct    int64                 // what is left to pass on of a whole message in br
	out       []byte                // what is left to pass on of a message gathered in held
	nl        bool                  // a newline, ending the message passed on, is owed
	inMsg     bool                  // a message's frames are being read: gathered, streamed or read past
	binary    bool                  // ... a binary one, read past (the RFD)
	streaming bool                  // ... one over max, passed on as it arrives
	began     bool                  // ... streamed, and something other than leading whitespace passed on
	held      []byte                // the message being gathered
	remain    int64                 // what is left of the current frame's payload
	fin       bool                  // the current frame ends its message
	rerr      error                 // how reading ended; Read returns it from then on
	ctl       [maxControlBytes]byte // a control frame's payload (a field: on the stack it escaped, an allocation per frame)

	done chan struct{} // reading has ended (rerr is set)
	idle chan struct{} // cap 1: a read let go of rmu (Close may read in its place)

	// Reading ahead in a burst (see Read). pumping, abandoned, cur and
	// curBlock are Read's.
	pumping   bool
	abandoned bool    // Close stopped a read ahead: Read returns io.EOF
	cur       []byte  // what is left of the block Read took from the pump
	curBlock  *[]byte // that block, for aheadPool
	ahead     chan aheadBlock
	closed    chan struct{} // Close began: the pump stops
	pumps     sync.WaitGroup

	partial []byte // the writer's unfinished line

	wmu  sync.Mutex // frames are written whole: the client's, pongs, close
	wbuf []byte     // frames gathered for one write (at most maxFrameBatch and a header)

	mu        sync.Mutex
	closing   bool        // Close began: the close frame is (being) sent
	remote    *CloseError // the server's close frame, once read
	drained   bool        // the server closed it drained (closeErr)
	closeOnce sync.Once
}

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

// closePayload is a close frame's payload.
func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
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
		close(c.closed)
		// A server that reads nothing must not hold Close: the socket is
		// closed under a write (or the wait) that takes too long.
		t := time.AfterFunc(closeWait, func() { c.rwc.Close() })
		if c.control(opClose, closePayload(closeNormal, "")) == nil {
			c.awaitCloseFrame()
		}
		t.Stop()
		c.rwc.Close()
		c.pumps.Wait()
		if c.client != nil {
			c.client.CloseIdleConnections()
		}
	})
	return nil
}

// awaitCloseFrame waits for reading to end, which the server's close
// frame answering ours ends (or the socket's closing, at closeWait). The
// client's Read, if one runs, reads up to it; when none does (the client
// stopped reading), Close reads in its place, dropping what comes before.
func (c *wsConn) awaitCloseFrame() {
	for {
		if c.rmu.TryLock() {
			for c.rerr == nil {
				var discard [512]byte
				_, _ = c.readLocked(discard[:])
			}
			c.rmu.Unlock()
			return
		}
		select {
		case <-c.done:
			return
		case <-c.idle:
			// A read let go: it may have been the last.
		}
	}
}

// closeWait bounds the close handshake.
const closeWait = 5 * time.Second
