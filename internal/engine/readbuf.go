package engine

import (
	"bufio"
	"bytes"
	"io"
	"sync"
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
const (
	smallReadBuf = 2 << 10
	largeReadBuf = 32 << 10
)

var largeReadBufs = sync.Pool{New: func() any { b := make([]byte, largeReadBuf); return &b }}

// readBuf is the part of bufio.Reader the LineReader needs (ReadSlice, with
// the same results), over a buffer that changes size between reads.
type readBuf struct {
	rd    io.Reader
	small []byte
	large *[]byte // from largeReadBufs, nil while the traffic is light
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
// after a read that filled its room, small again once a read came back
// short and the buffer is empty. A line returned earlier may be overwritten (or, its buffer back
// in the pool, by another connection): lines are valid until the next call.
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
		b.large = largeReadBufs.Get().(*[]byte)
		b.w = copy(*b.large, b.buf[:b.w])
		b.buf = *b.large
	case !b.burst && b.large != nil && b.w == 0:
		largeReadBufs.Put(b.large)
		b.large, b.buf = nil, b.small
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
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}
