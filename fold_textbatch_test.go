package acp

import (
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
	us := updatesLocked(batch)
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
	allocs := testing.AllocsPerRun(20, func() { updatesLocked(batch) })
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
