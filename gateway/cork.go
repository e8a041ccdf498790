// cork.go holds the WebSocket's corked socket: frames written while more
// messages are queued are gathered and go out in one write when the queue
// runs dry (or the buffer fills), instead of one write per frame.
package gateway

import (
	"bufio"
	"net"
	"net/http"
	"sync"
)

// corkBytes is how much a corked socket gathers before it writes anyway.
// The buffer is taken from a pool while a burst lasts and given back when
// it is written, so an idle WebSocket holds none.
const corkBytes = 32 << 10

var corkPool = sync.Pool{New: func() any { b := make([]byte, 0, corkBytes); return &b }}

// corkConn is the hijacked connection under the WebSocket library, whose
// every message ends in a flush to it. While corked, writes are gathered;
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
