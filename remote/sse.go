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
func readSSE(body io.Reader, m *message, inspect func([]byte)) error {
	br := bufio.NewReaderSize(body, sseReadBuf)
	atStart := true // the next read begins a line
	data := false   // the current line is a data: line
	hasData := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			whole := err == nil // chunk ends the line
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
			if hasData {
				return m.finish(inspect)
			}
			return nil
		default:
			m.abandon()
			return err
		}
	}
}
