package remote

import (
	"bytes"
	"io"
	"sync"
)

// inbox carries a Streamable HTTP connection's messages, from its SSE
// streams and its POSTs' answers, to the client as the lines it reads from
// the Conn: one message a line, whole messages never interleaved. (A
// WebSocket has one stream, which the client's reader reads itself: see
// wsConn.Read.)
//
// It queues at most inboxQueue bytes plus the one write being added — at
// most 64 KiB: a stream's parts, and the parts a held message is handed
// over in (message.handOver), are no larger. A stream that gets ahead of the client waits, so the transport stops
// reading the network and TCP (or HTTP/2 flow control) stops the server.
// The queue lets the stream readers run ahead of the client's reader by
// many small messages instead of handing each over in lockstep (an
// io.Pipe here made a 100 000-chunk turn 10× slower).
type inbox struct {
	msg sync.Mutex // held for one whole message: messages of several streams never interleave

	mu     sync.Mutex
	cond   *sync.Cond // queue changed: readers and writers both wait on it
	buf    []byte     // queued bytes; buf[r:] is unread
	r      int
	err    error // set by fail: Read returns it once the queue is empty
	closed bool  // the client closed: writes and reads fail

	full bool // the writer waits for the queue to drain to half (room)
}

// inboxQueue is how many unread bytes an inbox holds before the streams
// wait for the client.
const inboxQueue = 1 << 20

// inboxKeep is the most an empty inbox keeps of its buffer: an idle
// connection holds little, whatever burst it had.
const inboxKeep = 64 << 10

// inboxBurst is the size of the buffers the inboxes of a process share
// (burstPool) for their bursts: a full queue and the largest write (a
// handChunk part, or a message of that size and its newline), so that a
// burst never grows one. An inbox holds one only while more than
// burstFrom bytes are unread, and gives it back when it is read empty.
const (
	inboxBurst = inboxQueue + handChunk + 1
	burstFrom  = 8 << 10
)

var burstPool = sync.Pool{New: func() any { b := make([]byte, 0, inboxBurst); return &b }}

func newInbox() *inbox {
	b := &inbox{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// put passes whole messages on: lines, each a message followed by '\n',
// with no other newline in it (see flatten); at most handChunk+1 bytes.
func (b *inbox) put(lines []byte) error {
	b.msg.Lock()
	defer b.msg.Unlock()
	return b.write(lines)
}

// begin starts a message passed on in parts (one over the transport's
// buffer bound); no other message is passed on until end.
func (b *inbox) begin() { b.msg.Lock() }

// part passes on part of the message begun.
func (b *inbox) part(p []byte) error { return b.write(p) }

// end finishes the message begun with its newline.
func (b *inbox) end() error {
	defer b.msg.Unlock()
	return b.write(newline)
}

var newline = []byte{'\n'}

func (b *inbox) write(p []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.err == nil && !b.room(len(p)) {
		b.cond.Wait()
	}
	switch {
	case b.closed:
		return io.ErrClosedPipe
	case b.err != nil:
		return b.err
	}
	if b.r > 0 && len(b.buf)+len(p) > cap(b.buf) && b.r >= len(b.buf)/2 {
		// Reuse the read part rather than grow, when it is at least half:
		// what is unread (less than that) moves to the front.
		n := copy(b.buf, b.buf[b.r:])
		b.buf, b.r = b.buf[:n], 0
	}
	if need := len(b.buf) - b.r + len(p); need > cap(b.buf) && need > burstFrom && need <= inboxBurst && cap(b.buf) < inboxBurst {
		// A burst: rather than grow by doubling from nothing (each burst
		// anew, since an emptied inbox lets a big buffer go), take a
		// burst buffer that a drained inbox gave back. A few small
		// messages unread take none.
		nb := burstPool.Get().(*[]byte)
		b.buf = append((*nb)[:0], b.buf[b.r:]...)
		b.r = 0
	}
	b.buf = append(b.buf, p...)
	b.cond.Broadcast()
	return nil
}

// room reports whether n bytes may be queued now. A full queue (inboxQueue
// unread, or a burst buffer that only a copy of most of it would make
// room in) waits until the client has read it down to half: the stream
// then adds many messages per wake instead of one per Read. b.mu is held.
func (b *inbox) room(n int) bool {
	unread := len(b.buf) - b.r
	if b.full {
		if unread > inboxQueue/2 {
			return false
		}
		b.full = false
	}
	if unread >= inboxQueue || (cap(b.buf) == inboxBurst && len(b.buf)+n > inboxBurst && b.r < len(b.buf)/2) {
		b.full = true
		return false
	}
	return true
}

// fail ends the client's input with err: its reader gets err once it has
// read what was passed on before, and the connection ends with an error
// wrapping acp.ErrConnClosed and err. The first call wins.
func (b *inbox) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Read is the client's side.
func (b *inbox) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.r == len(b.buf) && b.err == nil && !b.closed {
		b.cond.Wait()
	}
	if b.closed {
		// Why the server ended the connection, if it did, wins over the
		// client's own close (which may follow from that end).
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.ErrClosedPipe
	}
	if b.r == len(b.buf) {
		return 0, b.err
	}
	n := copy(p, b.buf[b.r:])
	b.r += n
	wake := b.full && len(b.buf)-b.r <= inboxQueue/2
	if b.r == len(b.buf) {
		switch c := cap(b.buf); {
		case c == inboxBurst:
			full := b.buf[:0]
			b.buf = nil
			burstPool.Put(&full)
		case c > inboxKeep:
			b.buf = nil // the burst is read: let its buffer go
		default:
			b.buf = b.buf[:0]
		}
		b.r = 0
	}
	if wake {
		b.cond.Broadcast()
	}
	return n, nil
}

// close makes a blocked Read and every later write return.
func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.buf, b.r = nil, 0
	b.mu.Unlock()
	b.cond.Broadcast()
}

// flatten replaces the line breaks in a JSON text with spaces. Outside
// strings they are whitespace, and inside strings JSON allows neither, so
// the message means the same and fits on one line. A server may send
// pretty-printed JSON in a WebSocket frame, or split an SSE event's data
// over several data: lines (joined by line breaks).
//
// It searches with bytes.IndexByte rather than testing each byte: a message
// rarely holds a line break, and a 300 MiB one passes through here.
func flatten(p []byte) {
	replaceByte(p, '\n', ' ')
	replaceByte(p, '\r', ' ')
}

// replaceByte replaces every old in p with new.
func replaceByte(p []byte, old, new byte) {
	for {
		i := bytes.IndexByte(p, old)
		if i < 0 {
			return
		}
		p[i] = new
		p = p[i+1:]
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

// add appends message p and its newline. p is flat and not blank: readSSE
// made it so before it could inspect it, and doing it twice cost a tenth of
// the stream reader's time on a burst of small events.
func (b *batch) add(p []byte) {
	if b.buf == nil {
		b.buf = (*batchPool.Get().(*[]byte))[:0]
	}
	b.buf = append(append(b.buf, p...), '\n')
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
