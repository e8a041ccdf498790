package engine

import "sync"

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
	running  bool        // a callback is running now
	closed   bool
	done     chan struct{}
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
		q.running = true
		q.mu.Unlock()

		runQuietly(e.f)
		if dropped != nil && q.report != nil {
			runQuietly(func() { q.report(dropped) })
		}

		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
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

// Close lets the goroutine deliver what is queued and stop. It waits for
// that, unless a callback is running right now: it may be the caller (a
// callback that closes the client), and waiting for it would never end.
// The goroutine then exits as soon as that callback and the queued ones
// have returned.
func (q *EventQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	running := q.running
	q.mu.Unlock()
	if !running {
		<-q.done
	}
}
