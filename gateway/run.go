// run.go holds the runs route's fast path queues an agent's updates in:
// a run's lines copied into one block (flush), or left in the block the
// agent's reader read them into (queueIn), and the pool of those blocks.
package gateway

import (
	"bytes"
	"sync"
)

// copyRun gathers the update lines route's fast path reads for one
// session, lent by agentLines, and queues them as slices of one copy: one
// block for a run, not an allocation a line (or, for a run of half a block
// or more, of the block they were read into: queueIn). A run's lines are queued
// together on one stream, which sends them in order, so what its block
// keeps beyond the lines still queued is those of its lines in the batch
// being written (see flush for pooled blocks). It lives on route's stack.
type copyRun struct {
	session string
	n       int
	bytes   int
	lines   [128][]byte // a 16 KiB read of short updates is one run
}

// runBytes is the most a run gathers; a longer line is a run of its own.
const runBytes = 16 << 10

// add puts line in the run, queuing the run first if line is for another
// session or would take it past its bounds. c.mu is held.
func (r *copyRun) add(c *conn, session string, line []byte) error {
	if r.n > 0 && (session != r.session || r.n == len(r.lines) || r.bytes+len(line) > runBytes) {
		if err := r.flush(c); err != nil {
			return err
		}
	}
	r.session = session
	r.lines[r.n] = line
	r.n++
	r.bytes += len(line)
	return nil
}

// flush copies the run's lines into one block and queues them, in order,
// each capped so that no append reaches the next. c.mu is held.
//
// A run of runPooled bytes or more (a burst) is copied into a block from
// runPool, which the stream gives back once the lines are written
// (stream.releaseLocked): a flood of updates then allocates nothing, where
// a block a run made 18 MB of garbage a 100 000-chunk turn. A smaller run
// gets a block of its own size, so that what the connection retains stays
// what it queues (a 16 KiB block for one short line would not).
func (r *copyRun) flush(c *conn) error {
	if r.n == 0 {
		return nil
	}
	var pooled *[]byte
	var block []byte
	if r.bytes >= runPooled && r.bytes <= runBytes {
		pooled = runPool.Get().(*[]byte)
		block = *pooled
		for i := range r.n {
			block = append(block, r.lines[i]...)
		}
	} else {
		block = bytes.Join(r.lines[:r.n], nil) // not zeroed first
	}
	for i := range r.n {
		n := len(r.lines[i])
		r.lines[i], block = block[:n:n], block[n:]
	}
	st, err := c.pushRunLocked(r.session, r.lines[:r.n])
	clear(r.lines[:r.n])
	if pooled != nil && st != nil {
		st.blocks = append(st.blocks, heldBlock{pooled, st.pushed})
	}
	r.n, r.bytes = 0, 0
	return err
}

// queueIn queues the run's lines where they are, in blk, the pooled block
// agentLines read them into and handed over: the stream gives it back
// to runPool as it does a block flush copied the lines into. blk holds
// other bytes too (lines before the run, queued as copies or not at all),
// so a run queued in its block is at least runPooled bytes, as a copied
// one is. c.mu is held.
func (r *copyRun) queueIn(c *conn, blk *[]byte) error {
	for i := range r.n {
		line := r.lines[i]
		r.lines[i] = line[:len(line):len(line)]
	}
	st, err := c.pushRunLocked(r.session, r.lines[:r.n])
	clear(r.lines[:r.n])
	if st != nil {
		st.blocks = append(st.blocks, heldBlock{blk, st.pushed})
	}
	r.n, r.bytes = 0, 0
	return err
}

// runPooled is the smallest run copied into a pooled block: a pooled
// block (runBytes) then holds at most twice what its lines count against
// MaxBufferedBytes.
const runPooled = runBytes / 2

var runPool = sync.Pool{New: func() any { b := make([]byte, 0, runBytes); return &b }}

// putRun gives b back to runPool.
func putRun(b *[]byte) {
	*b = (*b)[:0]
	runPool.Put(b)
}
