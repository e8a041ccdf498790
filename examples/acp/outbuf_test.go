// outbuf_test.go checks liveWriter: deferred output keeps its order
// against every other write to stdout and stderr, and goes out by itself.
package main

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder records writes, in order, to any of the streams sharing it.
type recorder struct {
	mu     sync.Mutex
	writes []string
	wrote  chan struct{} // gets a value per write, when not nil
}

type stream struct {
	r    *recorder
	name string
}

func (s stream) Write(p []byte) (int, error) {
	s.r.mu.Lock()
	s.r.writes = append(s.r.writes, s.name+":"+string(p))
	s.r.mu.Unlock()
	if s.r.wrote != nil {
		s.r.wrote <- struct{}{}
	}
	return len(p), nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

// TestLiveWriterKeepsOrder: what the renderer deferred goes out, as one
// write, before any later write to stdout or stderr, and Stop leaves
// nothing behind.
func TestLiveWriterKeepsOrder(t *testing.T) {
	r := &recorder{}
	live := newLiveWriter(stream{r, "out"})
	live.delay = time.Hour // only the writes below flush
	stderr := beforeWriter{stream{r, "err"}, live}

	live.deferString("a")
	live.later.Write([]byte("b"))
	if got := r.got(); len(got) != 0 {
		t.Fatalf("deferred output was written at once: %q", got)
	}
	stderr.Write([]byte("note\n"))
	live.deferString("c")
	live.Write([]byte("prompt> "))
	live.deferString("d")
	if err := live.Stop(); err != nil {
		t.Fatal(err)
	}
	want := []string{"out:ab", "err:note\n", "out:c", "out:prompt> ", "out:d"}
	if got := r.got(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("writes %q, want %q", got, want)
	}
	if live.armed {
		t.Fatal("Stop left the timer armed")
	}
}

// TestLiveWriterFlushesItself: deferred output reaches stdout with no
// other write (the stream's last chunk, a person watching), through the
// timer, which is armed again by the next deferred write.
func TestLiveWriterFlushesItself(t *testing.T) {
	r := &recorder{wrote: make(chan struct{}, 4)}
	live := newLiveWriter(stream{r, "out"})
	defer live.Stop()
	for i, s := range []string{"first", "second"} {
		live.deferString(s)
		<-r.wrote // the timer's write; the test times out without it
		if got := r.got(); len(got) != i+1 || got[i] != "out:"+s {
			t.Fatalf("writes %q after deferring %q", got, s)
		}
	}
}

// TestLiveWriterBoundsWhatItDefers: a burst goes out in writes of at most
// about liveMax bytes, without waiting for the timer.
func TestLiveWriterBoundsWhatItDefers(t *testing.T) {
	r := &recorder{}
	live := newLiveWriter(stream{r, "out"})
	live.delay = time.Hour
	chunk := strings.Repeat("x", 1000)
	for range liveMax / len(chunk) {
		live.deferString(chunk)
	}
	if got := r.got(); len(got) != 0 {
		t.Fatalf("%d writes below liveMax", len(got))
	}
	live.deferString(chunk) // now at liveMax or over it
	got := r.got()
	if len(got) != 1 || len(got[0]) != len("out:")+(liveMax/len(chunk)+1)*len(chunk) {
		t.Fatalf("writes after passing liveMax: %d", len(got))
	}
	if len(live.buf) != 0 {
		t.Fatalf("%d bytes still deferred", len(live.buf))
	}
	live.Stop()
}

// TestIsTerminalSeesThroughWriters: the wrappers do not hide a terminal
// (the line editor, the spinner and the download bar ask). isTerminal
// takes any character device for one, so /dev/null stands in for a tty.
func TestIsTerminalSeesThroughWriters(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !isTerminal(f) {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	live := newLiveWriter(f)
	if !isTerminal(live) || !isTerminal(beforeWriter{f, live}) {
		t.Fatal("a terminal under liveWriter or beforeWriter is not seen as one")
	}
	if r := newLiveWriter(stream{&recorder{}, "out"}); isTerminal(r) || isTerminal(beforeWriter{r, r}) {
		t.Fatal("a recorder under the wrappers is taken for a terminal")
	}
}
