package acp

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// A turn's log gives back, from every event on, exactly the entries it
// was given, whichever of its chunks it packed; and it packs the chunks
// that are one message's text chunks one after the other in one block,
// and only those.
func TestTurnLogReadsBackWhatItPacked(t *testing.T) {
	var (
		l    turnLog
		want []entry
		m    = &msgAcc{}
		m2   = &msgAcc{}
	)
	var scratch []entry
	// add appends e and checks what a reader of the last chunk, from its
	// first event, gets now: a run read while it grows, or just after it
	// became entries.
	add := func(e entry) {
		l.append(e)
		want = append(want, e)
		first := uint64(len(want)-1)/logChunk*logChunk + 1
		got := l.from(first, &scratch)
		if len(got) != len(want)-int(first)+1 || got[len(got)-1] != e {
			t.Fatalf("after event %d, read(%d) gives %d entries, not the chunk so far", len(want), first, len(got))
		}
	}
	text := func(m *msgAcc, s string, meta bool) {
		e, ok := textEntry(textMessage, m, m.addText(nil, s))
		if !ok {
			t.Fatalf("textEntry(%d bytes) at %d bytes of text does not fit", len(s), m.size)
		}
		if meta {
			e.x |= entryMetaBit
		}
		add(e)
	}
	other := func() {
		add(newEntry(entAgent, schema.AgentMessageText("", "boxed"), nil))
	}
	for i := range logChunk { // chunk 0: packs
		text(m, "w"+strconv.Itoa(i)+" ", false)
	}
	for i := range logChunk { // chunk 1: an update in the middle
		if i == 100 {
			other()
			continue
		}
		text(m, "x", false)
	}
	for i := range logChunk { // chunk 2: two messages
		text([]*msgAcc{m, m2}[i%2], "y", false)
	}
	for range logChunk { // chunk 3: every notification had its _meta: packs
		text(m, "z", true)
	}
	for i := range logChunk { // chunk 4: one of them had
		text(m, "z", i == 7)
	}
	for range logChunk { // chunk 5: 256 KiB of text, across blocks
		text(m, strings.Repeat("b", 1<<10), false)
	}
	for range logChunk / 2 { // chunk 6, not full: a run still
		text(m, "tail", false)
	}
	other() // chunk 6 becomes entries, read back as the run was
	for range logChunk / 2 {
		text(m, "tail", false)
	}
	other() // chunk 7 starts with an update: entries
	for len(want)%logChunk != 0 {
		text(m, "end", false)
	}
	// chunk 8 starts with a chunk too long for a run's uint16 length (a
	// block of its own): entries, as is the chunk after it in the next.
	text(m, strings.Repeat("L", 70_000), false)
	text(m, "after", false)

	packed := map[int]bool{}
	for i, r := range l.runs {
		if r != nil {
			packed[i] = true
			if l.chunks[i] != nil {
				t.Errorf("chunk %d is packed and still kept", i)
			}
		}
	}
	if !packed[0] || !packed[3] || len(packed) != 2 || l.run(8) != nil || len(l.chunks[8]) != 2 {
		t.Errorf("packed chunks %v, want 0 and 3", packed)
	}
	for n := uint64(1); n <= uint64(len(want)); n++ {
		got := l.from(n, &scratch)
		end := min((int(n-1)/logChunk+1)*logChunk, len(want))
		exp := want[n-1 : end]
		if len(got) != len(exp) {
			t.Fatalf("read(%d): %d entries, want %d", n, len(got), len(exp))
		}
		for k := range got {
			if got[k] != exp[k] {
				t.Fatalf("read(%d)[%d] = %+v, want %+v", n, k, got[k], exp[k])
			}
		}
		if e := &got[0]; e.tag() == tagText && (*msgAcc)(e.p).slice(e.pos()) != (*msgAcc)(exp[0].p).slice(exp[0].pos()) {
			t.Fatalf("read(%d): the first chunk's text differs", n)
		}
	}
	if got := l.from(uint64(len(want))+1, &scratch); got != nil {
		t.Errorf("read past the end: %d entries", len(got))
	}
	if !l.release() {
		t.Fatal("release with no reader did not release")
	}
	l.dropRuns()
	if got := l.from(1, &scratch); got != nil || l.runs != nil {
		t.Errorf("after release: read(1) gave %d entries, %d runs kept", len(got), len(l.runs))
	}
}

// A long turn's text chunks cost the log a few bytes each, not 16: what
// the client keeps of a 50 000-chunk message, less its text, stays under
// 8 bytes a chunk (it was 16 and more before the log packed its chunks).
// Its events still give every chunk, in order.
func TestLongTurnLogKeepsLittle(t *testing.T) {
	const chunks = 50_000
	var wire []byte
	textBytes := 0
	for i := range chunks {
		s := "tok" + strconv.Itoa(i) + " "
		textBytes += len(s)
		wire = append(wire, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+s+`"}}}}`+"\n"...)
	}
	c, s, a := startPipeAgent(t)
	a.answer(wire)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // as after the turn, below
	runtime.ReadMemStats(&before)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	// The read buffers the burst took from the engine's pools (256 KiB for
	// a reader far behind) are the process's, not the turn's: a call
	// answered after the turn has the reader past its burst, its buffers
	// back in their pools, and a sync.Pool lets go of what it holds over
	// two collections.
	if err := c.Call(context.Background(), "_test/sync", struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(textBytes)
	t.Logf("%d chunks, %d bytes of text: %d bytes kept beside the text (%.1f a chunk)", chunks, textBytes, kept, float64(kept)/chunks)
	if kept > 8*chunks {
		t.Errorf("the turn keeps %d bytes beside its text, %.1f a chunk; want at most 8", kept, float64(kept)/chunks)
	}

	var b strings.Builder
	var n int
	for ev := range turn.Events(context.Background(), 0) {
		if c, ok := ev.Update.(*schema.AgentMessageChunk); ok {
			if tc, ok := c.Content.(*schema.TextContent); ok {
				if want := "tok" + strconv.Itoa(n) + " "; tc.Text != want {
					t.Fatalf("event %d: chunk %q, want %q", ev.Seq, tc.Text, want)
				}
				b.WriteString(tc.Text)
				n++
			}
		}
	}
	if n != chunks || b.Len() != textBytes {
		t.Fatalf("Events gave %d chunks, %d bytes; want %d, %d", n, b.Len(), chunks, textBytes)
	}
	n = 0
	for range turn.Updates() {
		n++
	}
	if n != chunks {
		t.Fatalf("Updates gave %d updates, want %d", n, chunks)
	}
	if st := turn.State(); len(st.Messages) != 1 || len(st.Messages[0].Text) != textBytes {
		t.Fatalf("state: %d messages, want one of %d bytes", len(st.Messages), textBytes)
	}
}

// Every chunk of a long message fits an entry: the first text block grows
// to 64 KiB and no further, so no offset in it needs more than the
// entry's 16 bits (append's growth took it past 64 KiB, and the chunks
// after that point kept their whole update).
func TestMessageTextOffsetsFit(t *testing.T) {
	m := &msgAcc{}
	for i := range 30_000 {
		p := m.addText(nil, "chunk "+strconv.Itoa(i%1000))
		if _, ok := textEntry(textMessage, m, p); !ok {
			t.Fatalf("chunk %d at %+v does not fit an entry", i, p)
		}
	}
	for i, b := range m.blocks {
		if cap(b) > textBlock {
			t.Errorf("block %d: capacity %d, over %d", i, cap(b), textBlock)
		}
	}
}

// Readers that range over a turn while its runs grow (I1, I4): Events,
// EventsReused and Updates, started as the turn starts, each see every
// chunk once and in order, whether it read them from a run as it grew,
// from a run turned into entries (the chunks of two messages alternate
// in stretches) or from entries.
func TestTurnLogLiveReaders(t *testing.T) {
	const chunks = 20_000
	var wire []byte
	for i := range chunks {
		id := "m" + strconv.Itoa(i/700%2) // stretches of one message, then the other
		wire = append(wire, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"`+id+`","content":{"type":"text","text":"c`+strconv.Itoa(i)+` "}}}}`+"\n"...)
	}
	_, s, a := startPipeAgent(t)
	a.answer(wire)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	text := func(u schema.Update) string {
		if c, ok := u.(*schema.AgentMessageChunk); ok {
			if tc, ok := c.Content.(*schema.TextContent); ok {
				return tc.Text
			}
		}
		return ""
	}
	readers := map[string]func(yield func(string)){
		"Events": func(yield func(string)) {
			for ev := range turn.Events(context.Background(), 0) {
				yield(text(ev.Update))
			}
		},
		"EventsReused": func(yield func(string)) {
			for ev := range turn.EventsReused(context.Background(), 0) {
				yield(text(ev.Update))
			}
		},
		"Updates": func(yield func(string)) {
			for u := range turn.Updates() {
				yield(text(u))
			}
		},
	}
	errs := make(chan error, len(readers))
	for name, read := range readers {
		go func() {
			n := 0
			var bad error
			read(func(s string) {
				if s == "" || bad != nil {
					return
				}
				if want := "c" + strconv.Itoa(n) + " "; s != want {
					bad = fmt.Errorf("%s: chunk %d is %q, want %q", name, n, s, want)
				}
				n++
			})
			if bad == nil && n != chunks {
				bad = fmt.Errorf("%s: %d chunks, want %d", name, n, chunks)
			}
			errs <- bad
		}()
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
