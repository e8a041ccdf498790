package acp

import "github.com/acpclient/acp/schema"

// How a reader's batch of the turn's log gets its plain text chunks back.
// The log keeps no update for a plain text chunk (see entry); Events and
// Updates make one when they yield it, the bulk of what a turn allocates
// once it is folded. A batch makes its chunks of each kind in slabs of up
// to textSlab, one allocation each, instead of one allocation a chunk.
// Each chunk is its own value, equal to what newTextChunk makes; a reader
// that keeps one keeps its slab alive (at most textSlab chunks, about 6.5
// KB), one that keeps them all keeps what it would have anyway.

// textSlab bounds the chunks that share one allocation.
const textSlab = 64

// The chunk and its text block, allocated together, as schema's
// AgentMessageText and its kin allocate them.
type (
	msgPair struct {
		c schema.AgentMessageChunk
		t schema.TextContent
	}
	thoughtPair struct {
		c schema.AgentThoughtChunk
		t schema.TextContent
	}
	userPair struct {
		c schema.UserMessageChunk
		t schema.TextContent
	}
)

// textMaker makes the plain text chunks of one batch from its slabs.
type textMaker struct {
	left     [4]int // the batch's chunks of each kind not made yet
	msgs     []msgPair
	thoughts []thoughtPair
	users    []userPair
}

// newTextMaker counts the plain text chunks of batch by kind, to size
// the slabs; ok is false when the batch has none.
func newTextMaker(batch []entry) (mk textMaker, ok bool) {
	for i := range batch {
		if batch[i].tag() == tagText {
			mk.left[batch[i].text()&3]++
			ok = true
		}
	}
	return mk, ok
}

// chunk makes the chunk of kind k, messageId id and text text, clearing
// the value first (a reused one may hold what a reader set on it).
func (mk *textMaker) chunk(k uint8, id, text string) schema.Update {
	k &= 3
	n := min(textSlab, mk.left[k])
	mk.left[k]--
	switch k {
	case textMessage:
		if len(mk.msgs) == 0 {
			mk.msgs = make([]msgPair, n)
		}
		p := &mk.msgs[0]
		mk.msgs = mk.msgs[1:]
		*p = msgPair{t: schema.TextContent{Text: text}}
		p.c.Content, p.c.MessageID = &p.t, id
		return &p.c
	case textThought:
		if len(mk.thoughts) == 0 {
			mk.thoughts = make([]thoughtPair, n)
		}
		p := &mk.thoughts[0]
		mk.thoughts = mk.thoughts[1:]
		*p = thoughtPair{t: schema.TextContent{Text: text}}
		p.c.Content, p.c.MessageID = &p.t, id
		return &p.c
	}
	if len(mk.users) == 0 {
		mk.users = make([]userPair, n)
	}
	p := &mk.users[0]
	mk.users = mk.users[1:]
	*p = userPair{t: schema.TextContent{Text: text}}
	p.c.Content, p.c.MessageID = &p.t, id
	return &p.c
}

// textReuse makes one reader's plain text chunks into the same values
// batch after batch, for Turn.EventsReused, whose reader keeps none of
// them past its yield; with sliceOnly, for Turn.Updates and Turn.Events,
// whose readers may keep them, only the updates' slice is used again. A batch is at most
// one log chunk (logChunk entries), so what it holds is bounded by that:
// about 27 KB at most for the values of one kind and 4 KB for the
// updates' slice, grown only to the largest batch it has seen (grown).
// Each value is cleared before it is made again, so nothing a reader set
// on one reaches the next.
type textReuse struct {
	sliceOnly bool // the chunks in new slabs: only us is reused
	msgs      []msgPair
	thoughts  []thoughtPair
	users     []userPair
	us        []schema.Update
	// merge joins the chunks that continue one another (EventsMerged);
	// spans[i] is then how many the chunk made at i joined.
	merge bool
	spans []int
}

// take sizes r's values for the plain text chunks mk counted and hands
// them to mk, which then makes its chunks there instead of in new slabs;
// it returns r's updates slice for a batch of n entries.
func (r *textReuse) take(mk *textMaker, n int) []schema.Update {
	r.msgs = grown(r.msgs, mk.left[textMessage])
	r.thoughts = grown(r.thoughts, mk.left[textThought])
	r.users = grown(r.users, mk.left[textUser])
	r.us = grown(r.us, n)
	mk.msgs = r.msgs[:mk.left[textMessage]]
	mk.thoughts = r.thoughts[:mk.left[textThought]]
	mk.users = r.users[:mk.left[textUser]]
	return r.us[:n]
}

// grown returns s with a length of at least n, reallocated only when it
// is shorter, to twice its length or n, whichever is more: a reader's
// values of one kind are a few allocations, at most 2 × logChunk in all.
func grown[T any](s []T, n int) []T {
	if len(s) < n {
		return make([]T, min(max(n, 2*len(s)), logChunk))
	}
	return s
}
