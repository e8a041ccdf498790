package engine

// The wire's writing side: frames queued by jrpc2 and the client, one writer
// goroutine, an urgent lane for session/cancel, and the write budget's
// accounting (writebudget.go).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/acpclient/acp/internal/jsonscan"
)

// Send implements channel.Channel. jrpc2 calls it with its client lock held,
// so it only queues the frame.
func (w *Wire) Send(frame []byte) error {
	id, method, params, isCall := outgoingCall(frame)
	if !isCall {
		_, err := w.enqueue(frame, false, false, true)
		return err
	}
	// The call is recorded before its frame can reach the agent, so its
	// response always finds it.
	key := string(id)
	w.mu.Lock()
	w.calls[key] = &callRecord{method: method}
	w.mu.Unlock()
	var written func(error)
	if w.hooks.CallSent != nil {
		written = w.hooks.CallSent(id, method, params)
	}
	ch, err := w.enqueue(frame, false, written != nil, true)
	if err != nil {
		w.mu.Lock()
		delete(w.calls, key)
		w.mu.Unlock()
		if written != nil {
			written(err)
		}
		return err
	}
	if written != nil {
		go func() { written(<-ch) }()
	}
	return nil
}

// SendRaw queues one frame the client composed itself. urgent frames (session/cancel) overtake queued
// normal frames, but never cut into a frame already being written.
func (w *Wire) SendRaw(frame []byte, urgent bool) error {
	_, err := w.enqueue(frame, urgent, false, false)
	return err
}

func (w *Wire) enqueue(frame []byte, urgent, wait, jrpc2 bool) (<-chan error, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wclosed {
		return nil, notWritten{w.hooks.Closed}
	}
	if w.werr != nil {
		return nil, notWritten{w.werr}
	}
	if urgent {
		w.urgent = append(w.urgent, frame)
		w.cond.Signal()
		return nil, nil
	}
	n := int64(len(frame))
	if jrpc2 {
		if id := replyID(frame); id != nil {
			if rs := w.reserved[string(id)]; len(rs) > 0 {
				n = rs[0]
				w.queued -= n // counted again below, now as a queued frame
				if len(rs) == 1 {
					delete(w.reserved, string(id))
				} else {
					w.reserved[string(id)] = rs[1:]
				}
			}
		}
	}
	w.queued += n
	w.normal = append(w.normal, outFrame{frame, n})
	w.seq++
	var ch chan error
	if wait {
		ch = make(chan error, 1)
		w.waiters[w.seq] = ch
	}
	w.cond.Signal()
	return ch, nil
}

// writeBufs are the writers' buffers, shared by all connections.
var writeBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}

func (w *Wire) writeLoop() {
	defer close(w.wdone)
	for {
		w.mu.Lock()
		for len(w.urgent) == 0 && len(w.normal) == 0 && !w.wclosed {
			w.cond.Wait()
		}
		if len(w.urgent) == 0 && len(w.normal) == 0 {
			w.mu.Unlock()
			return
		}
		var frames [][]byte
		var normal []outFrame
		var last int
		if len(w.urgent) > 0 {
			frames, w.urgent = w.urgent, nil
			last = -1
		} else {
			normal, w.normal = w.normal, nil
			frames = make([][]byte, len(normal))
			for i := range normal {
				frames[i] = normal[i].b
			}
			last = w.seq
		}
		w.mu.Unlock()

		// The buffer is the pool's between batches: an idle connection
		// holds none.
		bw := writeBufs.Get().(*bufio.Writer)
		cw := countingWriter{w: w.w}
		bw.Reset(&cw)
		var err error
		for _, f := range frames {
			if w.hooks.Trace != nil {
				w.hooks.Trace('>', f)
			}
			if _, err = bw.Write(f); err != nil {
				break
			}
			if err = bw.WriteByte('\n'); err != nil {
				break
			}
		}
		if err == nil {
			err = bw.Flush()
		}
		bw.Reset(nil)
		writeBufs.Put(bw)

		if err != nil && cw.n > 0 && errors.Is(err, ErrNotWritten) {
			// The transport says the failed write reached no agent, but an
			// earlier one of this batch did: what the batch's frames got
			// is not known.
			err = mayHaveWritten{err}
		}
		w.mu.Lock()
		if err != nil && w.werr == nil {
			w.werr = fmt.Errorf("%w: writing to the agent: %w", w.hooks.Closed, err)
		}
		for _, f := range normal {
			w.queued -= f.n
		}
		if len(normal) > 0 {
			w.freedLocked()
		}
		if last >= 0 {
			for seq, ch := range w.waiters {
				if seq <= last {
					ch <- w.werr
					delete(w.waiters, seq)
				}
			}
		}
		failed := w.werr != nil
		w.mu.Unlock()
		if failed {
			w.failWaiters()
			w.writeBroken()
			return
		}
	}
}

// writeBroken closes the read side once writing to the agent has failed
// for good (every later send fails with werr): otherwise an agent that
// keeps its output open (a process that stopped reading, a remote
// transport whose POSTs fail) would leave the connection half alive, able
// to send nothing, its calls failing with the bare write error and no
// restart following. The reader then ends and decides the connection's
// reason (Hooks.EOF): an end it read itself (the agent's exit, a stream's
// end) wins; an end that is only this close reports the write's error
// (readEnd). The writer does not end the connection itself: it would race
// the reader for the reason.
func (w *Wire) writeBroken() {
	w.mu.Lock()
	w.writeBroke = true
	w.mu.Unlock()
	if w.closeRd != nil {
		_ = w.closeRd()
	}
}

// readEnd is what the reader reports for the end err of its input: the
// write's error when the input ended only because writeBroken closed it.
func (w *Wire) readEnd(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writeBroke && w.werr != nil && isClosedErr(err) {
		return w.werr
	}
	return err
}

// isClosedErr: a read error that says only that the reader was closed
// under it.
func isClosedErr(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// WriteFailed reports whether writing to the agent has failed: every send
// fails from then on, and the reader is ending (writeBroken).
func (w *Wire) WriteFailed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.werr != nil
}

// notWritten is the error of a frame refused before it was written (the
// wire is closed, or an earlier write failed): its text is the cause's,
// and it also wraps ErrNotWritten.
type notWritten struct{ err error }

func (e notWritten) Error() string   { return e.err.Error() }
func (e notWritten) Unwrap() []error { return []error{e.err, ErrNotWritten} }

// ErrNotWritten marks (errors.Is) the error of a frame the agent cannot
// have seen: the wire refused it before writing any of it, or the
// transport's Write failed with an error wrapping it having taken none of
// the batch (package remote: the server forwarded nothing).
var ErrNotWritten = errors.New("engine: the frame was not written")

// countingWriter counts the bytes its writer took.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// mayHaveWritten is a write error that wraps ErrNotWritten but may not
// claim it: it matches everything its cause matches except ErrNotWritten.
type mayHaveWritten struct{ err error }

func (e mayHaveWritten) Error() string { return e.err.Error() }
func (e mayHaveWritten) Is(target error) bool {
	return target != ErrNotWritten && errors.Is(e.err, target)
}

func (w *Wire) failWaiters() {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.werr
	if err == nil {
		err = w.hooks.Closed
	}
	for seq, ch := range w.waiters {
		// Still waiting: its frame was never handed to a write (the
		// writer has stopped; a batch it wrote reported to its own).
		ch <- notWritten{err}
		delete(w.waiters, seq)
	}
	w.normal, w.urgent = nil, nil
	w.queued, w.admitted = 0, 0
	clear(w.reserved)
	w.freedLocked()
}

// CloseWrite stops accepting frames, lets the writer drain what is queued
// (the agent may be waiting for a reply among them), then closes the write
// side. If the writer has not finished within grace (an agent that stopped
// reading), the write side is closed under it to unblock it.
func (w *Wire) CloseWrite(grace time.Duration) {
	w.mu.Lock()
	w.wclosed = true
	w.cond.Broadcast()
	w.freedLocked() // replies waiting for room go ahead and fail in Send
	w.mu.Unlock()
	waitOrTimeout(w.wdone, grace)
	if w.closeWr != nil {
		_ = w.closeWr()
	}
	<-w.wdone
	w.failWaiters()
}

// outgoingCall recognises a request frame jrpc2 writes and returns its
// parts (aliasing frame). It reads the frame with the reader's own peeker,
// so what the wire records of a call is what it would read of it.
func outgoingCall(frame []byte) (id []byte, method string, params []byte, ok bool) {
	env, err := jsonscan.Peek(frame)
	if err != nil || !env.HasMethod || len(env.ID) == 0 || string(env.ID) == "null" {
		return nil, "", nil, false
	}
	return env.ID, env.Method, env.Params, true
}
