package acp

import "unsafe"

// Message is one message assembled from chunks.
type Message struct {
	// MessageID is the agent's id for the message, empty when it sent none.
	MessageID string `json:"messageId,omitempty"`
	// Text is the concatenation of the message's text blocks.
	Text string `json:"text"`
	// Content holds the message's other blocks (images, resources...), in
	// order. Text blocks are not repeated here.
	Content []ContentBlock `json:"content,omitempty"`
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
// toolCallId), except for the first State after a long stream, which joins
// the text once.
type fold struct {
	messages msgList
	thoughts msgList
	user     msgList
	tools    toolTable
	plan     []PlanEntry

	// lastKind is the kind of the previous update, the only message boundary
	// an agent that sends no messageId gives (spec: prompt-turn.mdx).
	lastKind string

	// visits counts the entries lookups and marks have touched: the work
	// the agent can make the reader do, which tests bound per update.
	visits int
}

// msgList is one kind of message in order of first appearance, indexed by
// messageId. The index holds every id ever seen: an agent that sends a
// million distinct ids costs a million entries, never a million scans.
type msgList struct {
	l    []*msgAcc
	byID map[string]*msgAcc
}

// msgAcc assembles one message. Text parts are kept as received — they are
// the same strings the turn's update log holds, so streaming costs no copy —
// and joined into buf only when a snapshot asks, then extended from there.
type msgAcc struct {
	id      string
	order   int
	parts   []string
	size    int
	buf     []byte // parts[:joined] concatenated
	joined  int
	content []ContentBlock
}

func (m *msgAcc) add(b ContentBlock) {
	if t, ok := b.(*TextContent); ok {
		m.parts = append(m.parts, t.Text)
		m.size += len(t.Text)
		return
	}
	m.content = append(m.content, b)
}

// text returns the message text so far. The string shares buf's bytes: buf
// is only ever appended to past its length, like strings.Builder, so bytes a
// returned string covers are never written again.
func (m *msgAcc) text() string {
	if m.joined < len(m.parts) {
		if m.buf == nil {
			m.buf = make([]byte, 0, m.size)
		}
		for _, p := range m.parts[m.joined:] {
			m.buf = append(m.buf, p...)
		}
		m.joined = len(m.parts)
	}
	if len(m.buf) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(m.buf), len(m.buf))
}

// compact joins the text and drops the parts, which otherwise keep every
// chunk's string (and its allocation overhead) alive after the update log
// that shared them is released.
func (m *msgAcc) compact() {
	m.text()
	m.parts, m.joined = nil, 0
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
func (f *fold) chunk(list *msgList, kind, id string, b ContentBlock) {
	f.visits++
	m := f.target(list, kind, id)
	if m == nil {
		m = &msgAcc{id: id, order: f.tools.nextOrder()}
		list.l = append(list.l, m)
		if id != "" {
			if list.byID == nil {
				list.byID = map[string]*msgAcc{}
			}
			list.byID[id] = m
		}
	}
	m.add(b)
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
func (f *fold) apply(u Update) *ToolCallState {
	kind := u.UpdateKind()
	var tc *ToolCallState
	switch u := u.(type) {
	case *AgentMessageChunk:
		f.chunk(&f.messages, kind, u.MessageID, u.Content)
	case *AgentThoughtChunk:
		f.chunk(&f.thoughts, kind, u.MessageID, u.Content)
	case *UserMessageChunk:
		f.chunk(&f.user, kind, u.MessageID, u.Content)
	case *ToolCall:
		f.visits++
		tc = f.tools.create(u)
	case *ToolCallUpdate:
		f.visits++
		tc = f.tools.update(u)
	case *Plan:
		f.plan = u.Entries
	case *PlanUpdate:
		// A turn shows the entries of a list plan; which plan is current,
		// and its removal, is the session's (SessionState.PlanContent).
		if items, ok := u.Plan.(*PlanItems); ok {
			f.plan = items.Entries
		}
	}
	f.lastKind = kind
	return tc
}

// compact releases what only the update log needed: see msgAcc.compact.
func (f *fold) compact() {
	for _, l := range []*msgList{&f.messages, &f.thoughts, &f.user} {
		for _, m := range l.l {
			m.compact()
		}
	}
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
