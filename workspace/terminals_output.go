package workspace

import (
	"strings"
	"unicode/utf8"
)

// tailBuffer keeps the last limit bytes written to it in a ring that never
// holds more than limit bytes: memory stays bounded however fast a command
// writes, and no write copies the retained bytes around.
type tailBuffer struct {
	limit     int
	ring      []byte // grows up to limit, then is overwritten in place
	head      int    // once the ring is full, the index of its oldest byte
	truncated bool   // some output was dropped
}

// Write appends p, dropping the oldest bytes past the limit.
func (b *tailBuffer) Write(p []byte) {
	if len(p) > b.limit {
		// Only p's tail can survive; skip straight to it.
		p = p[len(p)-b.limit:]
		b.truncated = true
	}
	for len(p) > 0 {
		if n := len(b.ring); n < b.limit {
			k := min(len(p), b.limit-n)
			if n+k > cap(b.ring) {
				// Grow by doubling but never past the limit, so a short
				// output costs little and a long one exactly limit bytes.
				grown := make([]byte, n, min(b.limit, max(2*cap(b.ring), n+k, 4096)))
				copy(grown, b.ring)
				b.ring = grown
			}
			b.ring = append(b.ring, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(b.ring[b.head:], p)
		b.head = (b.head + k) % b.limit
		p = p[k:]
		b.truncated = true
	}
}

// String returns the retained output, oldest byte first. Once anything was
// dropped it begins at a character start: leading continuation bytes belong
// to a character whose first byte is gone. At most three are skipped, so
// output that is not UTF-8 at all cannot make everything drop. When partial
// is false, an incomplete character at the end (whose remaining bytes have
// not been read yet) is held back too.
func (b *tailBuffer) String(partial bool) string {
	older, newer := b.ring[b.head:], b.ring[:b.head]
	skip := 0
	if b.truncated {
		for skip < utf8.UTFMax-1 && skip < len(b.ring) && !utf8.RuneStart(b.at(skip)) {
			skip++
		}
	}
	end := len(b.ring)
	if !partial {
		end = skip + partialTail(b, skip)
	}
	var s strings.Builder
	s.Grow(end - skip)
	for i, part := range [][]byte{older, newer} {
		lo, hi := 0, len(part)
		if i == 1 {
			lo, hi = lo+len(older), hi+len(older)
		}
		// Intersect [lo, hi) with [skip, end) in ring order.
		from, to := max(lo, skip), min(hi, end)
		if from < to {
			s.Write(part[from-lo : to-lo])
		}
	}
	return s.String()
}

// at returns the i-th retained byte, oldest first.
func (b *tailBuffer) at(i int) byte {
	return b.ring[(b.head+i)%len(b.ring)]
}

// partialTail returns how many of the retained bytes from start on remain
// once an incomplete UTF-8 sequence at the end is dropped.
func partialTail(b *tailBuffer, start int) int {
	n := len(b.ring) - start
	var last [utf8.UTFMax]byte
	k := min(n, utf8.UTFMax)
	for i := range k {
		last[i] = b.at(start + n - k + i)
	}
	return n - k + len(trimPartialRune(last[:k]))
}
