package acp

import (
	"unsafe"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/schema"
)

// Message is one message assembled from chunks.
type Message struct {
	// MessageID is the agent's id for the message, empty when it sent none.
	MessageID string `json:"messageId,omitempty"`
	// Text is the concatenation of the message's text blocks.
	Text string `json:"text"`
	// Content holds the message's other blocks (images, resources...), in
	// order. Text blocks are not repeated here.
	Content []schema.ContentBlock `json:"content,omitempty"`
	// Order is the message's place among everything its fold started —
	// messages, thoughts, user messages and tool calls — from 0, in the
	// order their first update arrived. The lists of a state are each in
	// that order; sorting all their items by Order interleaves them, as a
	// transcript shows them (a replayed conversation in History, say).
	Order int `json:"order"`
}

// fold accumulates the updates of one turn (or of the time outside turns)
// into messages, thoughts, tool calls and the plan. It never calls user code
// and does constant work per update (a map lookup by messageId or
// toolCallId) plus appending a chunk's text to its message.
type fold struct {
	messages msgList
	thoughts msgList
	user     msgList
	smsgs    sessMsgs // messages between sessions (fold_session_messages.go)
	tools    toolTable
	plan     []schema.PlanEntry
	planID   string // the plan_update plan that plan shows; "" for a legacy plan

	// lastKind is the kind of the previous update, the only message boundary
	// an agent that sends no messageId gives (spec: prompt-turn.mdx).
	lastKind string

	// visits counts the entries lookups and marks have touched: the work
	// the agent can make the reader do, which tests bound per update.
	visits int

	// lastMsg and lastPos are the message the last chunk went to and
	// where its text is there: what a turn's log keeps of a plain text
	// chunk.
	lastMsg *msgAcc
	lastPos textPos
}

// Kinds of plain text chunks, by the list their message is in: a turn's log
// keeps such a chunk as a place in its message's text (entry.text).
// The values are jsonscan's, which finds such chunks in the wire bytes.
const (
	textNone    = uint8(jsonscan.ChunkNone)
	textMessage = uint8(jsonscan.ChunkMessage)
	textThought = uint8(jsonscan.ChunkThought)
	textUser    = uint8(jsonscan.ChunkUser)
)

// list returns the message list of a plain text chunk kind.
func (f *fold) list(k uint8) *msgList {
	switch k {
	case textMessage:
		return &f.messages
	case textThought:
		return &f.thoughts
	}
	return &f.user
}

// plainText reports the kind of u when it is a plain text chunk — a
// message, thought or user chunk whose content is a text block, with no
// annotations and no _meta on either: the bulk of every turn. Such a chunk
// is equal, by value, to the one newTextChunk makes from its kind, message
// id and text.
func plainText(u schema.Update) uint8 {
	var b schema.ContentBlock
	var k uint8
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		if u.Meta != nil {
			return textNone
		}
		b, k = u.Content, textMessage
	case *schema.AgentThoughtChunk:
		if u.Meta != nil {
			return textNone
		}
		b, k = u.Content, textThought
	case *schema.UserMessageChunk:
		if u.Meta != nil {
			return textNone
		}
		b, k = u.Content, textUser
	default:
		return textNone
	}
	if t, ok := b.(*schema.TextContent); !ok || t == nil || t.Annotations != nil || t.Meta != nil {
		return textNone
	}
	return k
}

// newTextChunk makes a plain text chunk of kind k, the chunk and its text
// block in one allocation.
func newTextChunk(k uint8, id, text string) schema.Update {
	switch k {
	case textMessage:
		return schema.AgentMessageText(id, text)
	case textThought:
		return schema.AgentThoughtText(id, text)
	}
	return schema.UserMessageText(id, text)
}

// msgList is one kind of message in order of first appearance, indexed by
// messageId. The index holds every id ever seen: an agent that sends a
// million distinct ids costs a million entries, never a million scans.
type msgList struct {
	l    []*msgAcc
	byID map[string]*msgAcc
}

// msgAcc assembles one message. Its text is kept in blocks, as received,
// and never copied once a block is full: a turn's log refers to each plain
// text chunk by its place there (see entry), so the text is held once
// while the log is kept. A snapshot's Text is one string: the first block
// itself while there is only one (a message of up to textBlock bytes),
// else a joined copy, made when a snapshot asks and extended from there;
// compact, once no log refers to the blocks, keeps only that copy.
type msgAcc struct {
	id     string
	order  int
	idx    int // its place in its list
	blocks [][]byte
	size   int    // bytes of text in all
	joined []byte // the text's first len(joined) bytes, when blocks > 1
	// jb and jo are the block and offset in it that joined ends at.
	jb, jo  int
	content []schema.ContentBlock
}

// textBlock is the size of a message's text blocks past the first, which
// grows to it by appending.
const textBlock = 64 << 10

// textPos is where a chunk's text is in its message: n bytes at off of
// block blk.
type textPos struct{ blk, off, n int }

// add appends a block; a text block's text goes to the message's text.
func (m *msgAcc) add(b schema.ContentBlock) textPos {
	if t, ok := b.(*schema.TextContent); ok {
		return m.addText(nil, t.Text)
	}
	m.content = append(m.content, b)
	return textPos{}
}

// addText appends text given as plain (a slice of the wire, copied) or,
// when plain is nil, as s, and returns where it went.
func (m *msgAcc) addText(plain []byte, s string) textPos {
	n := len(plain) + len(s)
	last := len(m.blocks) - 1
	if last < 0 || (len(m.blocks[last])+n > max(textBlock, cap(m.blocks[last])) && len(m.blocks[last]) > 0) {
		var b []byte
		if last >= 0 {
			// A full block is never copied: a new one starts. A chunk
			// longer than a block has one of its own.
			b = make([]byte, 0, max(textBlock, n))
		}
		m.blocks = append(m.blocks, b)
		last++
	}
	b := m.blocks[last]
	if len(b)+n > cap(b) && len(b)+n <= textBlock {
		// The first block doubles, up to textBlock and never past it.
		// append grows a slice past 256 bytes by a quarter, so the blocks
		// it left behind added up to four times the last, garbage that set
		// the heap's peak with hundreds of turns at once; and it took the
		// block past 64 KiB, where a chunk's offset no longer fits an
		// entry (the chunk kept its whole update). The first size is the
		// chunk's own: a message of a few bytes costs a few bytes.
		g := make([]byte, len(b), min(max(2*cap(b), len(b)+n), textBlock))
		copy(g, b)
		b = g
	}
	pos := textPos{blk: last, off: len(b), n: n}
	if plain != nil {
		b = append(b, plain...)
	} else {
		b = append(b, s...)
	}
	m.blocks[last] = b
	m.size += n
	return pos
}

// text returns the message text so far. The string shares the blocks' or
// joined's bytes, which are only ever appended to past their length, like
// strings.Builder, so bytes a returned string covers are never written
// again.
func (m *msgAcc) text() string {
	switch len(m.blocks) {
	case 0:
		return ""
	case 1:
		return bytesString(m.blocks[0])
	}
	if m.joined == nil {
		m.joined = make([]byte, 0, m.size)
	}
	for {
		b := m.blocks[m.jb]
		m.joined = append(m.joined, b[m.jo:]...)
		m.jo = len(b)
		if m.jb == len(m.blocks)-1 {
			break
		}
		m.jb, m.jo = m.jb+1, 0
	}
	return bytesString(m.joined)
}

// slice returns the text at p, sharing its bytes.
func (m *msgAcc) slice(p textPos) string {
	return bytesString(m.blocks[p.blk][p.off : p.off+p.n])
}

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// compact joins the text into one block and drops the others, which only
// the turn's log needed (as places of its chunks): the text is then held
// once, as the snapshots' copy.
func (m *msgAcc) compact() {
	if len(m.blocks) > 1 {
		m.text()
		m.blocks, m.joined, m.jb, m.jo = [][]byte{m.joined}, nil, 0, 0
	}
}

func (m *msgAcc) snapshot() Message {
	msg := Message{MessageID: m.id, Text: m.text(), Order: m.order}
	if len(m.content) > 0 {
		msg.Content = m.content[:len(m.content):len(m.content)]
	}
	return msg
}

// chunk appends a message chunk to list. Chunks with the same messageId
// belong to one message wherever they arrive; a new id starts a new message;
// without an id, the chunk continues the last message only if the previous
// update was of the same kind.
func (f *fold) chunk(list *msgList, kind, id string, b schema.ContentBlock) {
	f.visits++
	m := f.target(list, kind, id)
	if m == nil {
		m = &msgAcc{id: id, order: f.tools.nextOrder(), idx: len(list.l)}
		list.l = append(list.l, m)
		if id != "" {
			if list.byID == nil {
				list.byID = map[string]*msgAcc{}
			}
			list.byID[id] = m
		}
	}
	f.lastMsg, f.lastPos = m, m.add(b)
}

// textKinds are the UpdateKind of each kind of plain text chunk.
var textKinds = [...]string{textMessage: "agent_message_chunk", textThought: "agent_thought_chunk", textUser: "user_message_chunk"}

// targetBytes is target for an id given as bytes (a plain JSON string's
// inside), looked up without a copy.
func (f *fold) targetBytes(list *msgList, kind string, id []byte) *msgAcc {
	if len(id) > 0 {
		return list.byID[string(id)]
	}
	return f.target(list, kind, "")
}

// appendText folds a plain text chunk of kind k: its text, taken from
// plain (a slice of the wire, copied) or else text, goes to m, or to a new
// message of id when m is nil — as apply folds the chunk it decodes to. It
// returns the message and where the text went there.
func (f *fold) appendText(k uint8, m *msgAcc, id []byte, plain []byte, text string) (*msgAcc, textPos) {
	f.visits++
	if m == nil {
		list := f.list(k)
		m = &msgAcc{id: string(id), order: f.tools.nextOrder(), idx: len(list.l)}
		list.l = append(list.l, m)
		if m.id != "" {
			if list.byID == nil {
				list.byID = map[string]*msgAcc{}
			}
			list.byID[m.id] = m
		}
	}
	pos := m.addText(plain, text)
	f.lastKind = textKinds[k]
	f.lastMsg, f.lastPos = m, pos
	return m, pos
}

// compact releases what only the turn's log needed: see msgAcc.compact.
func (f *fold) compact() {
	for _, l := range []*msgList{&f.messages, &f.thoughts, &f.user} {
		for _, m := range l.l {
			m.compact()
		}
	}
}

// target returns the message of list a chunk of kind with id continues, or
// nil when it starts a new one.
func (f *fold) target(list *msgList, kind, id string) *msgAcc {
	if id != "" {
		return list.byID[id]
	}
	if n := len(list.l); n > 0 && f.lastKind == kind && list.l[n-1].id == "" {
		return list.l[n-1]
	}
	return nil
}

// apply folds one update and returns the tool call it touched, as merged
// (nil for other kinds). Session-level kinds (commands, mode, config,
// session info, usage) are folded by the session; here they only end an
// id-less message.
func (f *fold) apply(u schema.Update) *ToolCallState {
	kind := u.UpdateKind()
	var tc *ToolCallState
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		f.chunk(&f.messages, kind, u.MessageID, u.Content)
	case *schema.AgentThoughtChunk:
		f.chunk(&f.thoughts, kind, u.MessageID, u.Content)
	case *schema.UserMessageChunk:
		f.chunk(&f.user, kind, u.MessageID, u.Content)
	case *schema.AgentMessage:
		f.whole(&f.messages, u.MessageID, u.Content)
	case *schema.AgentThought:
		f.whole(&f.thoughts, u.MessageID, u.Content)
	case *schema.UserMessage:
		f.whole(&f.user, u.MessageID, u.Content)
	case *schema.ToolCallContentChunk:
		f.visits++
		tc = f.tools.appendContent(u.ToolCallID, u.Content)
	case *schema.ToolCall:
		f.visits++
		tc = f.tools.create(u)
	case *schema.ToolCallUpdate:
		f.visits++
		tc = f.tools.update(u)
	case *schema.Plan:
		f.plan, f.planID = planEntries(u.Entries), ""
	case *schema.PlanUpdate:
		// A turn shows the entries of the plan it updated last when that
		// is a list, and its id (the session keeps every plan).
		f.plan, f.planID = nil, ""
		if items, ok := u.Plan.(*schema.PlanItems); ok {
			f.plan, f.planID = planEntries(items.Entries), items.ID
		}
	case *schema.PlanRemoved:
		if f.planID != "" && f.planID == u.PlanID {
			f.plan, f.planID = nil, ""
		}
	case *schema.SessionMessage:
		f.applySessionMessage(u)
	case *schema.SessionMessageChunk:
		f.applySessionMessageChunk(u)
	}
	f.lastKind = kind
	return tc
}

// planEntries is a plan's entries as a state holds them: nil when there
// are none, so that a plan of no entries and no plan at all are one state
// (TurnState.Plan), as they are in JSON.
func planEntries(e []schema.PlanEntry) []schema.PlanEntry {
	if len(e) == 0 {
		return nil
	}
	return e
}

func (l *msgList) snapshot() []Message {
	if len(l.l) == 0 {
		return nil
	}
	out := make([]Message, len(l.l))
	for i, m := range l.l {
		out[i] = m.snapshot()
	}
	return out
}

// last returns the latest message of the list.
func (l *msgList) last() (Message, bool) {
	if len(l.l) == 0 {
		return Message{}, false
	}
	return l.l[len(l.l)-1].snapshot(), true
}

// whole folds v2's whole-message upsert (agent_message, user_message,
// agent_thought): a new id starts a message; content nil keeps the
// message's content, a non-nil slice replaces it, chunks so far included.
// The replacement is a new msgAcc in the old one's place, with its id and
// Order: the turn's log still refers to the old one's text, so it is never
// rewritten.
func (f *fold) whole(list *msgList, id string, content []schema.ContentBlock) {
	f.visits++
	old := list.byID[id]
	if old != nil && content == nil {
		f.lastMsg = nil
		return
	}
	m := &msgAcc{id: id}
	if old != nil {
		m.order, m.idx = old.order, old.idx
		list.l[old.idx] = m
	} else {
		m.order, m.idx = f.tools.nextOrder(), len(list.l)
		list.l = append(list.l, m)
	}
	if list.byID == nil {
		list.byID = map[string]*msgAcc{}
	}
	list.byID[id] = m
	for _, b := range content {
		m.add(b)
	}
	f.lastMsg = nil
}
