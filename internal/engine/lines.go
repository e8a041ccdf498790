// Package engine holds the parts of the client's JSON-RPC engine that know
// nothing of ACP or of the client: today the framing of the agent's output
// into bounded lines. The rules the engine keeps, and where, are in
// docs/ENGINE.md.
package engine

import (
	"bufio"
	"errors"
	"io"

	"github.com/acpclient/acp/internal/jsonscan"
)

// KeepBufBytes is the largest line buffer a LineReader keeps between lines:
// one huge line must not pin its buffer for the connection's life. Between
// bursts it keeps none above the small read buffer's size (see readBuf).
const KeepBufBytes = 1 << 20

// LineReader splits a byte stream into newline-terminated lines of at most
// max bytes. Unlike a bufio.Scanner it never fails on a long line: the line
// is read to its end and discarded, and its id and method are recovered on
// the way (Oversized). A final line without a newline is a line too (a
// crashing agent's last words are exactly such a line). It is for one
// goroutine.
type LineReader struct {
	br   *readBuf
	buf  []byte
	max  int
	over jsonscan.IDScanner
}

// NewLineReader returns a reader of lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{br: newReadBuf(r), max: max}
}

// Next returns the next line without its terminator (\n or \r\n), and the
// line's full size. A line over the limit is consumed to its end; Next then
// returns a nil line, its size (over the limit), and what was recovered
// from it is in Oversized. The line is valid until the next call. At the end
// of the input Next returns io.EOF.
func (r *LineReader) Next() ([]byte, int64, error) {
	if cap(r.buf) > KeepBufBytes || cap(r.buf) > smallReadBuf && r.br.idle() {
		// One huge line must not pin its buffer; nor, once the burst is
		// over, must the long lines of a burst.
		r.buf = nil
	}
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(frag) > r.max {
			return r.skip(frag, err)
		}
		switch {
		case err == nil:
			if len(r.buf) == 0 {
				return TrimEOL(frag), int64(len(frag)), nil
			}
			r.buf = append(r.buf, frag...)
			return TrimEOL(r.buf), int64(len(r.buf)), nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.buf = append(r.buf, frag...)
		case errors.Is(err, io.EOF):
			r.buf = append(r.buf, frag...)
			if len(r.buf) > 0 {
				return TrimEOL(r.buf), int64(len(r.buf)), nil
			}
			return nil, 0, io.EOF
		default:
			return nil, 0, err
		}
	}
}

// BufCap is the capacity of the buffer kept between lines (for tests).
func (r *LineReader) BufCap() int { return cap(r.buf) }

// Oversized returns what was recovered from the last line over the limit.
func (r *LineReader) Oversized() jsonscan.IDScanner { return r.over }

// skip discards the rest of a line that broke the limit, feeding every byte
// through an IDScanner so the message's id and method can still be
// reported.
func (r *LineReader) skip(frag []byte, err error) ([]byte, int64, error) {
	var sc jsonscan.IDScanner
	sc.Feed(r.buf)
	size := int64(len(r.buf))
	for {
		sc.Feed(frag)
		size += int64(len(frag))
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		frag, err = r.br.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	r.over = sc
	r.buf = nil
	return nil, size, nil
}

// TrimEOL drops a trailing \n or \r\n.
func TrimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
