package gateway

import (
	"bytes"
	"errors"
	"io"
)

// agentBlock is the size of the block the agent's output is read into:
// a connection holds one for its life, larger only while a longer line is
// read.
const agentBlock = 16 << 10

var errLineTooLong = errors.New("line too long")

// agentLines cuts the agent's output into lines. It reads straight into
// one block and lends each line as a slice of it: a line stays as it is
// only until next reads again (never while ready is true), and whoever
// keeps it copies it. conn.route copies a run of update lines for one
// session into one block (copyRun), so what a connection retains is the bytes
// it queues (and counts against MaxBufferedBytes), whatever the agent
// writes around them: blank lines, trailing spaces, dropped output and
// the rest of a read are never kept.
//
// It is used by the connection's agent reader alone.
type agentLines struct {
	r   io.Reader
	max int // the longest line, newline excluded (MaxMessageBytes)

	buf        []byte // the block; buf[start:end] is read and not yet returned
	start, end int
	scan       int // buf[start:scan] holds no newline
	nl         int // the newline ending the next line, or -1 if none is known
	err        error
}

func newAgentLines(r io.Reader, max int) *agentLines {
	return &agentLines{r: r, max: max, nl: -1}
}

// find looks for the newline ending the next line in what is read.
func (a *agentLines) find() {
	if a.nl >= 0 {
		return
	}
	if i := bytes.IndexByte(a.buf[a.scan:a.end], '\n'); i >= 0 {
		a.nl = a.scan + i
		return
	}
	a.scan = a.end
}

// ready reports whether next would return a line without reading: a
// whole line within the bound is already read.
func (a *agentLines) ready() bool {
	a.find()
	return a.nl >= 0 && a.nl-a.start <= a.max
}

// next returns the next line without its newline, lent (see
// agentLines). A line longer than max is errLineTooLong, reported once
// more than max bytes of it are read, without holding more; a last line
// without a newline is returned before the reader's io.EOF.
func (a *agentLines) next() ([]byte, error) {
	empty := 0
	for {
		a.find()
		if a.nl >= 0 {
			line := a.buf[a.start:a.nl:a.nl]
			a.start = a.nl + 1
			a.scan, a.nl = a.start, -1
			if len(line) > a.max {
				return nil, errLineTooLong
			}
			return line, nil
		}
		if a.end-a.start > a.max {
			return nil, errLineTooLong
		}
		if a.err != nil {
			if a.start < a.end && errors.Is(a.err, io.EOF) {
				line := a.buf[a.start:a.end:a.end]
				a.start, a.scan = a.end, a.end
				return line, nil
			}
			return nil, a.err
		}
		n := a.fill()
		if n > 0 {
			empty = 0
		} else if empty++; empty >= 100 && a.err == nil {
			a.err = io.ErrNoProgress
		}
	}
}

// fill makes room after what is read and reads once into it. The lines
// the block lent are over, so it is reused: moved to its start when full,
// grown (twice the part read, up to the bound) while a line longer than a
// block is read, and back to agentBlock once the part read fits one.
func (a *agentLines) fill() int {
	partial := a.end - a.start
	if a.end == len(a.buf) || (len(a.buf) > agentBlock && partial < agentBlock) {
		size := agentBlock
		if partial >= agentBlock {
			size = max(min(2*partial, a.max+1), partial+1)
		}
		if size == len(a.buf) {
			copy(a.buf, a.buf[a.start:a.end])
		} else {
			buf := make([]byte, size)
			copy(buf, a.buf[a.start:a.end])
			a.buf = buf
		}
		a.start, a.end = 0, partial
		a.scan = a.end
	}
	n, err := a.r.Read(a.buf[a.end:])
	a.end += n
	if err != nil {
		a.err = err
	}
	return n
}
