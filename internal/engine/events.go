package engine

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// EventQueue runs callbacks one at a time, in order, on one goroutine, so
// the reader can hand work to user code without ever waiting for it. It is
// bounded: while a callback is slow, at most max callbacks (and maxBytes of
// what they carry) wait; the rest are dropped and counted, and the counts
// are reported once the queue has drained.
type EventQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    []event
	bytes    int64
	max      int
	maxBytes int64
	dropped  []int       // by kind
	report   func([]int) // on the queue's goroutine
	closed   bool
	done     chan struct{}
	gid      atomic.Uint64 // the id of the queue's goroutine
}

type event struct {
	f    func()
	size int64
}

// eventQueueBytes bounds what queued callbacks hold (notification params).
const eventQueueBytes = 64 << 20

// NewEventQueue starts a queue of at most max callbacks. Callbacks have
// kinds 0 to kinds-1, and report gets the count of dropped callbacks by
// kind.
func NewEventQueue(max, kinds int, report func(dropped []int)) *EventQueue {
	q := &EventQueue{done: make(chan struct{}), max: max, maxBytes: eventQueueBytes, report: report, dropped: make([]int, kinds)}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// Push queues f, of the given kind, holding size bytes. When the queue is
// full, f is dropped and counted. An empty queue always takes one callback,
// however large.
func (q *EventQueue) Push(kind int, size int64, f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if len(q.items) > 0 && (len(q.items) >= q.max || q.bytes+size > q.maxBytes) {
		q.dropped[kind]++
		return
	}
	q.items = append(q.items, event{f, size})
	q.bytes += size
	q.cond.Signal()
}

func (q *EventQueue) run() {
	defer close(q.done)
	q.gid.Store(goroutineID())
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			return
		}
		e := q.items[0]
		q.items[0] = event{}
		q.items = q.items[1:]
		if len(q.items) == 0 {
			q.items = nil // let a burst's backing array go
		}
		q.bytes -= e.size
		var dropped []int
		if len(q.items) == 0 && anyDropped(q.dropped) {
			dropped, q.dropped = q.dropped, make([]int, len(q.dropped))
		}
		q.mu.Unlock()

		runQuietly(e.f)
		if dropped != nil && q.report != nil {
			runQuietly(func() { q.report(dropped) })
		}
	}
}

func anyDropped(d []int) bool {
	for _, n := range d {
		if n > 0 {
			return true
		}
	}
	return false
}

// runQuietly keeps a panicking callback from taking the client down.
func runQuietly(f func()) {
	defer func() { _ = recover() }()
	f()
}

// Close lets the goroutine deliver what is queued and stop, and waits for
// that: when Close returns, every callback queued before it has run and the
// goroutine is gone. Called from a callback (one that closes the client),
// it cannot wait for the goroutine it runs on: it returns at once, and the
// goroutine delivers what is left and exits as soon as that callback
// returns.
func (q *EventQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
	if goroutineID() == q.gid.Load() {
		return
	}
	<-q.done
}

// goroutineID returns the id of the calling goroutine, from the first line
// of its stack trace ("goroutine 42 [running]:"). Go offers no other way to
// tell that Close was called from the queue's own goroutine; this is
// called once when the queue starts and once per Close, never per event.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
