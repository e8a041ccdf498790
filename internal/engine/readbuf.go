package engine

import (
	"bufio"
	"bytes"
	"io"
	"sync"
	"sync/atomic"
)

// Read buffers are sized to traffic. A connection that waits for input
// waits on a small buffer of its own; once a read fills all the room it was
// given (a burst: more is waiting in the pipe), the next read takes a large
// buffer from a pool shared by all connections, and gives it back as soon
// as a read comes back short (the pipe is drained). So a thousand idle
// connections hold a thousand small buffers, not a thousand large ones.
//
// The large buffer is half a Linux pipe (64 KiB): with 500 agents bursting
// at once, 64 KiB buffers were 32 MB of the 40 MB the process's peak rose
// above its steady size (bench/README.md, "The read buffer of a burst");
// 32 KiB ones halve that at no cost measurable on a whole turn of small
// chunks or a 100 MB stream of 1000-byte ones, where 16 KiB ones began to
// lose throughput on the stream.
//
// A connection whose 32 KiB reads keep coming back full is behind its agent
// by more than a read (the command asks for a 1 MiB pipe): its next read
// takes a deep buffer, 256 KiB, if fewer than maxDeepReadBufs are held in
// the process, and keeps it until the burst ends as a large buffer's does
// (a read comes back short and leaves nothing unread) or its input ends.
// Each read ends with a wake-up of the turn's readers and the reader's own
// park in the poller; on the 100 000-chunk turn deep reads were a fifth as
// many (540 to about 100) and the command's wall time about 3 % lower
// (bench/README.md, "Deep reads"). With the cap, a host whose 500 agents
// burst together holds at most 1 MiB more than with large buffers alone,
// and the rest read as before. Deep buffers are pooled as large ones are:
// a source that delivers whole lines a message at a time (the WebSocket
// client) ends a burst at every short read, and a buffer allocated a burst
// cost it up to a fifth of its throughput (bench/README.md, "Deep reads").
// The pool holds no more than were held at once, and empties over two
// collections.
const (
	smallReadBuf    = 2 << 10
	largeReadBuf    = 32 << 10
	deepReadBuf     = 256 << 10
	maxDeepReadBufs = 4
)

var (
	largeReadBufs = sync.Pool{New: func() any { b := make([]byte, largeReadBuf); return &b }}
	deepReadBufs  = sync.Pool{New: func() any { b := make([]byte, deepReadBuf); return &b }}
	// deepHeld counts the deep buffers readers hold now.
	deepHeld atomic.Int32
)

// takeDeep reserves one of the process's deep buffers; false when all are
// held.
func takeDeep() bool {
	if deepHeld.Add(1) <= maxDeepReadBufs {
		return true
	}
	deepHeld.Add(-1)
	return false
}

// readBuf is the part of bufio.Reader the LineReader needs (ReadSlice, with
// the same results), over a buffer that changes size between reads.
type readBuf struct {
	rd    io.Reader
	small []byte
	large *[]byte // from largeReadBufs or deepReadBufs, nil while the traffic is light
	deep  bool    // large is a deep buffer, one of deepHeld
	buf   []byte  // small or *large
	r, w  int     // buf[r:w] is unread
	err   error
	burst bool // the last read filled the room it had
	// beforeRead, if set, runs before each read of rd: every line read
	// before it has been returned (LineReader: and dispatched).
	beforeRead func()
}

func newReadBuf(rd io.Reader) *readBuf {
	b := &readBuf{rd: rd, small: make([]byte, smallReadBuf)}
	b.buf = b.small
	return b
}

// idle reports whether the next read will wait on the small buffer.
func (b *readBuf) idle() bool { return b.r == b.w && !b.burst }

// ReadSlice is bufio.Reader.ReadSlice.
func (b *readBuf) ReadSlice(delim byte) ([]byte, error) {
	searched := 0
	for {
		if i := bytes.IndexByte(b.buf[b.r+searched:b.w], delim); i >= 0 {
			end := b.r + searched + i + 1
			line := b.buf[b.r:end]
			b.r = end
			return line, nil
		}
		if b.err != nil {
			line, err := b.buf[b.r:b.w], b.err
			b.r, b.err = b.w, nil
			return line, err
		}
		if b.w-b.r == len(b.buf) {
			line := b.buf[b.r:b.w]
			b.r = b.w
			return line, bufio.ErrBufferFull
		}
		searched = b.w - b.r
		b.fill()
	}
}

// fill reads once more into the buffer, first choosing its size: large
// after a read that filled its room, deep after one that filled a large
// buffer (if a slot is free), small again once a read came back short and
// the buffer is empty. A line returned earlier may be overwritten (or, its
// buffer back in the pool, by another connection): lines are valid until
// the next call.
func (b *readBuf) fill() {
	if b.r > 0 {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	switch {
	case b.burst && b.large == nil:
		// Grow at once, carrying over the start of a line: under a burst a
		// read rarely ends exactly at the end of a line.
		b.use(largeReadBufs.Get().(*[]byte), false)
	case b.burst && !b.deep && takeDeep():
		b.use(deepReadBufs.Get().(*[]byte), true)
	case !b.burst && b.large != nil && b.w == 0:
		b.putLarge()
		b.buf = b.small
	}
	if b.beforeRead != nil {
		b.beforeRead()
	}
	for range 100 {
		room := len(b.buf) - b.w
		n, err := b.rd.Read(b.buf[b.w:])
		if n < 0 || n > room {
			panic("engine: reader returned an impossible count")
		}
		b.w += n
		b.burst = n == room
		if err != nil {
			b.err = err
			b.end()
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
	b.end()
}

// use moves what is unread, at the buffer's start, to buf (from the pool
// of its size) and gives the buffer held before back (putLarge).
func (b *readBuf) use(buf *[]byte, deep bool) {
	b.w = copy(*buf, b.buf[:b.w])
	b.putLarge()
	b.large, b.deep, b.buf = buf, deep, *buf
}

// putLarge gives the large or deep buffer held back to its pool, and a
// deep one's slot.
func (b *readBuf) putLarge() {
	switch {
	case b.large == nil:
	case b.deep:
		deepReadBufs.Put(b.large)
		deepHeld.Add(-1)
	default:
		largeReadBufs.Put(b.large)
	}
	b.large, b.deep = nil, false
}

// end gives the large or deep buffer back once the input has ended:
// nothing more will be read into it, and a reader that stops at its error
// must not keep a deep buffer's slot. What is unread moves to the small
// buffer, or to one of its own.
func (b *readBuf) end() {
	if b.large == nil {
		return
	}
	unread := b.buf[b.r:b.w]
	buf := b.small
	if len(unread) > len(buf) {
		buf = make([]byte, len(unread))
	}
	b.r, b.w = 0, copy(buf, unread)
	b.putLarge()
	b.buf = buf
}
