package remote

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// The inbox queues at most inboxQueue bytes (plus the message being
// added) for a client that does not read: the stream waits, and so the
// transport stops reading the network.
func TestInboxBound(t *testing.T) {
	in := newInbox()
	msg := append(bytes.Repeat([]byte("x"), 1023), '\n')
	const n = 3 * inboxQueue / 1024
	done := make(chan error, 1)
	go func() {
		for range n {
			if err := in.put(msg); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	queued := func() int { in.mu.Lock(); defer in.mu.Unlock(); return len(in.buf) - in.r }
	for queued() < inboxQueue {
		runtime.Gosched()
	}
	select {
	case err := <-done:
		t.Fatalf("the producer finished (%v) with nobody reading", err)
	default:
	}
	if q := queued(); q > inboxQueue+len(msg) {
		t.Fatalf("%d bytes queued, bound %d", q, inboxQueue+len(msg))
	}
	// What is retained is one burst buffer: a full queue and one write,
	// never a buffer grown past it.
	in.mu.Lock()
	if c := cap(in.buf); c > inboxBurst {
		t.Errorf("a full inbox retains %d bytes, bound %d", c, inboxBurst)
	}
	in.mu.Unlock()
	got, err := io.ReadAll(io.LimitReader(in, int64(n*len(msg))))
	if err != nil || len(got) != n*len(msg) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Read empty, it keeps nothing of the burst (the buffer went back to
	// the pool).
	in.mu.Lock()
	if c := cap(in.buf); c > inboxKeep {
		t.Errorf("an emptied inbox retains %d bytes, bound %d", c, inboxKeep)
	}
	in.mu.Unlock()
	// fail: what was queued is read first, then the error.
	in.put(msg)
	in.fail(io.ErrUnexpectedEOF)
	if b, err := io.ReadAll(in); err != io.ErrUnexpectedEOF || len(b) != len(msg) {
		t.Fatalf("after fail: %d bytes, %v", len(b), err)
	}
	// close: a blocked writer returns.
	in2 := newInbox()
	go func() {
		for {
			if in2.put(msg) != nil {
				done <- nil
				return
			}
		}
	}()
	for func() int { in2.mu.Lock(); defer in2.mu.Unlock(); return len(in2.buf) }() < inboxQueue {
		runtime.Gosched()
	}
	in2.close()
	<-done
}
