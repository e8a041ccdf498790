package acp

import (
	"context"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// A batch's plain text chunks come from slabs: each equal to the chunk
// newTextChunk makes, each its own value, and the slabs at most textSlab
// chunks, so a batch of a log chunk's entries allocates a few times, not
// once a chunk.
func TestUpdatesLockedMakesChunksInSlabs(t *testing.T) {
	var f fold
	var batch []entry
	kinds := []uint8{textMessage, textThought, textUser}
	for i := range logChunk {
		k := kinds[0]
		if i%50 == 7 {
			k = kinds[1+(i/50)%2]
		}
		if i%40 == 3 {
			batch = append(batch, newEntry(entAgent, &schema.PlanRemoved{}, nil))
			continue
		}
		id := []byte("m")
		m, pos := f.appendText(k, f.targetBytes(f.list(k), textKinds[k], id), id, []byte("tok"+string(rune('a'+i%26))), "")
		e, ok := textEntry(k, m, pos)
		if !ok {
			t.Fatal("textEntry")
		}
		batch = append(batch, e)
	}
	us := updatesLocked(batch, &textReuse{sliceOnly: true})
	seen := map[schema.Update]bool{}
	for i := range batch {
		e := &batch[i]
		if e.tag() != tagText {
			if us[i] != nil {
				t.Fatalf("entry %d is not a text chunk but has %v", i, us[i])
			}
			continue
		}
		m := (*msgAcc)(e.p)
		want := newTextChunk(e.text(), m.id, m.slice(e.pos()))
		if d := cmp.Diff(want, us[i]); d != "" {
			t.Fatalf("entry %d (-newTextChunk +slab):\n%s", i, d)
		}
		if seen[us[i]] {
			t.Fatalf("entry %d shares its chunk", i)
		}
		seen[us[i]] = true
	}
	// The updates' slice, then for each kind ceil(its chunks/textSlab)
	// slabs, each no larger than what is left of that kind.
	allocs := testing.AllocsPerRun(20, func() { updatesLocked(batch, &textReuse{sliceOnly: true}) })
	if max := float64(1 + (logChunk+textSlab-1)/textSlab + 2); allocs > max {
		t.Errorf("updatesLocked of %d entries allocates %v times, want at most %v", len(batch), allocs, max)
	}
	mk, _ := newTextMaker(batch)
	for _, k := range kinds {
		mk.chunk(k, "", "")
	}
	if len(mk.thoughts) != mk.left[textThought] || len(mk.users) != mk.left[textUser] {
		t.Errorf("slabs of the rarer kinds: %d and %d chunks for %d and %d left", len(mk.thoughts), len(mk.users), mk.left[textThought], mk.left[textUser])
	}
}

// A plain text chunk folded from the wire bytes has the text
// DecodeNotification reads, whether the text is plain, escaped and short
// enough to decode on the stack, or longer than that buffer; and the
// updates Turn.Updates yields are DecodeNotification's.
func TestPlainTextChunkTexts(t *testing.T) {
	texts := []string{
		`plain words`,
		`a line\n\"quoted\" caf\u00e9\ttab \ud83d\ude00 \ud800 end`,
		"invalid \xff\xfe utf-8 and \\n",
		strings.Repeat(`long\n`, 200),
		strings.Repeat("\xff", 300) + `\n`,
	}
	c, s, _ := startPipeAgent(t)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.conn.Load().wire
	var want []schema.Update
	var wantText strings.Builder
	for _, text := range texts {
		params := `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}`
		n, err := schema.DecodeNotification(1, []byte(params))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, n.Update)
		wantText.WriteString(n.Update.(*schema.AgentMessageChunk).Content.(*schema.TextContent).Text)
		if out := w.Dispatch([]byte(`{"jsonrpc":"2.0","method":"session/update","params":` + params + `}`)); out != nil {
			t.Fatalf("went to jrpc2: %s", out)
		}
	}
	st, _ := turn.Snapshot()
	if len(st.Messages) != 1 || st.Messages[0].Text != wantText.String() {
		t.Fatalf("the turn's messages %+v, want one of %q", st.Messages, wantText.String())
	}
	w.Dispatch(promptResponseLine(turn))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	var got []schema.Update
	for u := range turn.Updates() {
		got = append(got, u)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Updates (-DecodeNotification +yielded):\n%s", d)
	}
}

// The log entry of a tool_call_update's event shares the allocation of
// the state the update made, and only that state's: an event of another
// state (a cancelled turn's mark made in between, a state from elsewhere)
// gets an entry of its own.
func TestToolSnapEntry(t *testing.T) {
	var tt toolTable
	title := "T"
	u := &schema.ToolCallUpdate{ToolCallID: "c1", Title: &title}
	if first := tt.update(u); tt.takeEntry(u, &ToolCallState{ToolCallID: "c1"}) != nil {
		t.Fatal("took the room of another state's entry")
	} else if tt.takeEntry(u, first) != nil {
		t.Fatal("the room outlived a takeEntry that did not match")
	}
	tc := tt.update(u)
	te := tt.takeEntry(u, tc)
	if te == nil || te.u != schema.Update(u) || te.tc != tc {
		t.Fatalf("takeEntry = %+v, want the update and its state", te)
	}
	if tt.takeEntry(u, tc) != nil {
		t.Fatal("the room was taken twice")
	}
	if e := toolEntry(entAgent, te); e.tag() != tagTool || e.kind() != entAgent {
		t.Fatalf("entry tag %d kind %d", e.tag(), e.kind())
	}
	if got, _ := tt.get("c1"); got != tc || got.Title != "T" {
		t.Fatalf("the table holds %+v", got)
	}
}
