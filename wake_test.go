package acp

// wake_test.go tests the reader's coalesced wake-ups (wake.go, notifier).

import (
	"context"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
)

// countingReader counts the reads of the agent's output that returned
// bytes; closing it closes the pipe, as the client does to end its
// connection.
//
// A read counts when it returns, not when it starts: the reader is always
// blocked in a read before the test writes, and counting that read at its
// start would put it before the test's first sample and leave the chunks
// it returns uncounted (5 reads seen, 6 wake-ups owed).
type countingReader struct {
	r     io.ReadCloser
	reads atomic.Int64
}

func (r *countingReader) Close() error { return r.r.Close() }

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.reads.Add(1)
	}
	return n, err
}

// startCountedTurn starts a turn on a raw agent whose output's reads are
// counted.
func startCountedTurn(t *testing.T) (*rawAgent, *countingReader, *Turn, rawMsg) {
	t.Helper()
	a, st := rawPipes(t)
	cr := &countingReader{r: st.Reader.(io.ReadCloser)}
	st.Reader = cr
	ch := make(chan *Client, 1)
	go func() {
		c, err := Connect(context.Background(), st, nil)
		if err != nil {
			t.Errorf("Connect: %v", err)
		}
		ch <- c
	}()
	a.reply(a.expect("initialize"), defaultInit)
	c := <-ch
	if c == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close() })
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	return a, cr, turn, a.expect("session/prompt")
}

func chunkLines(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"abcdef"}}}}` + "\n")
	}
	return b.String()
}

// A consumer that has caught up with the turn is woken once per read of the
// agent's output, not once per text chunk: the hook below waits again at
// once after each wake-up, as a consumer faster than the reader would, so
// with a wake-up per append it would count one per chunk. And it is woken
// before the reader waits for more: the stream pauses after the chunks, and
// Updates still yields every one.
func TestWakesPerRead(t *testing.T) {
	const n = 2000
	a, cr, turn, p := startCountedTurn(t)
	var wakes, sessionWakes atomic.Int64
	hook := func(nf *notifier) {
		switch nf {
		case &turn.updated:
			wakes.Add(1)
		case &turn.s.changed:
			sessionWakes.Add(1)
		default:
			return
		}
		nf.wait() // a consumer waiting again at once
	}
	turn.s.mu.Lock()
	turn.updated.wait() // consumers waiting for the first chunk
	turn.s.changed.wait()
	turn.s.mu.Unlock()
	notifierFired.Store(&hook)
	t.Cleanup(func() { notifierFired.Store(nil) })
	readsBefore := cr.reads.Load()

	a.write(chunkLines(n))
	got := 0
	for range turn.Updates() {
		if got++; got == n {
			break
		}
	}
	reads := cr.reads.Load() - readsBefore
	w, sw := wakes.Load(), sessionWakes.Load()
	t.Logf("%d chunks: %d reads, %d wake-ups of the turn's waiters, %d of the session's", n, reads, w, sw)
	if w < 1 || w > reads {
		t.Errorf("%d chunks in %d reads woke the turn's waiters %d times, want 1 to %d", n, reads, w, reads)
	}
	if sw < 1 || sw > reads {
		t.Errorf("%d chunks in %d reads woke the session's waiters (Changes) %d times, want 1 to %d", n, reads, sw, reads)
	}
	notifierFired.Store(nil)
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Each chunk of an agent that pauses after it reaches a consumer of
// Turn.Events before the next one is written: the owed wake-up is not held
// until more input comes.
func TestWakeBeforeReaderWaits(t *testing.T) {
	a, _, turn, p := startCountedTurn(t)
	// The deadline only ends a hung test: a chunk not delivered ends the
	// iteration, and the test fails.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next, stop := iter.Pull(turn.Events(ctx, 0))
	defer stop()
	for i := range 20 {
		a.write(chunkLines(1))
		for {
			ev, ok := next()
			if !ok {
				t.Fatalf("chunk %d never reached Events", i)
			}
			if _, isChunk := ev.Update.(*schema.AgentMessageChunk); isChunk {
				break
			}
		}
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
}
