// ws_read.go holds the WebSocket client's reading: Read, which parses
// the frames on the client's own reader goroutine, and the read ahead it
// starts in a burst (pump).
package remote

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

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
				h, ready, err := c.nextHeader(n, true)
				if !ready {
					return n, nil
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
			if k, took := c.wholeFrames(p[n:]); took {
				n += k
				continue
			}
			// The next message. With something to return, only one
			// whole in the buffer is taken.
			h, ready, err := c.nextHeader(n, false)
			if !ready {
				return n, nil
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

// nextHeader reads, for readLocked with n bytes to return, the header of
// the next data frame: one continuing the message being read (cont), or
// beginning the next. ready is false when Read should return what it has
// rather than wait: with n > 0, the frame (and, for a new message, all of
// it) is not buffered, or only control frames were.
func (c *wsConn) nextHeader(n int, cont bool) (h frameHeader, ready bool, err error) {
	if n > 0 && !frameReady(c.br, !cont) {
		return h, false, nil
	}
	h, err = c.nextData(n == 0, !cont)
	switch {
	case err == errWouldWait:
		return h, false, nil
	case err != nil:
	case cont && h.op != opContinuation:
		err = protocolErr("a new message before the last one ended")
	case !cont && h.op == opContinuation:
		err = protocolErr("a continuation frame begins a message")
	}
	return h, true, err
}

// wholeFrames passes on the single-frame text messages that are whole in
// the read buffer and fit in p, as the frame reader below would have
// passed them on, at once: the common case of a burst, where a frame
// taken apart by the read buffer's methods (a frame's Peeks, Discard and
// Read, and frameReady's Peeks) cost twice what the copy does. It stops
// at the first frame that is of any other kind, not all there, or
// without room in p, and reports whether it took a frame (a blank
// message is taken and dropped). A message over max is taken too: it is
// in the buffer already, and the frame reader would stream the same
// bytes, leaving the client's line limit to decide.
func (c *wsConn) wholeFrames(p []byte) (n int, took bool) {
	buf, _ := c.br.Peek(c.br.Buffered())
	i := 0
	for len(buf)-i >= 2 {
		// FIN, no reserved bit, text; unmasked, with a 7- or 16-bit
		// length. Anything else is for the frame reader, which also
		// refuses what a server must not send.
		b0, b1 := buf[i], buf[i+1]
		if b0 != 0x80|opText || b1 > 126 {
			break
		}
		h, l := 2, int(b1)
		if l == 126 {
			if len(buf)-i < 4 {
				break
			}
			h, l = 4, int(binary.BigEndian.Uint16(buf[i+2:]))
		}
		if len(buf)-i-h < l || n+l+1 > len(p) {
			break
		}
		m := buf[i+h : i+h+l]
		i += h + l
		// Flattened where it is, as the frame reader does: the read
		// buffer was just filled on this core, where p's block may not
		// be in its cache (the client's reader read it last), and a scan
		// of p after the copy waited for those lines.
		flatten(m)
		lead := leadingBlank(m)
		if lead == l {
			continue // blank: dropped
		}
		p[n+copy(p[n:], m[lead:])] = '\n'
		n += l - lead + 1
	}
	if i == 0 {
		return 0, false
	}
	_, _ = c.br.Discard(i)
	return n, true
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
