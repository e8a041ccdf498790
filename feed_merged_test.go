package acp

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// mergedTurn is renderKindsTurn(n) with, every 50 lines, an agent message
// chunk whose notification carries a _meta of its own: such a chunk is
// never joined to its neighbours.
func mergedTurn(n int) []byte {
	var b []byte
	i := 0
	for line := range bytes.Lines(renderKindsTurn(n)) {
		b = append(b, line...)
		if i%50 == 49 {
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","_meta":{"n":`+strconv.Itoa(i)+`},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"meta `+strconv.Itoa(i)+` "}}}}`+"\n"...)
		}
		i++
	}
	return b
}

// chunkText returns a plain text chunk's kind, messageId and text; ok is
// false for any other update.
func chunkText(u schema.Update) (kind, id, text string, ok bool) {
	var c schema.ContentBlock
	switch v := u.(type) {
	case *schema.AgentMessageChunk:
		kind, id, c = "message", v.MessageID, v.Content
	case *schema.AgentThoughtChunk:
		kind, id, c = "thought", v.MessageID, v.Content
	case *schema.UserMessageChunk:
		kind, id, c = "user", v.MessageID, v.Content
	default:
		return "", "", "", false
	}
	tc, ok := c.(*schema.TextContent)
	if !ok {
		return "", "", "", false
	}
	return kind, id, tc.Text, true
}

// checkMerged reads turn's EventsMerged from the first event and checks
// it against all, the turn's Events by seq: the merged events tile the
// sequence numbers; one that joins nothing is the event Events gives; one
// that joins chunks joins plain text chunks of one kind and message, none
// with a _meta, and its text is theirs joined; and folding them gives the
// state folding all gives. It returns how many events joined chunks.
func checkMerged(t *testing.T, turn *Turn, all map[uint64]Event, want TurnState) int {
	t.Helper()
	var fold TurnFold
	var prev uint64
	joins := 0
	for ev := range turn.EventsMerged(context.Background(), 0) {
		first := ev.Seq
		switch {
		case ev.Joined == 1 || ev.Joined < 0:
			t.Fatalf("event %d: Joined %d, want 0 or more than 1", ev.Seq, ev.Joined)
		case ev.Joined > 1:
			first = ev.Seq - uint64(ev.Joined) + 1
		}
		if first != prev+1 {
			t.Fatalf("event %d (joining %d) follows event %d: the merged events do not tile the log", ev.Seq, ev.Joined, prev)
		}
		if ev.Joined == 0 {
			if d := cmp.Diff(see(t, all[ev.Seq]), see(t, ev)); d != "" {
				t.Fatalf("event %d joins nothing but differs from Events' (-Events +EventsMerged):\n%s", ev.Seq, d)
			}
		} else {
			joins++
			kind, id, text, ok := chunkText(ev.Update)
			if !ok || ev.Meta != nil || ev.Origin != OriginAgent {
				t.Fatalf("event %d joins %d events but is %T, meta %s, origin %q", ev.Seq, ev.Joined, ev.Update, ev.Meta, ev.Origin)
			}
			var joined string
			for s := first; s <= ev.Seq; s++ {
				k, i, tx, ok := chunkText(all[s].Update)
				if !ok || k != kind || i != id || all[s].Meta != nil {
					t.Fatalf("event %d joins event %d (%T, meta %s), not a %s chunk of message %q", ev.Seq, s, all[s].Update, all[s].Meta, kind, id)
				}
				joined += tx
			}
			if text != joined {
				t.Fatalf("event %d: text %q, want the %d chunks' %q", ev.Seq, text, ev.Joined, joined)
			}
		}
		fold.Apply(ev)
		prev = ev.Seq
	}
	if prev != uint64(len(all)) {
		t.Fatalf("EventsMerged ended at event %d of %d", prev, len(all))
	}
	if d := cmp.Diff(want, fold.State()); d != "" {
		t.Errorf("folding EventsMerged differs from the turn's state (-State +fold):\n%s", d)
	}
	return joins
}

// EventsMerged over an ended turn: chunks join across a batch as long as
// they continue one another, never across a kind, a message, a _meta or
// an update of another kind, and the fold is the turn's.
func TestEventsMergedFoldsAsEvents(t *testing.T) {
	const chunks = 3000
	turn := endedTurn(t, mergedTurn(chunks))
	all := map[uint64]Event{}
	for ev := range turn.Events(context.Background(), 0) {
		all[ev.Seq] = ev
	}
	joins := checkMerged(t, turn, all, turn.State())
	if joins == 0 {
		t.Fatal("no event joined chunks: the test tests nothing")
	}
	t.Logf("%d events, %d of the merged ones joined chunks", len(all), joins)
}

// A reader that follows a running turn sees the same: what it joins
// depends on how far behind it is, never what it folds to. Under the race
// detector, the joined text read outside the lock must be text the reader
// goroutine no longer writes.
func TestEventsMergedFollowingATurn(t *testing.T) {
	_, s, a := startPipeAgent(t)
	wire := mergedTurn(4000)
	a.answer(wire)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	var fold TurnFold
	for ev := range turn.EventsMerged(context.Background(), 0) {
		if _, _, tx, ok := chunkText(ev.Update); ok {
			if _, ok := ev.Update.(*schema.AgentMessageChunk); ok {
				text = append(text, tx...)
			}
		}
		fold.Apply(ev)
	}
	if d := cmp.Diff(turn.State(), fold.State()); d != "" {
		t.Errorf("folding EventsMerged as the turn ran differs from its state (-State +fold):\n%s", d)
	}
	var want []byte
	for ev := range turn.Events(context.Background(), 0) {
		if c, ok := ev.Update.(*schema.AgentMessageChunk); ok {
			want = append(want, c.Content.(*schema.TextContent).Text...)
		}
	}
	if string(text) != string(want) {
		t.Errorf("the agent text EventsMerged gave (%d bytes) is not Events' (%d bytes)", len(text), len(want))
	}
}
