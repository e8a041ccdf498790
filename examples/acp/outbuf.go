// outbuf.go holds liveWriter, the command's stdout: what the turn's
// renderer writes is gathered and written a few at a time, everything else
// goes out at once, in order.
package main

import (
	"io"
	"sync"
	"time"
)

// liveWriter is stdout. A turn of 100 000 text chunks is 100 000 events,
// and one write(2) per event was a fifth of the command's CPU time (and
// the agent's pipe drained no faster than the terminal could take
// syscalls), so the renderer's output is deferred: appended to a buffer
// that goes out when it holds liveMax bytes, when any other write is made
// to stdout or stderr (see before), and at the latest liveDelay after its
// first byte, so a live stream still reaches the terminal at once for a
// person watching. Nothing else changes: the bytes, their order among
// themselves and against stderr, are what they were.
//
// Write (every write that is not the renderer's: prompts, notes,
// turn_end) writes what is deferred, then p, before it returns. Its
// methods are safe for concurrent use; l.mu is taken after output.mu,
// never before, and the timer takes only l.mu.
type liveWriter struct {
	w     io.Writer
	mu    sync.Mutex
	buf   []byte
	timer *time.Timer // made on the first deferred write
	armed bool        // the timer will flush: set whenever buf is not empty
	delay time.Duration
	// later is l as the io.Writer whose writes are deferred, for fmt.
	later deferredWriter
}

const (
	// liveDelay bounds how long deferred output waits: below what a person
	// can see, far above the microseconds between a burst's events.
	liveDelay = time.Millisecond
	// liveMax is the most that is deferred: a burst goes out in writes of
	// this size, and the buffer stays small.
	liveMax = 32 << 10
)

func newLiveWriter(w io.Writer) *liveWriter {
	l := &liveWriter{w: w, delay: liveDelay}
	l.later = deferredWriter{l}
	return l
}

// Write writes what is deferred, then p.
func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flushLocked(); err != nil {
		return 0, err
	}
	return l.w.Write(p)
}

// Flush writes what is deferred.
func (l *liveWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

// Stop writes what is deferred and stops the timer: the session is over,
// so no goroutine of the writer is left behind. A later deferred write
// arms it again.
func (l *liveWriter) Stop() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil && l.timer.Stop() {
		l.armed = false
	}
	return l.flushLocked()
}

// begin returns the deferred bytes, to append to; end takes them back.
// l.mu is held from begin to end.
func (l *liveWriter) begin() []byte {
	l.mu.Lock()
	return l.buf
}

func (l *liveWriter) end(b []byte) {
	l.buf = b
	if len(b) >= liveMax {
		l.flushLocked()
	} else if len(b) > 0 && !l.armed {
		l.armed = true
		if l.timer == nil {
			l.timer = time.AfterFunc(l.delay, l.fire)
		} else {
			l.timer.Reset(l.delay)
		}
	}
	l.mu.Unlock()
}

// deferString appends s to what is deferred.
func (l *liveWriter) deferString(s string) {
	l.end(append(l.begin(), s...))
}

func (l *liveWriter) fire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	l.flushLocked()
}

// flushLocked writes what is deferred. A failed write drops it: stdout's
// errors are not reported anywhere else either (a closed pipe ends the
// command with SIGPIPE). l.mu is held.
func (l *liveWriter) flushLocked() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	if cap(l.buf) > 4*liveMax {
		l.buf = nil // one long line (a tool call's content) is not kept
	} else {
		l.buf = l.buf[:0]
	}
	return err
}

// deferredWriter is a liveWriter whose writes are deferred.
type deferredWriter struct{ l *liveWriter }

func (d deferredWriter) Write(p []byte) (int, error) {
	d.l.end(append(d.l.begin(), p...))
	return len(p), nil
}

// beforeWriter is stderr: it writes stdout's deferred output first, so
// that the two streams keep their order on a terminal that shows both.
type beforeWriter struct {
	w      io.Writer
	stdout *liveWriter
}

func (b beforeWriter) Write(p []byte) (int, error) {
	b.stdout.Flush()
	return b.w.Write(p)
}
