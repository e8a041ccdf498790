// memory_test.go tests what keeps the command's memory down on a long
// turn: no channel made per shown event.
package main

import (
	"io"
	"testing"
)

// Showing an event while no permission dialog waits makes nothing: a turn
// of 100 000 chunks used to make (and close) a channel for each.
func TestAdvanceWithoutWaiterAllocatesNothing(t *testing.T) {
	o := newOutput(&config{}, io.Discard, io.Discard)
	seq := uint64(0)
	o.advanceLocked(nil, seq) // the map's entry exists from here on
	if n := testing.AllocsPerRun(100, func() {
		seq++
		o.mu.Lock()
		o.advanceLocked(nil, seq)
		o.mu.Unlock()
	}); n != 0 {
		t.Fatalf("advanceLocked allocates %v times with no waiter, want 0", n)
	}
}

// A waiter's channel is closed by the next advance, and the next waiter
// gets a fresh one that stays open until the advance after.
func TestAdvanceWakesWaiter(t *testing.T) {
	o := newOutput(&config{}, io.Discard, io.Discard)
	o.mu.Lock()
	first := o.progressLocked()
	if again := o.progressLocked(); again != first {
		t.Fatal("two waiters before an advance got different channels")
	}
	o.advanceLocked(nil, 1)
	second := o.progressLocked()
	o.mu.Unlock()
	select {
	case <-first:
	default:
		t.Fatal("the waiter's channel is still open after an advance")
	}
	select {
	case <-second:
		t.Fatal("the channel taken after the advance is already closed")
	default:
	}
	o.mu.Lock()
	o.advanceLocked(nil, 2)
	o.mu.Unlock()
	select {
	case <-second:
	default:
		t.Fatal("the second waiter's channel is still open after the next advance")
	}
}
