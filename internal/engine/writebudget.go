package engine

import (
	"bytes"
	"context"

	"github.com/acpclient/acp/internal/jsonscan"
)

// The write budget keeps an agent that stops reading from growing the
// client's memory with replies it asked for (Limits.MaxQueuedWriteBytes).
//
// jrpc2 calls Send with its client lock held, so Send itself must never
// wait: a full queue there would stall every call and every other reply.
// Waiting happens earlier, on the goroutine that serves the request, before
// it hands its result to jrpc2:
//
//   - a handler whose reply may be large (file reads, terminal output)
//     first takes a share of the budget, so only a few of them produce
//     their replies at once;
//   - every handler, once its reply is encoded, waits until the reply fits
//     in the budget and reserves its size; Send later turns the reservation
//     into the queued frame, and the writer releases it once written.
//
// Frames the client sends on its own behalf (calls, session/cancel) never
// wait: they are counted, so replies wait behind them, but the user's calls
// are not held up by the agent's requests, and session/cancel still
// overtakes everything. The reader, before it queues a refusal of its own
// (a request over a limit, a duplicate id), waits while the budget is spent.

// bulkyShare is the fraction of the budget a bulky handler holds while it
// produces its reply: at most this many run at once while the queue is
// empty.
const bulkyShare = 8

// freedLocked wakes everything waiting for room. w.mu must be held.
func (w *Wire) freedLocked() {
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
}

// waitRoomLocked releases w.mu until bytes are released, the wire closes or
// ctx ends, and reports whether the caller may still wait.
func (w *Wire) waitRoomLocked(ctx context.Context) bool {
	if w.room == nil {
		w.room = make(chan struct{})
	}
	ch := w.room
	w.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	w.mu.Lock()
	return ctx.Err() == nil && !w.wclosed && w.werr == nil
}

// AdmitBulky waits until a bulky handler may start producing its reply and
// returns what it holds; pass it to ReleaseBulky. A handler may always start
// when nothing is queued or held, so one reply larger than the whole budget
// still goes out.
func (w *Wire) AdmitBulky(ctx context.Context) (share int64, ok bool) {
	if w.limits.MaxQueued <= 0 {
		return 0, true
	}
	share = max(w.limits.MaxQueued/bulkyShare, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.queued+w.admitted > 0 && w.queued+w.admitted+share > w.limits.MaxQueued {
		if !w.waitRoomLocked(ctx) {
			return 0, false
		}
	}
	w.admitted += share
	return share, true
}

// ReleaseBulky returns what AdmitBulky gave.
func (w *Wire) ReleaseBulky(share int64) {
	if share == 0 {
		return
	}
	w.mu.Lock()
	w.admitted = max(w.admitted-share, 0)
	w.freedLocked()
	w.mu.Unlock()
}

// ReserveReply waits until a reply of n bytes to the agent request id fits
// in the budget (or nothing else is queued), then reserves it; the reply's
// frame must then be handed to Send. It reports false when ctx ended first:
// the caller then sends a short error instead.
func (w *Wire) ReserveReply(ctx context.Context, id string, n int64) bool {
	if w.limits.MaxQueued <= 0 {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.queued > 0 && w.queued+n > w.limits.MaxQueued {
		if !w.waitRoomLocked(ctx) {
			if ctx.Err() != nil {
				return false
			}
			return true // closed: Send fails the frame
		}
	}
	w.queued += n
	w.reserved[id] = append(w.reserved[id], n)
	return true
}

// awaitRoom blocks the reader while the queue is over budget, until the
// writer makes progress or the wire closes.
func (w *Wire) awaitRoom() {
	if w.limits.MaxQueued <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.queued >= w.limits.MaxQueued {
		if !w.waitRoomLocked(context.Background()) {
			return
		}
	}
}

// replyID returns the id of a response frame as jrpc2 writes it, or nil for
// any other frame (jrpc2's own requests carry a method after the id).
func replyID(frame []byte) []byte {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(frame, []byte(prefix)) {
		return nil
	}
	end := jsonscan.ValidValue(frame, len(prefix), 1)
	if end < 0 || bytes.HasPrefix(frame[end:], []byte(`,"method"`)) {
		return nil
	}
	return frame[len(prefix):end]
}

// Budget is a snapshot of the write budget, for tests and debugging.
type Budget struct {
	Queued       int64 // bytes queued or reserved and not yet written
	Admitted     int64 // bytes held by bulky handlers producing replies
	Reservations int   // replies reserved and not yet handed to Send
	Max          int64 // Limits.MaxQueued
	Share        int64 // what one bulky handler holds
	Waiting      bool  // something waits for room
}

// Budget returns the state of the write budget now.
func (w *Wire) Budget() Budget {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, rs := range w.reserved {
		n += len(rs)
	}
	return Budget{
		Queued: w.queued, Admitted: w.admitted, Reservations: n,
		Max: w.limits.MaxQueued, Share: max(w.limits.MaxQueued/bulkyShare, 1), Waiting: w.room != nil,
	}
}
