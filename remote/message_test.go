package remote

import (
	"io"
	"testing"
)

// lineSource yields "data: " and then n bytes of 'x' and the event's end,
// calling observe before each read: readSSE reads it on the calling
// goroutine, so observe may look at the message between two reads.
type lineSource struct {
	head    string
	n       int
	tail    string
	observe func()
}

func (s *lineSource) Read(p []byte) (int, error) {
	s.observe()
	switch {
	case s.head != "":
		k := copy(p, s.head)
		s.head = s.head[k:]
		return k, nil
	case s.n > 0:
		k := min(len(p), s.n)
		for i := range p[:k] {
			p[i] = 'x'
		}
		s.n -= k
		return k, nil
	case s.tail != "":
		k := copy(p, s.tail)
		s.tail = s.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// Row 7c, counted rather than sampled: while one 300 MiB data: line
// passes, the message's buffer never has more capacity than
// MaxMessageBytes, the buffers of one growth step (old and new, live
// together while one is copied) never add up to 2 × MaxMessageBytes, and
// the inbox's buffer, seen between reads, stays within its queue bound and
// two parts. (Main before the budget commit: 1.23× and 2.21×.)
func TestMessageHoldsAtMostMax(t *testing.T) {
	const limit, size = 8 << 20, 300 << 20
	in := newInbox()
	done := make(chan struct{})
	go func() { // the client: reads and drops
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			if _, err := in.Read(buf); err != nil {
				return
			}
		}
	}()
	m := &message{in: in, max: limit, empty: true}
	var maxCap, maxStep, maxInbox, last int
	src := &lineSource{head: "data: ", n: size, tail: "\n\n", observe: func() {
		c := cap(m.buf)
		maxCap = max(maxCap, c)
		if c != last && last != 0 && c != 0 {
			maxStep = max(maxStep, last+c)
		}
		if c != 0 {
			last = c
		}
		in.mu.Lock()
		maxInbox = max(maxInbox, cap(in.buf))
		in.mu.Unlock()
	}}
	if err := readSSE(src, m, nil); err != nil {
		t.Fatal(err)
	}
	in.fail(io.EOF)
	<-done
	t.Logf("a %d MiB line, MaxMessageBytes %d MiB: buffer capacity at most %.2f×, a growth step's two buffers %.2f×, the inbox's buffer %d KiB",
		size>>20, limit>>20, float64(maxCap)/limit, float64(maxStep)/limit, maxInbox>>10)
	if maxCap > limit {
		t.Errorf("the buffer grew to %d bytes, past MaxMessageBytes (%d)", maxCap, limit)
	}
	if maxStep >= 2*limit {
		t.Errorf("a growth step held %d bytes in two buffers, 2 × MaxMessageBytes or more", maxStep)
	}
	if maxInbox > 2*inboxQueue+2*(64<<10) {
		t.Errorf("the inbox's buffer reached %d KiB: it held a copy of the message", maxInbox>>10)
	}
}
