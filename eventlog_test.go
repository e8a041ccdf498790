package acp

import (
	"slices"
	"testing"
)

// The log keeps its numbering across chunks and drops from the front, and
// a batch a reader took before a drop still holds the events it had: the
// reader yields it outside the lock.
func TestEventLogDropFrontKeepsBatches(t *testing.T) {
	for _, growFirst := range []bool{false, true} {
		var l eventLog[*int]
		l.growFirst = growFirst
		const n = 3*logChunk + 10
		for i := 1; i <= n; i++ {
			l.append(&i)
		}
		first := l.from(logChunk + 5) // in the second chunk
		held := slices.Clone(first)
		for _, drop := range []int{3, logChunk + 2, logChunk - 1} {
			l.dropFront(drop)
		}
		if want := uint64(3 + logChunk + 2 + logChunk - 1); l.base != want {
			t.Fatalf("base %d, want %d", l.base, want)
		}
		for i, p := range first {
			if p != held[i] || *p != logChunk+5+i {
				t.Fatalf("growFirst %v: a held batch changed at %d", growFirst, i)
			}
		}
		if l.kept(l.base) || !l.kept(l.base+1) || l.len() != n-int(l.base) {
			t.Fatalf("kept/len wrong after drops: base %d len %d", l.base, l.len())
		}
		for seq := l.base + 1; seq <= l.seq; seq++ {
			if got := **l.at(seq); got != int(seq) {
				t.Fatalf("event %d holds %d", seq, got)
			}
			if b := l.from(seq); len(b) == 0 || *b[0] != int(seq) {
				t.Fatalf("batch from %d wrong", seq)
			}
		}
		// What was dropped is no longer retained by the log.
		for _, c := range l.chunks[:1] {
			for _, p := range c[:l.off] {
				if p != nil {
					t.Fatal("a dropped event is still referenced")
				}
			}
		}
	}
}

// Release waits for the readers that started; the numbering goes on.
func TestEventLogReleaseWaitsForReaders(t *testing.T) {
	var l eventLog[int]
	l.append(1)
	l.enter()
	if l.release() || l.released {
		t.Fatal("released under a reader")
	}
	l.append(2)
	if !l.kept(2) {
		t.Fatal("an event appended while the release waits was lost")
	}
	if !l.leave() || !l.released || l.from(1) != nil {
		t.Fatal("the last reader's leave did not release the log")
	}
	l.append(3)
	if l.seq != 3 || l.len() != 0 {
		t.Fatalf("released log: seq %d len %d", l.seq, l.len())
	}
}
