package acp

import "sync/atomic"

// eventLog is the numbered log of a turn's or a session's events: event n
// (from 1) is the n-th appended. Readers (Turn.Events, Turn.Updates,
// Session.Events) take batches from it under the owner's lock and yield
// them after releasing it, each at its own pace, so the reader goroutine
// that appends never waits for one. The owner's lock (s.mu) guards it.
//
// The log can lose its events two ways, which the owner chooses: from the
// front, dropFront (the session keeps its latest Limits.SessionLog), or
// all at once, release (a turn's log once it has ended, Limits.TurnLogs),
// which waits for the readers that started: a reader never loses an event
// under it. Either way the numbering goes on: seq counts every event
// appended, kept or not.
//
// Events are stored in chunks of logChunk, so appending never copies the
// log whatever its length and finding event n is O(1).
type eventLog[E any] struct {
	chunks [][]E
	// off is the place of event base+1 in chunks[0]: dropFront drops
	// whole chunks only, and zeroes what it drops of the first.
	off int
	// base counts the events dropped from the front: chunks hold events
	// base+1 through seq, unless released.
	base uint64
	seq  uint64
	// growFirst: the first chunk grows as appended instead of being made
	// whole. A session logs a handful of events, most sessions never
	// fill a chunk of their large entries; a turn logs hundreds of small
	// ones, and one allocation beats nine.
	growFirst bool

	readers        int  // iterators reading the log
	releasePending bool // release when the last reader stops
	released       bool
}

// append logs e as event seq+1. A released log only counts it.
func (l *eventLog[E]) append(e E) {
	l.seq++
	if l.released {
		return
	}
	n := len(l.chunks)
	if n == 0 || len(l.chunks[n-1]) == logChunk {
		var c []E
		if n > 0 || !l.growFirst {
			c = make([]E, 0, logChunk)
		}
		l.chunks = append(l.chunks, c)
		n++
	}
	l.chunks[n-1] = append(l.chunks[n-1], e)
}

// kept reports whether event n is still in the log.
func (l *eventLog[E]) kept(n uint64) bool {
	return !l.released && n > l.base && n <= l.seq
}

// at returns event n, which the log keeps.
func (l *eventLog[E]) at(n uint64) *E {
	i := int(n-1-l.base) + l.off
	return &l.chunks[i/logChunk][i%logChunk]
}

// from returns the events from n on that share n's chunk, capped so that
// a reader's batch never sees later appends; nil when the log does not
// keep event n.
func (l *eventLog[E]) from(n uint64) []E {
	if !l.kept(n) {
		return nil
	}
	i := int(n-1-l.base) + l.off
	c := l.chunks[i/logChunk]
	return c[i%logChunk : len(c) : len(c)]
}

// len returns how many events the log keeps.
func (l *eventLog[E]) len() int {
	if l.released {
		return 0
	}
	return int(l.seq - l.base)
}

// dropFront drops the oldest n events the log keeps (n < l.len()), so
// that the log no longer retains what they point to. Whole chunks go; the
// rest of the first is copied, not cleared in place: a reader may be
// yielding a batch of it outside the lock.
func (l *eventLog[E]) dropFront(n int) {
	l.base += uint64(n)
	n += l.off
	l.off = 0
	for n >= logChunk {
		l.chunks[0] = nil
		l.chunks = l.chunks[1:]
		n -= logChunk
	}
	if n > 0 {
		c := l.chunks[0]
		kept := make([]E, len(c), cap(c))
		copy(kept[n:], c[n:])
		l.chunks[0] = kept
		l.off = n
	}
}

// release drops every event, now or, while iterators read the log, when
// the last one stops (leave then reports it); it reports whether it did
// it now.
func (l *eventLog[E]) release() bool {
	if l.released {
		return false
	}
	if l.readers > 0 {
		l.releasePending = true
		return false
	}
	l.released = true
	l.chunks, l.off = nil, 0
	return true
}

// enter and leave bracket an iterator's reading of the log; leave reports
// whether it released the log, for the owner to drop what goes with it.
func (l *eventLog[E]) enter() { l.readers++ }

func (l *eventLog[E]) leave() bool {
	l.readers--
	if l.readers == 0 && l.releasePending {
		l.releasePending = false
		return l.release()
	}
	return false
}

// notifier wakes the goroutines waiting for the next change: each takes the
// channel under the owner's lock and waits on it after releasing it. The
// zero value is ready; a channel is made only when someone waits.
//
// The reader goroutine holds a notifier while it logs a plain text chunk
// (Client.applyPlainText): a fire then is owed, not done, and the reader
// fires what it owes once it has dispatched every line of its read
// (Client.onDrained, wake.go). A consumer that caught up and waits is woken
// once a read's worth of chunks, not once a chunk, and, the agent pausing,
// before the reader waits for more. Any fire outside a hold is done at once
// and pays what is owed. The owner's lock guards every field.
type notifier struct {
	ch chan struct{}
	// held: a fire now is owed (hold, unhold). owed: a fire came while
	// held, and none was done since. queued: the notifier is on the
	// reader's list of owed fires (readerWakes), which will flush it.
	held, owed, queued bool
}

// notifierFired, if set (by tests), runs at each fire that wakes someone,
// under the owner's lock.
var notifierFired atomic.Pointer[func(*notifier)]

// wait returns a channel closed at the next fire.
func (s *notifier) wait() chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *notifier) fire() {
	if s.ch == nil {
		return // nobody waits: a later wait sees the change under the lock
	}
	if s.held {
		s.owed = true
		return
	}
	close(s.ch)
	s.ch, s.owed = nil, false
	if f := notifierFired.Load(); f != nil {
		(*f)(s)
	}
}

// hold defers the fires until unhold.
func (s *notifier) hold() { s.held = true }

// unhold ends a hold and reports whether the caller must put the notifier
// on the reader's list: a fire is owed and it is not there yet.
func (s *notifier) unhold() bool {
	s.held = false
	if s.owed && !s.queued {
		s.queued = true
		return true
	}
	return false
}

// flush does the fire owed, if no other fire did it since; the reader's
// list calls it.
func (s *notifier) flush() {
	s.queued = false
	if s.owed {
		s.fire()
	}
}
