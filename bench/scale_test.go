// scale_test.go tests the order of the scale scenario's measurement.
package main

import (
	"sync"
	"sync/atomic"
	"testing"
)

// The peak is read when every turn has ended and before any is counted:
// counting replays a turn's log, which is the harness's allocation, not the
// agents', and must not run while other turns still do.
func TestMeasureTurnsCountsAfterThePeak(t *testing.T) {
	const n = 8
	var ended, counted atomic.Int32
	var mu sync.Mutex
	peakRead := false
	release := make(chan struct{})
	m := measureTurns(n, func(i int) int {
		if i == 0 {
			close(release) // the first turn lets the others end
		} else {
			<-release
		}
		ended.Add(1)
		return i + 1
	}, func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if got := ended.Load(); got != n {
			t.Errorf("peak read after %d of %d turns ended", got, n)
		}
		if counted.Load() != 0 {
			t.Error("peak read after a turn was counted")
		}
		peakRead = true
		return 42
	}, func(v int) int {
		mu.Lock()
		defer mu.Unlock()
		if !peakRead {
			t.Error("a turn was counted before the peak was read")
		}
		counted.Add(1)
		return v
	})
	if m.peakKB != 42 {
		t.Errorf("peakKB = %v, want 42", m.peakKB)
	}
	if want := n * (n + 1) / 2; m.total != want {
		t.Errorf("total = %d, want %d (every turn counted once)", m.total, want)
	}
	if m.after[0] < m.before[0] {
		t.Errorf("heap counters went backwards: %v then %v", m.before, m.after)
	}
}
