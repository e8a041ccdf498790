package acp

import "unsafe"

// turnLog is a turn's event log: an eventLog of entries in which a chunk
// of plain text chunks is kept packed. Most of a long turn is text chunks
// of one message, each an entry of 16 bytes pointing into the message's
// text; a run of them that point into one block of one message, one after
// the other, differs only in the lengths, so it is kept as a textRun: the
// common word and a uint16 length each, about 2 bytes a chunk instead of
// 16. On the 100 000-chunk turn of bench/README.md the log was over half
// of what the acp command kept, and as garbage too it counted: the
// collector's goal does not fall below 4 MB, so the 4 KiB chunks a turn
// went through set the heap's peak whether or not they were kept.
//
// A chunk whose first entry is a plain text chunk starts as a run, and
// stays one while each entry continues it; the first that does not turns
// the chunk into entries (the run made again as entries), which the rest
// of the chunk is appended to. Readers take batches with from, which makes
// a run's entries again in the reader's own scratch slice, under the
// owner's lock; an entries chunk's batch is a slice of it, as eventLog's
// is. Guarded by the owner's lock, as eventLog is. A turn's log never
// drops events from its front (only all at once, release), so chunk i
// holds events i*logChunk+1 onwards.
//
// append and from shadow eventLog's, which know nothing of runs: through
// a turnLog only these can be called.
type turnLog struct {
	eventLog[entry]
	// runs[i], when not nil, holds chunk i, and chunks[i] is nil.
	runs []*textRun
}

// textRun is a chunk of n plain text chunks of message m, in one block,
// each starting where the one before it ends.
type textRun struct {
	m *msgAcc
	// word is every entry's word without its length and offset: the
	// kinds, the _meta bit, the tag and the block.
	word uint64
	off  int // the first chunk's offset in its block
	end  int // where the next chunk's text must start to continue the run
	n    int
	lens [logChunk]uint16
	// marks[j] is where chunk j*runMark starts, from off: a reader
	// starting in the middle of a run (a live one wakes at every event)
	// adds up at most runMark-1 lengths, not k.
	marks [logChunk / runMark]uint32
}

const runMark = 16

// entryPlaceMask covers the length and offset of an entry's word, the
// only fields a run's entries do not share.
const entryPlaceMask = uint64(entryMaxLen)<<entryLenShift | uint64(entryMaxOff)<<entryOffShift

// append appends e as event seq+1. A released log only counts it.
func (l *turnLog) append(e entry) {
	l.seq++
	if l.released {
		return
	}
	n := len(l.chunks)
	if n > 0 {
		if r := l.run(n - 1); r != nil && r.n < logChunk {
			if r.extend(&e) {
				return
			}
			// The run ends inside its chunk: the chunk goes on as
			// entries. A reader's batch of the run was its own copy.
			l.chunks[n-1] = r.entries(0, make([]entry, 0, logChunk))
			l.runs[n-1] = nil
		}
	}
	if n == 0 || l.run(n-1) != nil || len(l.chunks[n-1]) == logChunk {
		l.chunks = append(l.chunks, nil)
		if r := newRun(&e); r != nil {
			for len(l.runs) <= n {
				l.runs = append(l.runs, nil)
			}
			l.runs[n] = r
			return
		}
		l.chunks[n] = make([]entry, 0, logChunk)
		n++
	}
	l.chunks[n-1] = append(l.chunks[n-1], e)
}

// run returns chunk i's run, or nil when it is entries.
func (l *turnLog) run(i int) *textRun {
	if i < len(l.runs) {
		return l.runs[i]
	}
	return nil
}

// newRun starts a run with e, or returns nil if e cannot start one.
func newRun(e *entry) *textRun {
	if e.tag() != tagText {
		return nil
	}
	p := e.pos()
	if p.n > 0xffff {
		return nil
	}
	r := &textRun{m: (*msgAcc)(e.p), word: e.x &^ entryPlaceMask, off: p.off, end: p.off + p.n, n: 1}
	r.lens[0] = uint16(p.n)
	return r
}

// extend appends e to the run if e continues it.
func (r *textRun) extend(e *entry) bool {
	p := e.pos()
	if e.p != unsafe.Pointer(r.m) || e.x&^entryPlaceMask != r.word || p.off != r.end || p.n > 0xffff {
		return false
	}
	if r.n%runMark == 0 {
		r.marks[r.n/runMark] = uint32(r.end - r.off)
	}
	r.lens[r.n] = uint16(p.n)
	r.n++
	r.end += p.n
	return true
}

// from returns what eventLog.from does: the events from n on that share
// n's chunk; a run's are made in *scratch, which the caller keeps for its
// next call and must not hold across it.
func (l *turnLog) from(n uint64, scratch *[]entry) []entry {
	if !l.kept(n) {
		return nil
	}
	i := int(n-1-l.base) + l.off
	ci, k := i/logChunk, i%logChunk
	if r := l.run(ci); r != nil {
		*scratch = r.entries(k, (*scratch)[:0])
		return *scratch
	}
	c := l.chunks[ci]
	return c[k:len(c):len(c)]
}

// entries appends the run's entries from the k-th on to out.
func (r *textRun) entries(k int, out []entry) []entry {
	j := k / runMark * runMark
	off := r.off + int(r.marks[k/runMark])
	for _, n := range r.lens[j:k] {
		off += int(n)
	}
	for _, n := range r.lens[k:r.n] {
		x := r.word | uint64(n)<<entryLenShift | uint64(off)<<entryOffShift
		out = append(out, entry{p: unsafe.Pointer(r.m), x: x})
		off += int(n)
	}
	return out
}

// dropRuns forgets the runs once the log is released.
func (l *turnLog) dropRuns() { l.runs = nil }
