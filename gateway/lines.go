package gateway

import (
	"bytes"
	"errors"
	"io"
)

// agentBlock is the size of the block the agent's output is read into:
// a connection holds one for its life, larger only while a longer line is
// read. It is a run block (runPool), so that route can queue a run of the
// block's lines in it rather than copy them (handOver).
const agentBlock = runBytes

var errLineTooLong = errors.New("line too long")

// agentLines cuts the agent's output into lines. It reads straight into
// one block and lends each line as a slice of it: a line stays as it is
// only until next reads again (never while ready is true), and whoever
// keeps it copies it, or takes the whole block (handOver). conn.route
// copies a run of update lines for one session into one block (copyRun),
// or, when the run is half the block or more, takes the block with it; so
// what a connection retains is at most twice the bytes it queues (and
// counts against MaxBufferedBytes), whatever the agent writes around them:
// blank lines, trailing spaces and dropped output are kept only within a
// block a run of at least half of it was queued in.
//
// It is used by the connection's agent reader alone.
type agentLines struct {
	r   io.Reader
	max int // the longest line, newline excluded (MaxMessageBytes)

	buf        []byte  // the block; buf[start:end] is read and not yet returned
	pooled     *[]byte // buf's, when it is a block of runPool's (not grown)
	start, end int
	scan       int // buf[start:scan] holds no newline
	nl         int // the newline ending the next line, or -1 if none is known
	err        error
}

func newAgentLines(r io.Reader, max int) *agentLines {
	a := &agentLines{r: r, max: max, nl: -1}
	a.take()
	return a
}

// take makes a block from runPool the block, empty.
func (a *agentLines) take() {
	a.pooled = runPool.Get().(*[]byte)
	a.buf = (*a.pooled)[:cap(*a.pooled)]
}

// handOver gives up the block to the caller, which has queued lines lent
// from it and keeps them there, and goes on in a new block from runPool
// with what is read and not yet returned. Only a pooled block is handed
// over: false if the block is a grown one.
func (a *agentLines) handOver() (*[]byte, bool) {
	old, rest := a.pooled, a.buf[a.start:a.end]
	if old == nil {
		return nil, false
	}
	a.take()
	a.end = copy(a.buf, rest)
	a.scan -= a.start
	if a.nl >= 0 {
		a.nl -= a.start
	}
	a.start = 0
	return old, true
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
		switch old := a.buf[a.start:a.end]; {
		case size == len(a.buf):
			copy(a.buf, old)
		case size == agentBlock:
			// Back from a long line: a pooled block again.
			a.take()
			copy(a.buf, old)
		default:
			buf := make([]byte, size)
			copy(buf, old)
			if a.pooled != nil {
				// Its lines are over (none was handed over with it).
				putRun(a.pooled)
				a.pooled = nil
			}
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
