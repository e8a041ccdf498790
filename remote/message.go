package remote

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// This file holds what the transports keep of a message while it arrives
// (message) and the one budget all the unfinished messages of a Streamable
// HTTP connection share (budget).
//
// What a message costs, at most: its buffer, which grows by doubling but
// never past MaxMessageBytes (see grow: old and new buffer together stay
// under 1.75 × MaxMessageBytes); and the inbox's queue, to which it is
// handed in handChunk parts, so that the inbox never holds a second copy
// of it whole.

// ErrBufferLimit: the unfinished messages of a Streamable HTTP connection,
// across all its SSE streams, would have held more than
// Options.MaxBufferedBytes. The connection ends with it.
var ErrBufferLimit = errors.New("acp/remote: the server's unfinished messages exceed Options.MaxBufferedBytes")

// budgetGrace is how much of each message is held outside the budget: the
// small messages routing depends on (an answer naming a session, an agent
// request) are never what ends a connection because another stream holds
// a big one. A connection has at most MaxSessions+1 streams, so the grace
// is bounded too.
const budgetGrace = 64 << 10

// handChunk is the size of the parts in which a held message is handed to
// the inbox.
const handChunk = 64 << 10

// keepMax is the largest buffer kept for the next message where no budget
// counts it (a WebSocket's, wsConn.dropHeld; a message without one); a
// message with a budget keeps at most budgetGrace, which costs the budget
// nothing.
const keepMax = 1 << 20

// budget is the bytes one connection's unfinished messages may hold
// beyond budgetGrace each. It counts buffer capacity — what is retained —
// not what was received, and both buffers while one grows into the other.
type budget struct {
	mu   sync.Mutex
	used int
	max  int
}

// take reserves n bytes; false when that would pass the bound.
func (b *budget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *budget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// message gathers one message from a stream: whole while it is at most max
// bytes, then passed on as it arrives. One goroutine uses it.
type message struct {
	in        *inbox
	max       int
	budget    *budget // nil: none
	charged   int     // taken from budget for buf
	buf       []byte
	streaming bool // over max: the inbox is held (begin) and parts pass through
	empty     bool // nothing but whitespace so far
}

func newMessage(in *inbox, max int, b *budget) *message {
	return &message{in: in, max: max, budget: b, empty: true}
}

// grow makes room for need bytes (need <= m.max): double, but never past
// max, and reserve the new capacity from the budget before allocating it.
// A step that would end within a quarter of max goes to max at once: else
// doubling from an odd size can stop just short of it, and the next step
// copies a nearly full buffer into a new one of max, 2 × max live. So the
// step that reaches max starts from less than 3/4 of it: the old and the
// new buffer together stay under 1.75 × max.
func (m *message) grow(need int) error {
	newCap := min(max(2*cap(m.buf), need, 512), m.max)
	if newCap > m.max-m.max/4 {
		newCap = m.max
	}
	// The new buffer is reserved whole before the old one is given back:
	// while one is copied into the other both are live, and the budget
	// counts what is live.
	want := 0
	if m.budget != nil {
		want = max(0, newCap-budgetGrace)
		if want > 0 && !m.budget.take(want) {
			return fmt.Errorf("%w (%d bytes): a message of %d bytes so far would take them past it", ErrBufferLimit, m.budget.max, len(m.buf))
		}
	}
	nb := make([]byte, len(m.buf), newCap)
	copy(nb, m.buf)
	m.release()
	m.buf, m.charged = nb, want
	return nil
}

// release drops the buffer and gives back what it was charged.
func (m *message) release() {
	m.buf = nil
	if m.charged > 0 {
		m.budget.give(m.charged)
		m.charged = 0
	}
}

// add appends p (flattened in place) to the message.
func (m *message) add(p []byte) error {
	flatten(p)
	if m.empty {
		m.empty = isBlank(p)
	}
	if m.streaming {
		return m.in.part(p)
	}
	if need := len(m.buf) + len(p); need <= m.max {
		if need > cap(m.buf) {
			if err := m.grow(need); err != nil {
				return err
			}
		}
		m.buf = append(m.buf, p...)
		return nil
	}
	// Too big to hold: the client's line limit decides, as on stdio.
	m.streaming = true
	m.in.begin()
	err := m.handOver()
	m.release()
	if err != nil {
		return err
	}
	return m.in.part(p)
}

// handOver passes what is held to the begun inbox in handChunk parts.
func (m *message) handOver() error {
	for b := m.buf; len(b) > 0; {
		n := min(len(b), handChunk)
		if err := m.in.part(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// errTooLarge: a body read whole (readBody) is over max.
var errTooLarge = errors.New("acp/remote: over MaxMessageBytes")

// readBody reads a response body that must be held whole (initialize's
// answer) into the message, or fails with errTooLarge past max; it passes
// nothing on.
func (m *message) readBody(r io.Reader) error {
	for {
		if len(m.buf) == cap(m.buf) {
			if len(m.buf) == m.max {
				// Full: one byte more is too much.
				var one [1]byte
				n, err := io.ReadFull(r, one[:])
				if n > 0 {
					return errTooLarge
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if err := m.grow(len(m.buf) + 1); err != nil {
				return err
			}
		}
		start := len(m.buf)
		n, err := r.Read(m.buf[start:cap(m.buf)])
		m.buf = m.buf[:start+n]
		flatten(m.buf[start:])
		if m.empty {
			m.empty = isBlank(m.buf[start:])
		}
		if errors.Is(err, io.EOF) {
			return nil
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
// passed on and cannot be inspected. A big message is handed over in
// parts, so that the inbox does not copy it whole beside the buffer.
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
	if len(m.buf) <= handChunk {
		m.buf = append(m.buf, '\n')
		return m.in.put(m.buf)
	}
	m.in.begin()
	err := m.handOver()
	if eerr := m.in.end(); err == nil {
		err = eerr
	}
	return err
}

// abandon ends a message the stream broke off in the middle of (or that
// failed: every error of add or finish is followed by abandon): one being
// passed through is ended, which lets the other streams' messages through
// again (the client sees a truncated line, which it reports as junk); one
// held whole is dropped.
func (m *message) abandon() {
	if m.streaming {
		_ = m.in.end()
	}
	m.reset()
}

// reset readies the message for the next one on its stream. It keeps a
// small buffer; a big one is let go (one huge message must not pin its
// buffer for the stream's life), with its charge.
func (m *message) reset() {
	m.streaming, m.empty = false, true
	keep := keepMax
	if m.budget != nil {
		keep = budgetGrace
	}
	if cap(m.buf) > keep {
		m.release()
	} else {
		m.buf = m.buf[:0]
	}
}
