package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// renderKindsTurn renders n plain text chunks of the three kinds, some
// with a messageId, with a plan every 97 chunks and a tool call every 211:
// more than a log chunk's entries, so a reader takes several batches.
func renderKindsTurn(n int) []byte {
	var b []byte
	for i := range n {
		kind, id := "agent_message_chunk", ""
		switch {
		case i%13 == 5:
			kind = "agent_thought_chunk"
		case i%29 == 11:
			kind = "user_message_chunk"
		case i%7 == 2:
			id = `,"messageId":"m` + strconv.Itoa(i/500) + `"`
		}
		b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"`+kind+`"`+id+`,"content":{"type":"text","text":"t`+strconv.Itoa(i)+` "}}}}`+"\n"...)
		if i%97 == 96 {
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"step `+strconv.Itoa(i)+`","priority":"high","status":"pending"}]}}}`+"\n"...)
		}
		if i%211 == 210 {
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c`+strconv.Itoa(i)+`","title":"Read","kind":"read","status":"pending"}}}`+"\n"...)
		}
	}
	return b
}

// endedTurn runs one turn of wire against a pipe agent and waits for its
// end.
func endedTurn(t *testing.T, wire []byte) *Turn {
	t.Helper()
	_, s, a := startPipeAgent(t)
	a.answer(wire)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	return turn
}

// seen is what a reader saw of one event, taken during its yield.
type seen struct {
	Seq    uint64
	Kind   EventKind
	Origin EventOrigin
	Update string // the update's JSON
	Tool   string // the tool call's id, if any
}

func see(t *testing.T, ev Event) seen {
	t.Helper()
	sn := seen{Seq: ev.Seq, Kind: ev.Kind, Origin: ev.Origin}
	if ev.Update != nil {
		b, err := json.Marshal(ev.Update)
		if err != nil {
			t.Fatal(err)
		}
		sn.Update = string(b)
	}
	if ev.ToolCall != nil {
		sn.Tool = ev.ToolCall.ToolCallID
	}
	return sn
}

// EventsReused yields, event for event, what Events yields, while a
// turn's text chunks come to it in values used again: at most a log
// chunk's worth of distinct ones, where Events makes each anew. Without
// the reuse the count of distinct values is the count of chunks.
func TestEventsReusedYieldsWhatEventsYields(t *testing.T) {
	const chunks = 3000
	turn := endedTurn(t, renderKindsTurn(chunks))
	var want, got []seen
	for ev := range turn.Events(context.Background(), 0) {
		want = append(want, see(t, ev))
	}
	values := map[schema.Update]bool{}
	kinds := map[string]int{}
	texts := 0
	for ev := range turn.EventsReused(context.Background(), 0) {
		got = append(got, see(t, ev))
		switch ev.Update.(type) {
		case *schema.AgentMessageChunk, *schema.AgentThoughtChunk, *schema.UserMessageChunk:
			if !values[ev.Update] {
				values[ev.Update] = true
				kinds[fmt.Sprintf("%T", ev.Update)]++
			}
			texts++
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("EventsReused differs from Events (-Events +EventsReused):\n%s", d)
	}
	if texts != chunks {
		t.Fatalf("EventsReused yielded %d text chunks, want %d", texts, chunks)
	}
	// Each kind's values grow by doubling up to a batch's size (grown).
	for k, n := range kinds {
		if n > 2*logChunk {
			t.Errorf("EventsReused gave %d distinct %s values for %d chunks, want at most %d", n, k, chunks, 2*logChunk)
		}
	}
}

// A reused value is cleared before it is made again: what a reader set on
// one chunk does not reach a later one.
func TestEventsReusedClearsValues(t *testing.T) {
	turn := endedTurn(t, renderKindsTurn(1000))
	var want []seen
	for ev := range turn.Events(context.Background(), 0) {
		want = append(want, see(t, ev))
	}
	i := 0
	for ev := range turn.EventsReused(context.Background(), 0) {
		if d := cmp.Diff(want[i], see(t, ev)); d != "" {
			t.Fatalf("event %d (-want +got):\n%s", ev.Seq, d)
		}
		i++
		if c, ok := ev.Update.(*schema.AgentMessageChunk); ok {
			c.Meta = json.RawMessage(`{"scribbled":true}`)
			c.MessageID = "scribbled"
			c.Content.(*schema.TextContent).Annotations = &schema.Annotations{}
		}
	}
	if i != len(want) {
		t.Fatalf("EventsReused yielded %d events, Events %d", i, len(want))
	}
}

// Iterations at once each have values of their own: under the race
// detector, two that shared them would race (one making its batch under
// the session's lock while the other reads its last one outside it).
func TestEventsReusedConcurrentReaders(t *testing.T) {
	_, s, a := startPipeAgent(t)
	wire := renderKindsTurn(4000)
	a.answer(wire)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(seq iter.Seq[Event]) string {
		var b []byte
		for ev := range seq {
			if c, ok := ev.Update.(*schema.AgentMessageChunk); ok {
				b = append(b, c.Content.(*schema.TextContent).Text...)
			}
		}
		return string(b)
	}
	var wg sync.WaitGroup
	texts := make([]string, 3)
	for r := range texts {
		wg.Go(func() { texts[r] = read(turn.EventsReused(context.Background(), 0)) })
	}
	wg.Wait()
	want := read(turn.Events(context.Background(), 0))
	if len(want) == 0 {
		t.Fatal("the turn has no agent text")
	}
	for r, got := range texts {
		if got != want {
			t.Errorf("reader %d: %d bytes of agent text, not the %d Events gives", r, len(got), len(want))
		}
	}
}

// The allocation guard of a renderer's loop: EventsReused over a turn of
// 20 000 text chunks allocates a bounded amount, whatever the turn's
// length; Events allocates once per textSlab chunks at least.
func TestEventsReusedAllocs(t *testing.T) {
	skipAllocGuardUnderRace(t)
	const chunks = 20_000
	turn := endedTurn(t, renderMixedTurn(chunks, 200))
	ctx := context.Background()
	count := func(seq func(context.Context, uint64) func(func(Event) bool)) float64 {
		return testing.AllocsPerRun(5, func() {
			for range seq(ctx, 0) {
			}
		})
	}
	reused := count(func(ctx context.Context, after uint64) func(func(Event) bool) { return turn.EventsReused(ctx, after) })
	fresh := count(func(ctx context.Context, after uint64) func(func(Event) bool) { return turn.Events(ctx, after) })
	t.Logf("ranging over %d chunks: EventsReused %v allocations, Events %v", chunks, reused, fresh)
	if reused > maxReusedIterAllocs {
		t.Errorf("EventsReused over %d chunks allocates %v times, want at most %d", chunks, reused, maxReusedIterAllocs)
	}
	if min := float64(chunks / textSlab); fresh < min {
		t.Errorf("Events over %d chunks allocates %v times, want at least %v: the guard above no longer measures the reuse", chunks, fresh, min)
	}
}

// maxReusedIterAllocs bounds one EventsReused iteration's allocations:
// its closures and its values, grown once to a batch's size.
const maxReusedIterAllocs = 12
