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

// chunk makes the chunk of kind k, messageId id and text text.
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
		p.t.Text = text
		p.c.Content, p.c.MessageID = &p.t, id
		return &p.c
	case textThought:
		if len(mk.thoughts) == 0 {
			mk.thoughts = make([]thoughtPair, n)
		}
		p := &mk.thoughts[0]
		mk.thoughts = mk.thoughts[1:]
		p.t.Text = text
		p.c.Content, p.c.MessageID = &p.t, id
		return &p.c
	}
	if len(mk.users) == 0 {
		mk.users = make([]userPair, n)
	}
	p := &mk.users[0]
	mk.users = mk.users[1:]
	p.t.Text = text
	p.c.Content, p.c.MessageID = &p.t, id
	return &p.c
}
