// cork.go holds the WebSocket's corked socket: frames written while more
// messages are queued are gathered and go out in one write when the queue
// runs dry (or the buffer fills), instead of one write per frame.
package gateway

import (
	"bufio"
	"encoding/binary"
	"net"
	"net/http"
	"sync"
)

// corkBytes is how much a corked socket gathers before it writes anyway.
// The buffer is taken from a pool while a burst lasts and given back when
// it is written, so an idle WebSocket holds none.
const corkBytes = 32 << 10

var corkPool = sync.Pool{New: func() any { b := make([]byte, 0, corkBytes); return &b }}

// corkConn is the hijacked connection under the WebSocket library: the
// library reads the client's frames and writes the control frames (each
// flushed to it in one write), and wsWrite writes the data frames itself
// (writeFrame). While corked, writes are gathered;
// the first write after the cork is lifted sends what was gathered with
// it. It is safe for concurrent use (the library's pings, pongs and close
// frames come from other goroutines; they are gathered too while corked,
// which lasts only until wsWrite's next frame: it corks only when the
// next message is already queued).
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    *[]byte // from corkPool; nil when empty
}

// cork sets whether the writes that follow are gathered (on) or written
// through with what was gathered (off). Lifting the cork writes nothing by
// itself: the next write carries the gathered bytes.
func (c *corkConn) cork(on bool) {
	c.mu.Lock()
	c.corked = on
	c.mu.Unlock()
}

// flush writes what was gathered and lifts the cork.
func (c *corkConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil && (!c.corked || len(p) >= corkBytes) {
		return c.Conn.Write(p)
	}
	if c.buf != nil && len(*c.buf)+len(p) > corkBytes {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) >= corkBytes {
			return c.Conn.Write(p)
		}
	}
	if c.buf == nil {
		c.buf = corkPool.Get().(*[]byte)
	}
	*c.buf = append(*c.buf, p...)
	if !c.corked {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// writeFrame writes one unfragmented text frame of payload, whole: the
// library's control frames, written through Write, come before or after
// it, never inside. corked says whether more frames follow at once (as
// cork). before, when set, is called just before a write to the socket
// (one that may block): a frame gathered while corked costs no timer. The frames are ours rather than the library's: its Write costs a
// context, three channel-select locks and a flush per message, more than
// a small message's copy (see BenchmarkTurnWebSocket).
func (c *corkConn) writeFrame(payload []byte, corked bool, before func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeFrameLocked(payload, corked, before)
}

// writeFrames writes each of msgs as writeFrame does, under one lock (a
// lock a frame was a fifth of the writer's time in a burst of small
// messages): all but the last corked, the last as corkLast says.
func (c *corkConn) writeFrames(msgs [][]byte, corkLast bool, before func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, msg := range msgs {
		if err := c.writeFrameLocked(msg, corkLast || i < len(msgs)-1, before); err != nil {
			return err
		}
	}
	return nil
}

// writeFrameLocked is writeFrame; c.mu is held.
func (c *corkConn) writeFrameLocked(payload []byte, corked bool, before func()) error {
	c.corked = corked
	if n := frameHeaderLen(len(payload)) + len(payload); n < corkBytes {
		if c.buf != nil && len(*c.buf)+n > corkBytes {
			if before != nil {
				before()
			}
			if err := c.flushLocked(); err != nil {
				return err
			}
		}
		if c.buf == nil {
			c.buf = corkPool.Get().(*[]byte)
		}
		// The header goes straight into the buffer: a header array of
		// its own would escape through the long path's net.Buffers and
		// cost an allocation a message.
		*c.buf = append(frameHeader(*c.buf, len(payload)), payload...)
		if !corked {
			if before != nil {
				before()
			}
			return c.flushLocked()
		}
		return nil
	}
	if before != nil {
		before()
	}
	// A long message goes out as it is, after what was gathered, without
	// a copy.
	bufs := make(net.Buffers, 0, 3)
	if c.buf != nil {
		bufs = append(bufs, *c.buf)
	}
	bufs = append(bufs, frameHeader(nil, len(payload)), payload)
	_, err := bufs.WriteTo(c.Conn)
	putCork(c.buf)
	c.buf = nil
	return err
}

// frameHeaderLen is the length of frameHeader's header for n payload bytes.
func frameHeaderLen(n int) int {
	switch {
	case n < 126:
		return 2
	case n < 1<<16:
		return 4
	default:
		return 10
	}
}

// frameHeader appends the header of an unmasked final text frame of n
// payload bytes (RFC 6455 §5.2) to b.
func frameHeader(b []byte, n int) []byte {
	const finText = 0x80 | 0x1
	switch {
	case n < 126:
		return append(b, finText, byte(n))
	case n < 1<<16:
		return binary.BigEndian.AppendUint16(append(b, finText, 126), uint16(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, finText, 127), uint64(n))
	}
}

// flushLocked writes the gathered bytes and gives the buffer back.
func (c *corkConn) flushLocked() error {
	if c.buf == nil {
		return nil
	}
	b := c.buf
	c.buf = nil
	_, err := c.Conn.Write(*b)
	putCork(b)
	return err
}

// putCork gives b back to corkPool, unless it grew past corkBytes for a
// long message (the pool keeps only buffers of the usual size) or is nil.
func putCork(b *[]byte) {
	if b == nil || cap(*b) > corkBytes {
		return
	}
	*b = (*b)[:0]
	corkPool.Put(b)
}

// corkWriter hands the WebSocket library a corkConn when it hijacks the
// connection.
type corkWriter struct {
	http.ResponseWriter
	cc *corkConn
}

func (w *corkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	rwc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The server's writer of a hijacked connection is a fresh one on rwc;
	// anything in it (nothing, in net/http) goes first.
	if err := brw.Writer.Flush(); err != nil {
		rwc.Close()
		return nil, nil, err
	}
	w.cc.Conn = rwc
	brw.Writer.Reset(w.cc)
	return w.cc, brw, nil
}
