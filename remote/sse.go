package remote

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseReadBuf is the read buffer of an SSE stream; a line longer than it is
// handled in parts, so it bounds nothing but the read size.
const sseReadBuf = 64 << 10

var dataField = []byte("data:")

// readSSE reads an SSE body (text/event-stream) and passes the data of each
// event on as one message, calling inspect first on each it held whole. It
// returns nil at the end of the body, or the read error.
//
// Only data: lines count: comments (the TypeScript server's ":" keep-alive
// every 15 s), event:, id: and retry: are read past, each in bounded
// parts however long. Several data: lines of one event are joined (by a
// space, where the SSE spec says a line break: see flatten). Lines end in
// LF or CRLF; a bare CR, which the SSE spec also counts as a line end, is
// kept inside the line (as a space) — the TypeScript SDK and every server
// we know of end lines in LF. An event that is only whitespace is dropped,
// as the TypeScript client drops it. A body that ends without the blank
// line after its last event still delivers it, as the TypeScript client
// does.
//
// inspect is not called for a session/update notification (a message
// that opens as sessionUpdate): nothing is learnt from one. A burst of
// small events is passed on in batches (see batch); an event inspect is
// called for goes after what came before it is passed on.
func readSSE(body io.Reader, m *message, inspect func([]byte)) error {
	br := bufio.NewReaderSize(body, sseReadBuf)
	var b batch
	defer b.release()
	// pass hands what was gathered to the inbox.
	pass := func() error {
		if len(b.buf) == 0 {
			return nil
		}
		return m.in.put(b.take())
	}
	atStart := true // the next read begins a line
	data := false   // the current line is a data: line
	hasData := false
	for {
		if buffered := br.Buffered(); b.due(buffered) {
			if err := pass(); err != nil {
				return err
			}
			if buffered == 0 {
				b.release() // an idle stream holds no batch
			}
		}
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			whole := err == nil // chunk ends the line
			if atStart && !hasData && whole && bytes.HasPrefix(chunk, dataField) {
				if msg, ok := smallEvent(br, chunk, m.max); ok {
					// A whole small event of one data line, its blank
					// line read too: gathered straight from the buffer.
					// One line: a CR is the only line break it can hold.
					replaceByte(msg, '\r', ' ')
					if isBlank(msg) {
						continue // an event of whitespace: dropped
					}
					if inspect != nil && !bytes.HasPrefix(msg, sessionUpdate) {
						if err := pass(); err != nil {
							return err
						}
						inspect(msg)
					}
					b.add(msg)
					continue
				}
			}
			if err := pass(); err != nil {
				return err
			}
			if atStart {
				if whole && (len(chunk) == 1 || (len(chunk) == 2 && chunk[0] == '\r')) {
					// A blank line ends the event.
					if hasData {
						if ferr := m.finish(inspect); ferr != nil {
							return ferr
						}
						hasData = false
					}
					continue
				}
				data = bytes.HasPrefix(chunk, dataField)
				if data {
					chunk = chunk[len(dataField):]
					if len(chunk) > 0 && chunk[0] == ' ' {
						chunk = chunk[1:]
					}
					if hasData {
						// The line break between two data lines.
						if aerr := m.add([]byte{' '}); aerr != nil {
							m.abandon()
							return aerr
						}
					}
					hasData = true
				}
			}
			if data {
				if whole {
					chunk = bytes.TrimSuffix(bytes.TrimSuffix(chunk, newline), []byte{'\r'})
				}
				if aerr := m.add(chunk); aerr != nil {
					m.abandon() // ends a message passed through: the inbox is free again
					return aerr
				}
			}
			atStart = whole
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if perr := pass(); perr != nil {
				return perr
			}
			if hasData {
				return m.finish(inspect)
			}
			return nil
		default:
			_ = pass()
			m.abandon()
			return err
		}
	}
}

// smallEvent reads, when line (a whole data: line beginning an event) is
// the event's only data line, its blank line is already buffered and its
// data at most batchSmall and max bytes, the blank line past and returns
// the data (a slice of br's buffer, valid until its next read).
func smallEvent(br *bufio.Reader, line []byte, max int) ([]byte, bool) {
	n := br.Buffered()
	if n == 0 {
		return nil, false // a Peek would fill the buffer under line
	}
	end, _ := br.Peek(min(n, 2))
	blank := 0
	switch {
	case end[0] == '\n':
		blank = 1
	case len(end) == 2 && end[0] == '\r' && end[1] == '\n':
		blank = 2
	default:
		return nil, false
	}
	msg := line[len(dataField):]
	if len(msg) > 0 && msg[0] == ' ' {
		msg = msg[1:]
	}
	msg = msg[:len(msg)-1] // the line's '\n'
	if len(msg) > 0 && msg[len(msg)-1] == '\r' {
		msg = msg[:len(msg)-1]
	}
	if len(msg) > min(max, batchSmall) {
		return nil, false
	}
	_, _ = br.Discard(blank)
	return msg, true
}
