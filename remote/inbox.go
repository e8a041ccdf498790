package remote

import (
	"io"
	"slices"
	"sync"
)

// inbox carries the server's messages to the client as the lines it reads
// from the Conn: one message a line, whole messages never interleaved.
//
// It queues at most inboxQueue bytes (plus the one message being added):
// a stream that gets ahead of the client waits, so the transport stops
// reading the network and TCP (or HTTP/2 flow control) stops the server.
// The queue lets the stream readers run ahead of the client's reader by
// many small messages instead of handing each over in lockstep (an
// io.Pipe here made a 100 000-chunk turn over WebSocket 10× slower).
type inbox struct {
	msg sync.Mutex // held for one whole message: messages of several streams never interleave

	mu     sync.Mutex
	cond   *sync.Cond // queue changed: readers and writers both wait on it
	buf    []byte     // queued bytes; buf[r:] is unread
	r      int
	err    error // set by fail: Read returns it once the queue is empty
	closed bool  // the client closed: writes and reads fail

	// deferred: wake the reader only when inboxSignal bytes wait, or at
	// flush, which the producer calls before it blocks on the network
	// (see bufConn). Waking the client's reader for each small message
	// costs a futex handoff per message on a busy machine.
	deferred bool
	pending  bool // bytes were queued without waking the reader
}

// inboxSignal is how much a deferred inbox queues before it wakes the
// reader anyway.
const inboxSignal = 32 << 10

// inboxQueue is how many unread bytes an inbox holds before the streams
// wait for the client.
const inboxQueue = 1 << 20

// inboxKeep is the most an empty inbox keeps of its buffer: an idle
// connection holds little, whatever burst it had.
const inboxKeep = 64 << 10

func newInbox() *inbox {
	b := &inbox{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// put passes one message on; line is the message followed by '\n', with no
// other newline in it (see flatten).
func (b *inbox) put(line []byte) error {
	b.msg.Lock()
	defer b.msg.Unlock()
	return b.write(line)
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
	for len(b.buf)-b.r >= inboxQueue && !b.closed && b.err == nil {
		if b.pending {
			b.pending = false
			b.cond.Broadcast()
		}
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
	b.buf = append(b.buf, p...)
	if b.deferred && len(b.buf)-b.r < inboxSignal {
		b.pending = true
		return nil
	}
	b.pending = false
	b.cond.Broadcast()
	return nil
}

// flush wakes the reader for what a deferred inbox queued.
func (b *inbox) flush() {
	b.mu.Lock()
	wake := b.pending
	b.pending = false
	b.mu.Unlock()
	if wake {
		b.cond.Broadcast()
	}
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
		return 0, io.ErrClosedPipe
	}
	if b.r == len(b.buf) {
		return 0, b.err
	}
	n := copy(p, b.buf[b.r:])
	b.r += n
	if b.r == len(b.buf) {
		if cap(b.buf) > inboxKeep {
			b.buf = nil // the burst is read: let its buffer go
		} else {
			b.buf = b.buf[:0]
		}
		b.r = 0
	}
	b.cond.Broadcast()
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
func flatten(p []byte) {
	for i, c := range p {
		if c == '\n' || c == '\r' {
			p[i] = ' '
		}
	}
}

// message gathers one message from a stream: whole while it is at most max
// bytes, then passed on as it arrives. One goroutine uses it.
type message struct {
	in        *inbox
	max       int
	buf       []byte
	streaming bool // over max: the inbox is held (begin) and parts pass through
	empty     bool // nothing but whitespace so far
}

func newMessage(in *inbox, max int) *message { return &message{in: in, max: max, empty: true} }

// add appends p (flattened in place) to the message.
func (m *message) add(p []byte) error {
	flatten(p)
	if m.empty {
		m.empty = isBlank(p)
	}
	if m.streaming {
		return m.in.part(p)
	}
	if len(m.buf)+len(p) <= m.max {
		m.buf = append(m.buf, p...)
		return nil
	}
	// Too big to hold: the client's line limit decides, as on stdio.
	m.streaming = true
	m.in.begin()
	if err := m.in.part(m.buf); err != nil {
		return err
	}
	m.buf = nil
	return m.in.part(p)
}

// readFrom adds everything r yields (a WebSocket message) to the message,
// reading straight into its buffer while it is held whole.
func (m *message) readFrom(r io.Reader, scratch []byte) error {
	for {
		if m.streaming || len(m.buf) >= m.max {
			n, err := r.Read(scratch)
			if n > 0 {
				if aerr := m.add(scratch[:n]); aerr != nil {
					return aerr
				}
			}
			if err != nil {
				return err
			}
			continue
		}
		if len(m.buf) == cap(m.buf) {
			m.buf = slices.Grow(m.buf, min(max(cap(m.buf), 512), m.max-len(m.buf)))
		}
		start := len(m.buf)
		n, err := r.Read(m.buf[start:min(cap(m.buf), m.max)])
		m.buf = m.buf[:start+n]
		chunk := m.buf[start:]
		flatten(chunk)
		if m.empty {
			m.empty = isBlank(chunk)
		}
		if err != nil {
			return err
		}
	}
}

func isBlank(p []byte) bool {
	for _, c := range p {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// finish passes the message on, with inspect (if set) called first on a
// message held whole; an empty one is dropped. Bytes over max were already
// passed on and cannot be inspected.
func (m *message) finish(inspect func(msg []byte)) error {
	defer m.reset()
	if m.streaming {
		return m.in.end()
	}
	if m.empty {
		return nil
	}
	if inspect != nil {
		inspect(m.buf)
	}
	m.buf = append(m.buf, '\n')
	return m.in.put(m.buf)
}

// abandon ends a message the stream broke off in the middle of: one being
// passed through is ended (the client sees a truncated line, which it
// reports as junk); one held whole is dropped.
func (m *message) abandon() {
	if m.streaming {
		_ = m.in.end()
	}
	m.reset()
}

func (m *message) reset() {
	m.streaming, m.empty = false, true
	if cap(m.buf) > 1<<20 {
		m.buf = nil // a big message is over: let its buffer go
	} else {
		m.buf = m.buf[:0]
	}
}
