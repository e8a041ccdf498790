package engine

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// Close waits for every callback queued before it, including one that is
// running right now on the queue's goroutine.
func TestEventQueueCloseWaitsForQueuedCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewEventQueue(10, 1, nil)
		entered, release := make(chan struct{}), make(chan struct{})
		var second atomic.Bool
		q.Push(0, 0, func() { close(entered); <-release })
		q.Push(0, 0, func() { second.Store(true) })
		<-entered
		closed := make(chan struct{})
		go func() { q.Close(); close(closed) }()
		synctest.Wait() // Close and the first callback are both blocked
		select {
		case <-closed:
			t.Fatal("Close returned while a queued callback had not run")
		default:
		}
		close(release)
		<-closed
		if !second.Load() {
			t.Error("Close returned before the second callback ran")
		}
	})
}

// Close called from a callback returns at once (it cannot wait for the
// goroutine it runs on); the queue still delivers what was queued.
func TestEventQueueCloseFromCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewEventQueue(10, 1, nil)
		var second atomic.Bool
		returned := make(chan struct{})
		q.Push(0, 0, func() { q.Close(); close(returned) })
		q.Push(0, 0, func() { second.Store(true) })
		<-returned
		<-q.done
		if !second.Load() {
			t.Error("the callback queued after the closing one was dropped")
		}
	})
}

// The queue bounds the bytes its callbacks hold, not only their count: past
// eventQueueBytes a callback is dropped and counted, except into an empty
// queue, which takes one callback however large (so a single huge
// notification is still delivered).
func TestEventQueueBoundsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dropped []int
		q := NewEventQueue(1000, 1, func(d []int) { dropped = d })
		entered, release := make(chan struct{}), make(chan struct{})
		q.Push(0, 0, func() { close(entered); <-release }) // holds the goroutine
		<-entered
		var ran atomic.Int64
		const size = eventQueueBytes / 4
		for range 6 { // 4 fit in the byte budget, 2 do not
			q.Push(0, size, func() { ran.Add(1) })
		}
		close(release)
		synctest.Wait()
		if got := ran.Load(); got != 4 {
			t.Errorf("%d callbacks of %d bytes ran, want 4 (the queue's budget is %d bytes)", got, size, eventQueueBytes)
		}
		if len(dropped) != 1 || dropped[0] != 2 {
			t.Errorf("dropped = %v, want [2]", dropped)
		}
		// An empty queue takes one callback larger than the whole budget.
		q.Push(0, 2*eventQueueBytes, func() { ran.Add(1) })
		synctest.Wait()
		if got := ran.Load(); got != 5 {
			t.Errorf("a callback over the budget into an empty queue did not run (ran %d)", got)
		}
		q.Close()
	})
}
