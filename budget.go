package acp

// byteBudget counts what a turn's updates, or a session's updates outside
// turns, were charged against Limits.MaxTurnBytes: what they retain, or
// their notification's length if more (see cost.go). It only counts; what
// crossing the limit does is the caller's (Session.chargeLocked): a turn
// is cancelled at the limit and stops growing past twice it, the time
// outside turns stops growing at the limit. Guarded by s.mu.
type byteBudget struct {
	charged int64
	// kept is the part of charged that was folded: what a turn keeps, as
	// Limits.MaxEndedTurnBytes counts it once it has ended.
	kept int64
	// crossed is set once charged went over the limit.
	crossed bool
	// dropped counts what was not folded past the limit.
	dropped int
}

// charge counts size bytes against limit and reports whether that crossed
// it, the first time only.
func (b *byteBudget) charge(size, limit int64) (crossed bool) {
	b.charged += size
	if b.charged > limit && !b.crossed {
		b.crossed = true
		return true
	}
	return false
}

// pastTwice reports whether charged is over twice limit.
func (b *byteBudget) pastTwice(limit int64) bool {
	// Not charged > 2*limit: that overflows for a limit near MaxInt64.
	return b.charged-limit > limit
}

// keep records that what was charged as size is folded, and kept.
func (b *byteBudget) keep(size int64) { b.kept += size }

// drop counts one more update dropped and returns the count.
func (b *byteBudget) drop() int {
	b.dropped++
	return b.dropped
}
