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
	"sync/atomic"
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

// Read passes on the server's messages as lines: each text message's
// payload, its line breaks made spaces, then a newline; a message of
// nothing but whitespace is dropped, and binary messages are read past.
// Control frames are handled as they come: pings answered, a close frame
// answered and reported.
//
// Read reads the frames itself, on the caller's goroutine: it fills p with
// what the read buffer holds and waits for the network only when it has
// nothing to return. A message that arrives alone then costs one wake-up
// of the client's reader; a read loop of the transport's, handing messages
// over, cost two, which made the client's CPU per message several times
// its work when a server sends them one at a time (the TypeScript SDK's).
// In a burst — a Read that returns readAheadFrom bytes or more — a
// goroutine reads ahead (pump) until the burst ends, so that the frames
// are read beside the client's handling of the lines, on another core.
func (c *wsConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.abandoned {
		return 0, io.EOF
	}
	n := 0
	for c.pumping || len(c.cur) > 0 {
		if len(c.cur) > 0 {
			k := copy(p[n:], c.cur)
			n += k
			if c.cur = c.cur[k:]; len(c.cur) == 0 {
				putAhead(c.curBlock)
				c.curBlock = nil
			}
			if n == len(p) {
				return n, nil
			}
			continue
		}
		if n > 0 {
			// More only if it is there: the read ahead may be waiting
			// for the network.
			select {
			case blk := <-c.ahead:
				c.took(blk)
				continue
			default:
				return n, nil
			}
		}
		select {
		case blk := <-c.ahead:
			c.took(blk)
		case <-c.closed:
			// Close stopped the pump: what it read ahead is dropped, and
			// with it the rest of the input (Close reads to the server's
			// close frame), as a client that closes gets nothing more.
			c.pumping, c.abandoned = false, true
			putAhead(c.curBlock)
			c.cur, c.curBlock = nil, nil
			return 0, io.EOF
		}
	}
	if n > 0 {
		return n, nil
	}
	c.rmu.Lock()
	n, err := c.readLocked(p)
	if err == nil && n >= readAheadFrom && c.rerr == nil {
		// A burst. Not once Close began: it waits for the pumps started
		// before, and none may start after.
		c.mu.Lock()
		if !c.closing {
			c.pumping = true
			c.pumps.Add(1)
			pumpStarts.Add(1)
			go c.pump()
		}
		c.mu.Unlock()
	}
	c.rmu.Unlock()
	c.readReturned()
	return n, err
}

// took makes blk the block Read passes on.
func (c *wsConn) took(blk aheadBlock) {
	c.pumping = !blk.last
	c.cur, c.curBlock = blk.b, blk.block
	if len(c.cur) == 0 {
		putAhead(c.curBlock)
		c.curBlock = nil
	}
}

// pumpStarts counts the reads ahead started in the process (for tests).
var pumpStarts atomic.Int64

// readAheadFrom is the least a Read returns for a burst to be read ahead:
// half the read buffer (a message that arrives alone returns itself).
const readAheadFrom = wsReadBuf / 2

// aheadBlocks is how many blocks the pump may read ahead of Read.
const aheadBlocks = 4

// aheadBytes is the size of the blocks read ahead, pooled (aheadPool) so
// that an idle connection holds none.
const aheadBytes = 32 << 10

var aheadPool = sync.Pool{New: func() any { b := make([]byte, aheadBytes); return &b }}

func putAhead(b *[]byte) {
	if b != nil {
		aheadPool.Put(b)
	}
}

// aheadBlock is what the pump read: b, a slice of *block; last ends the
// burst (the next read would have waited, or reading ended).
type aheadBlock struct {
	block *[]byte
	b     []byte
	last  bool
}

// pump reads ahead while a burst lasts: readLocked into a block, handed to
// Read through c.ahead (at most aheadBlocks queued, and one being read
// and one being passed on), until a read returns less than readAheadFrom (a
// read returns at most what the read buffer holds, and waits for the
// network only when it holds nothing): Read is then back to reading by
// itself. Close stops it.
func (c *wsConn) pump() {
	defer c.pumps.Done()
	for {
		block := aheadPool.Get().(*[]byte)
		c.rmu.Lock()
		n, err := c.readLocked(*block)
		c.rmu.Unlock()
		c.readReturned()
		last := err != nil || n < readAheadFrom
		select {
		case c.ahead <- aheadBlock{block, (*block)[:n], last}:
		case <-c.closed:
			putAhead(block)
			return
		}
		if last {
			return
		}
	}
}

// readReturned tells a waiting Close that reading let go of the frames.
func (c *wsConn) readReturned() {
	select {
	case c.idle <- struct{}{}:
	default:
	}
}

func (c *wsConn) readLocked(p []byte) (int, error) {
	if c.rerr != nil {
		return 0, c.rerr
	}
	n := 0
	for n < len(p) {
		switch {
		case c.direct > 0:
			// A whole message in the read buffer (flattened there): no
			// wait.
			q := p[n:min(int64(len(p)), int64(n)+c.direct)]
			k, _ := c.br.Read(q)
			n += k
			if c.direct -= int64(k); c.direct == 0 {
				c.nl = true
			}
		case len(c.out) > 0:
			k := copy(p[n:], c.out)
			n += k
			if c.out = c.out[k:]; len(c.out) == 0 {
				c.dropHeld()
				c.nl = !c.inMsg // a message over max goes on streaming
			}
		case c.nl:
			p[n] = '\n'
			n++
			c.nl = false
		case c.inMsg:
			if c.remain == 0 {
				if c.fin {
					c.endMessage()
					continue
				}
				if n > 0 && !frameReady(c.br, false) {
					return n, nil
				}
				h, err := c.nextData(n == 0, false)
				if err == errWouldWait {
					return n, nil
				}
				if err == nil && h.op != opContinuation {
					err = protocolErr("a new message before the last one ended")
				}
				if err != nil {
					return c.readFailed(n, err)
				}
				c.remain, c.fin = h.length, h.fin
				continue
			}
			if n > 0 && c.br.Buffered() == 0 {
				return n, nil
			}
			k, err := c.payload(p[n:])
			n += k
			if err != nil {
				return c.readFailed(n, eofErr(err, true))
			}
		default:
			// The next message. With something to return, only one
			// whole in the buffer is taken.
			if n > 0 && !frameReady(c.br, true) {
				return n, nil
			}
			h, err := c.nextData(n == 0, true)
			if err == errWouldWait {
				return n, nil
			}
			if err == nil && h.op == opContinuation {
				err = protocolErr("a continuation frame begins a message")
			}
			if err != nil {
				return c.readFailed(n, err)
			}
			if h.op == opText && h.fin && h.length <= int64(min(c.max, c.br.Size())) {
				// Whole in the read buffer once it has arrived (a wait
				// only when nothing is ready to return).
				b, err := c.br.Peek(int(h.length))
				if err != nil {
					return c.readFailed(n, eofErr(err, true))
				}
				flatten(b)
				lead := leadingBlank(b)
				_, _ = c.br.Discard(lead)
				c.direct = h.length - int64(lead) // nothing: a blank message, dropped
				continue
			}
			c.inMsg, c.binary, c.streaming, c.began = true, h.op == opBinary, false, false
			c.remain, c.fin = h.length, h.fin
		}
	}
	return n, nil
}

// payload reads the current frame's payload (c.remain > 0): past it for a
// binary message, into p for one streamed, into held for one gathered
// (which turns streamed once it would pass max). It returns what it put in
// p.
func (c *wsConn) payload(p []byte) (int, error) {
	want := c.remain
	if k := c.br.Buffered(); k > 0 {
		want = min(want, int64(k))
	} else {
		want = min(want, wsReadBuf) // nothing ready to return: wait
	}
	switch {
	case c.binary:
		k, err := c.br.Discard(int(want))
		c.remain -= int64(k)
		return 0, err
	case c.streaming:
		q := p[:min(int64(len(p)), want)]
		k, err := c.br.Read(q)
		c.remain -= int64(k)
		q = q[:k]
		flatten(q)
		if !c.began {
			lead := leadingBlank(q)
			k = copy(q, q[lead:])
			c.began = k > 0
		}
		return k, err
	case int64(len(c.held))+want > int64(c.max):
		// Over max: what was gathered goes first, the rest as it comes.
		c.streaming = true
		flatten(c.held)
		lead := leadingBlank(c.held)
		c.out = c.held[lead:]
		c.began = len(c.out) > 0
		if !c.began {
			c.dropHeld()
		}
		return 0, nil
	default:
		c.growHeld(len(c.held) + int(want))
		start := len(c.held)
		k, err := c.br.Read(c.held[start : start+int(want)])
		c.held = c.held[:start+k]
		c.remain -= int64(k)
		return 0, err
	}
}

// endMessage ends the message whose last frame was read: a gathered one
// is passed on (unless blank), a streamed one gets its newline.
func (c *wsConn) endMessage() {
	c.inMsg = false
	switch {
	case c.binary:
	case c.streaming:
		c.nl = c.began
	default:
		flatten(c.held)
		if lead := leadingBlank(c.held); lead < len(c.held) {
			c.out = c.held[lead:]
		} else {
			c.dropHeld()
		}
	}
}

// growHeld makes room in held for need bytes (need <= max), as
// message.grow does: doubling, never past max, and the step that reaches
// max taken from under 3/4 of it, so that the old and the new buffer
// together stay under 1.75 × max.
func (c *wsConn) growHeld(need int) {
	if need <= cap(c.held) {
		return
	}
	newCap := min(max(2*cap(c.held), need, 512), c.max)
	if newCap > c.max-c.max/4 {
		newCap = c.max
	}
	nb := make([]byte, len(c.held), newCap)
	copy(nb, c.held)
	c.held = nb
}

// dropHeld readies held for the next message: a small buffer is kept, a
// big one let go (one huge message must not pin its buffer).
func (c *wsConn) dropHeld() {
	if cap(c.held) > keepMax {
		c.held = nil
	}
	c.held = c.held[:0]
}

// leadingBlank counts the spaces and tabs p begins with (line breaks were
// made spaces).
func leadingBlank(p []byte) int {
	i := 0
	for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
		i++
	}
	return i
}

// frameReady reports whether the next frame is in the read buffer far
// enough that reading it does not wait for the network: its header, and a
// control frame's payload; with whole, also the payload of a single-frame
// text message, which Read takes whole (any other is begun only when Read
// has nothing else to return). A frame too long for its kind is refused
// when it is read.
func frameReady(br *bufio.Reader, whole bool) bool {
	k := int64(br.Buffered())
	if k < 2 {
		return false
	}
	b, _ := br.Peek(2)
	op, l := b[0]&0x0f, int64(b[1]&0x7f)
	hdr := int64(2)
	if op >= opClose {
		return k >= hdr+l
	}
	switch l {
	case 126:
		hdr = 4
	case 127:
		hdr = 10
	}
	if k < hdr {
		return false
	}
	if !whole {
		return true
	}
	b, _ = br.Peek(int(hdr))
	switch hdr {
	case 4:
		l = int64(binary.BigEndian.Uint16(b[2:]))
	case 10:
		l = int64(binary.BigEndian.Uint64(b[2:]) & (1<<63 - 1))
	}
	return b[0]&0x80 != 0 && op == opText && k-hdr >= l // (hdr+l may overflow)
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

// readFailed ends reading for what the reader met, n bytes into the
// Read: a protocol violation is answered with a close frame (1002) first.
// What came before the end is returned first; the end, at the next Read.
func (c *wsConn) readFailed(n int, err error) (int, error) {
	if errors.Is(err, errProtocol) {
		_ = c.control(opClose, closePayload(closeProtocol, ""))
	}
	c.rwc.Close()
	c.rerr = c.closeErr(err)
	if c.inMsg && c.streaming && c.began && c.rerr == io.EOF {
		// A message cut off by the end: not a line to pass on whole.
		c.rerr = io.ErrUnexpectedEOF
	}
	close(c.done)
	if n > 0 {
		return n, nil
	}
	return 0, c.rerr
}

// errWouldWait: nextData, told not to wait, handled the control frames
// that were buffered and would wait for the next frame.
var errWouldWait = errors.New("acp/remote: the next frame has not arrived")

// nextData reads frames up to the next data frame, answering pings, and
// ending at a close frame (a *CloseError, after the reply). With wait
// false (Read has something to return) the caller has made sure the
// first frame is buffered (frameReady, with whole), and after a control
// frame nextData reads the next only if it is buffered too, else returns
// errWouldWait: what Read holds must not wait behind a ping for a frame
// that has not come.
func (c *wsConn) nextData(wait, whole bool) (frameHeader, error) {
	for first := true; ; first = false {
		if !first && !wait && !frameReady(c.br, whole) {
			return frameHeader{}, errWouldWait
		}
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
