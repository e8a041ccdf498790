package jsonscan

import "bytes"

// Scans of the two ACP shapes the client reads most, a session/update's
// params and a plain text chunk, shared by the protocol's decoder (schema)
// and the client's fast path, which folds a text chunk straight from the
// wire bytes. They find; they decode nothing, and they give up (ok false)
// on any shape they do not handle exactly, for the full decoder to judge.

// DecodePeeked is the protocol's decoder of a session/update's params
// that Peek has read (Envelope.Update), which walks none of params again:
// package schema sets it when it is initialised, to a
//
//	func(version int, params []byte, u Update, known string) (schema.SessionNotification, error)
//
// that gives what schema.DecodeNotification gives for params; known is a
// session id the caller holds, which the notification's SessionID is
// (the same string, not a copy) when u's id spells it. It is held
// as any because this package cannot name schema's types; the client
// asserts it to that type once.
var DecodePeeked any

// Chunk is the kind of a plain text chunk.
type Chunk uint8

// The kinds of plain text chunk. The zero value is none.
const (
	ChunkNone Chunk = iota
	ChunkMessage
	ChunkThought
	ChunkUser
)

// SplitNotification finds, in the validated params of a session/update,
// the session id (the inside of its string literal, a slice of params),
// the update object and the notification's own _meta (a copy; empty when
// present but not an object). ok is false for any shape it does not handle
// exactly (a duplicate or case-folded key, an escaped id), which the caller
// then decodes in full.
func SplitNotification(params []byte) (sid, update, meta []byte, ok bool) {
	s := NewObj(params, false)
	var sidRaw []byte
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return nil, nil, nil, false
		}
		switch string(key) {
		case "sessionId":
			if sidRaw != nil {
				return nil, nil, nil, false
			}
			sidRaw = val
		case "_meta":
			if meta != nil {
				return nil, nil, nil, false
			}
			if len(val) > 0 && val[0] == '{' {
				meta = bytes.Clone(val)
			} else {
				meta = []byte{}
			}
		case "update":
			if update != nil {
				return nil, nil, nil, false
			}
			update = val
		default:
			if FoldsLike(key, "sessionId") || FoldsLike(key, "update") || FoldsLike(key, "_meta") {
				return nil, nil, nil, false
			}
		}
	}
	if s.Bad() || sidRaw == nil || len(update) == 0 || update[0] != '{' {
		return nil, nil, nil, false
	}
	in, ok := Plain(sidRaw)
	if !ok {
		return nil, nil, nil, false
	}
	if len(meta) == 0 {
		meta = nil
	}
	return in, update, meta, true
}

// TextChunk finds, in a validated update, a plain text chunk without
// decoding it: a message, thought or user chunk whose content is a bare
// text block ({"type":"text","text":...}, no annotations, no _meta on
// either). It returns the chunk's kind, its messageId as a JSON string
// literal (nil when absent or not a string, which reads as no id) and its
// text as a JSON string literal; ok is false for anything else.
func TextChunk(data []byte) (k Chunk, msgID, text []byte, ok bool) {
	s := NewObj(data, false)
	var kind, content []byte
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return 0, nil, nil, false
		}
		var slot *[]byte
		switch string(key) {
		case "sessionUpdate":
			slot = &kind
		case "content":
			slot = &content
		case "messageId":
			slot = &msgID
		default:
			for _, k := range [...]string{"sessionUpdate", "content", "messageId", "_meta"} {
				if string(key) == "_meta" || FoldsLike(key, k) {
					return 0, nil, nil, false
				}
			}
			continue
		}
		if *slot != nil {
			return 0, nil, nil, false
		}
		*slot = val
	}
	if s.Bad() || kind == nil || content == nil {
		return 0, nil, nil, false
	}
	name, ok := Plain(kind)
	if !ok {
		return 0, nil, nil, false
	}
	switch string(name) {
	case "agent_message_chunk":
		k = ChunkMessage
	case "agent_thought_chunk":
		k = ChunkThought
	case "user_message_chunk":
		k = ChunkUser
	default:
		return 0, nil, nil, false
	}
	if text, ok = bareText(content); !ok {
		return 0, nil, nil, false
	}
	if len(msgID) == 0 || msgID[0] != '"' {
		msgID = nil
	}
	return k, msgID, text, true
}

// BareText returns the text, as a JSON string literal, of a validated
// {"type":"text","text":...} block with no annotations and no _meta; ok
// is false for any other value.
func BareText(data []byte) ([]byte, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	return bareText(data)
}

// bareText returns the text, as a JSON string literal, of a validated
// {"type":"text","text":...} block with no other known member.
func bareText(data []byte) ([]byte, bool) {
	s := NewObj(data, false)
	var typ, text []byte
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		if !plain {
			return nil, false
		}
		switch string(key) {
		case "type":
			if typ != nil {
				return nil, false
			}
			typ = val
		case "text":
			if text != nil {
				return nil, false
			}
			text = val
		default:
			for _, k := range [...]string{"type", "text", "annotations", "_meta"} {
				if string(key) == k || FoldsLike(key, k) {
					return nil, false
				}
			}
		}
	}
	if s.Bad() || string(typ) != `"text"` || len(text) == 0 || text[0] != '"' {
		return nil, false
	}
	return text, true
}
