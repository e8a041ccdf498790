package remote

import (
	"io"
	"sync"
)

// inbox carries the server's messages to the client as the lines it reads
// from the Conn: one message a line, whole messages never interleaved. Its
// pipe hands bytes straight to the client's reader goroutine (a put waits
// until they are read), so the transport holds no queue: a client that is
// behind stops the transport reading the network, and TCP (or HTTP/2 flow
// control) stops the server.
type inbox struct {
	mu sync.Mutex // held for one whole message: messages of several streams never interleave
	pr *io.PipeReader
	pw *io.PipeWriter
}

func newInbox() *inbox {
	pr, pw := io.Pipe()
	return &inbox{pr: pr, pw: pw}
}

// put passes one message on; line is the message followed by '\n', with no
// other newline in it (see flatten).
func (b *inbox) put(line []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.pw.Write(line)
	return err
}

// begin starts a message passed on in parts (one over the transport's
// buffer bound); no other message is passed on until end.
func (b *inbox) begin() { b.mu.Lock() }

// part passes on part of the message begun.
func (b *inbox) part(p []byte) error {
	_, err := b.pw.Write(p)
	return err
}

// end finishes the message begun with its newline.
func (b *inbox) end() error {
	defer b.mu.Unlock()
	_, err := b.pw.Write(newline)
	return err
}

var newline = []byte{'\n'}

// fail ends the client's input with err: its reader gets err once it has
// read what was passed on before, and the connection ends with an error
// wrapping acp.ErrConnClosed and err. The first call wins.
func (b *inbox) fail(err error) { _ = b.pw.CloseWithError(err) }

// Read is the client's side.
func (b *inbox) Read(p []byte) (int, error) { return b.pr.Read(p) }

// close makes a blocked Read and every later put return.
func (b *inbox) close() { _ = b.pr.Close() }

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
		for _, c := range p {
			if c != ' ' && c != '\t' {
				m.empty = false
				break
			}
		}
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
