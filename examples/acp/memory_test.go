// memory_test.go tests what keeps the command's memory down on a long
// turn: no channel made per shown event, no text joined at a text-mode
// turn's end.
package main

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
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

// Ending a long turn in text mode joins none of its text: the messages
// were printed as they came, and only --json writes the folded state. The
// join was a copy as large as the turn's messages, made at the turn's end
// (600 kB of the 16.9 MB peak of the 100 000-chunk memrun turn). Bytes
// allocated, not times: the join is one allocation whatever its size.
func TestTurnEndTextModeJoinsNoText(t *testing.T) {
	const chunks, size = 256, 4 << 10 // a 1 MiB message, in several text blocks
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		text := strings.Repeat("x", size)
		for range chunks {
			t.SayID("m1", text)
		}
		return schema.StopReasonEndTurn, nil
	}}, nil)
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name    string
		json    bool
		atLeast bool // the join happens: the check's own control
	}{{"text", false, false}, {"json", true, true}} {
		turn, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		o := newOutput(&config{json: mode.json}, io.Discard, io.Discard)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		o.turnEnd(turn, nil)
		runtime.ReadMemStats(&after)
		o.stop()
		got := after.TotalAlloc - before.TotalAlloc
		if mode.atLeast && got < chunks*size {
			t.Errorf("%s: turnEnd allocated %d bytes, want the joined text's %d at least (the check measures nothing)", mode.name, got, chunks*size)
		}
		if !mode.atLeast && got >= chunks*size/8 {
			t.Errorf("%s: turnEnd allocated %d bytes for a %d-byte message, want far less: it joined the text", mode.name, got, chunks*size)
		}
	}
}
