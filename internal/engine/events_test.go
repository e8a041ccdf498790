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
