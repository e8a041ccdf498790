package jsonscan

import (
	"bytes"
	"unicode/utf8"
)

// The short cuts of Peek for the params most lines carry, written
// compactly, in the member order agents write: a plain text chunk,
//
//	{"sessionId":"…","update":{"sessionUpdate":"agent_message_chunk",["messageId":"…",]"content":{"type":"text","text":"…"}[,"messageId":"…"]}}
//
// (any of the three chunk kinds), and an update of any other kind whose
// kind comes first, a tool_call_update say,
//
//	{"sessionId":"…","update":{"sessionUpdate":"tool_call_update","toolCallId":"…",…}}
//
// For the chunk every key is matched as a literal, so none is escaped,
// repeated or folded, and only the string values are scanned, each once
// (validStringFlags). For another kind, what Peek reads of the update is
// its kind alone, so the update's other members need only be valid and
// none of them another sessionUpdate: each key is taken when it is plain
// ASCII written as is (no escape) and is not sessionUpdate under any
// case, its value validated once (fastMembers). Anything else, a byte of
// whitespace included, is not these shapes, and params takes the general
// walk from its start; that walk resets what this one wrote.

// Literals of the shape, each from the end of the value before it to the
// start of the next value's inside.
const (
	fastSession = `{"sessionId":"`
	fastUpdate  = `","update":{"sessionUpdate":"`
	fastMsgID   = `,"messageId":"`
	fastContent = `"content":{"type":"text","text":"`
)

// fastParams reads params at d[i] as the shape above into e.Update and
// the params' sessionId slot, and returns the index past params, or -1
// when params is not exactly that shape.
func (p *peeker) fastParams(i int, e *Envelope) int {
	d := p.d
	if !hasAt(d, i, fastSession) {
		return -1
	}
	// sessionId: plain (no escape, ASCII), as the fast paths need.
	j := i + len(fastSession) - 1
	end, esc, high := validStringFlags(d, j)
	if end < 0 || esc || high {
		return -1
	}
	sid := d[j:end]
	if !hasAt(d, end-1, fastUpdate) {
		return -1
	}
	body := end - 1 + len(`","update":`)
	j = end - 1 + len(fastUpdate) - 1
	end, esc, high = validStringFlags(d, j)
	if end < 0 || esc || high {
		return -1
	}
	kind := d[j+1 : end-1]
	var c Chunk
	switch string(kind) {
	case "agent_message_chunk":
		c = ChunkMessage
	case "agent_thought_chunk":
		c = ChunkThought
	case "user_message_chunk":
		c = ChunkUser
	default:
		return p.fastOther(end, e, sid, body, kind)
	}
	var msgID []byte
	i = end
	if hasAt(d, i, fastMsgID) {
		if i, msgID = p.fastString(i + len(fastMsgID) - 1); i < 0 {
			return -1
		}
	}
	if i >= len(d) || d[i] != ',' || !hasAt(d, i+1, fastContent) {
		return -1
	}
	j = i + len(fastContent)
	end, esc, high = validStringFlags(d, j)
	if end < 0 || end >= len(d) || d[end] != '}' {
		return -1
	}
	text := d[j:end]
	plain := !esc && (!high || utf8.Valid(text[1:len(text)-1]))
	i = end + 1
	if msgID == nil && hasAt(d, i, fastMsgID) {
		if i, msgID = p.fastString(i + len(fastMsgID) - 1); i < 0 {
			return -1
		}
	}
	if !hasAt(d, i, "}}") {
		return -1
	}
	p.sid[0] = sidSlot{raw: sid, seen: true}
	e.Update = Update{
		Exact:     true,
		SessionID: sid[1 : len(sid)-1],
		Body:      d[body : i+1 : i+1],
		Kind:      kind,
		Chunk:     c,
		MsgID:     msgID,
		Text:      text,
		TextPlain: plain,
	}
	return i + 2
}

// fastOther reads the rest of params from d[i], just past the kind of an
// update that is not a text chunk, as the shape above (fastMembers, then
// the end of the update and of params) into e.Update and the params'
// sessionId slot, as fastParams does, and returns the index past params,
// or -1.
func (p *peeker) fastOther(i int, e *Envelope, sid []byte, body int, kind []byte) int {
	d := p.d
	if i = p.fastMembers(i); i < 0 || !hasAt(d, i, "}}") {
		return -1
	}
	p.sid[0] = sidSlot{raw: sid, seen: true}
	e.Update = Update{
		Exact:     true,
		SessionID: sid[1 : len(sid)-1],
		Body:      d[body : i+1 : i+1],
		Kind:      kind,
	}
	return i + 2
}

// fastMembers validates the members of the update from d[i] on, each
// after its comma, and returns the index of the update's closing brace,
// or -1 when a key is not plain ASCII written as is, is sessionUpdate
// under any case (the general walk then reads the kind as none), or a
// byte is out of the compact shape. A value is validated at the depth
// the general walk gives it (an update's member: 3).
func (p *peeker) fastMembers(i int) int {
	d := p.d
	for i < len(d) && d[i] == ',' {
		k := i + 1
		if k >= len(d) || d[k] != '"' {
			return -1
		}
		k++
		for k < len(d) && strPlain[d[k]] {
			k++
		}
		if k+1 >= len(d) || d[k] != '"' || d[k+1] != ':' {
			return -1
		}
		if key := d[i+2 : k]; len(key) == len("sessionUpdate") && bytes.EqualFold(key, []byte("sessionUpdate")) {
			return -1
		}
		j := k + 2
		if j < len(d) && d[j] == '"' {
			i, _, _ = validStringFlags(d, j)
		} else {
			i = ValidValue(d, j, 3)
		}
		if i < 0 {
			return -1
		}
	}
	if i >= len(d) || d[i] != '}' {
		return -1
	}
	return i
}

// fastString validates the string at d[i] and returns the index past it
// and the literal, or -1.
func (p *peeker) fastString(i int) (int, []byte) {
	end, _, _ := validStringFlags(p.d, i)
	if end < 0 {
		return -1, nil
	}
	return end, p.d[i:end]
}

// hasAt reports whether d holds lit at i.
func hasAt(d []byte, i int, lit string) bool {
	return i >= 0 && len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit
}
