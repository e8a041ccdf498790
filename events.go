package acp

import "sync"

// eventQueue runs callbacks one at a time, in order, on one goroutine, so
// the reader can hand work to user code without ever waiting for it. It is
// bounded: while a callback is slow, at most max callbacks (and maxBytes of
// what they carry) wait; the rest are dropped and counted, and the counts
// are reported once the queue has drained.
type eventQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    []event
	bytes    int64
	max      int
	maxBytes int64
	dropped  [eventKinds]int
	report   func([eventKinds]int) // on the queue's goroutine
	running  bool                  // a callback is running now
	closed   bool
	done     chan struct{}
}

type event struct {
	f    func()
	size int64
}

// What a queued callback delivers, for the count of dropped ones.
const (
	eventDiagnostic = iota
	eventExtNotification
	eventElicitation
	eventKinds
)

var eventKindNames = [eventKinds]string{"diagnostics", "extension notifications", "elicitation/complete notifications"}

// eventQueueBytes bounds what queued callbacks hold (notification params).
const eventQueueBytes = 64 << 20

func newEventQueue(max int, report func([eventKinds]int)) *eventQueue {
	q := &eventQueue{done: make(chan struct{}), max: max, maxBytes: eventQueueBytes, report: report}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// push queues f, of the given kind, holding size bytes. When the queue is
// full, f is dropped and counted. An empty queue always takes one callback,
// however large.
func (q *eventQueue) push(kind int, size int64, f func()) {
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

func (q *eventQueue) run() {
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
		var dropped [eventKinds]int
		if len(q.items) == 0 {
			dropped, q.dropped = q.dropped, [eventKinds]int{}
		}
		q.running = true
		q.mu.Unlock()

		runQuietly(e.f)
		if dropped != ([eventKinds]int{}) && q.report != nil {
			runQuietly(func() { q.report(dropped) })
		}

		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}
}

// runQuietly keeps a panicking callback from taking the client down.
func runQuietly(f func()) {
	defer func() { _ = recover() }()
	f()
}

// close lets the goroutine deliver what is queued and stop. It waits for
// that, unless a callback is running right now: it may be the caller (a
// callback that closes the client), and waiting for it would never end.
// The goroutine then exits as soon as that callback and the queued ones
// have returned.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	running := q.running
	q.mu.Unlock()
	if !running {
		<-q.done
	}
}
