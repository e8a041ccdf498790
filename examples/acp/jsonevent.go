// jsonevent.go writes --json's update events: a plain text chunk's by
// hand, the bulk of a turn, every other through encoding/json, the same
// bytes either way.
package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/acpclient/acp/schema"
)

// appendUpdateEvent appends e as emit writes it (json.Encoder: the
// marshalled line and a newline) when its update is a plain text chunk
// (see appendTextChunk), and reports false, appending nothing, for any
// other update. Through encoding/json such a line cost two marshals (the
// event's, the chunk's MarshalJSON, then its content's), a compaction of
// each and a dozen allocations: most of what --json cost per chunk.
// TestUpdateEventJSONIsEncodingJSON and FuzzUpdateEventJSON hold it to
// encoding/json's bytes.
func appendUpdateEvent(dst []byte, e *updateEvent) ([]byte, bool) {
	if !plainTextChunk(e.Update) {
		return dst, false
	}
	dst = append(dst, `{"event":`...)
	dst = appendJSONString(dst, e.Event)
	if e.Origin != "" {
		dst = append(dst, `,"origin":`...)
		dst = appendJSONString(dst, string(e.Origin))
	}
	if e.ParentSessionID != "" {
		dst = append(dst, `,"parentSessionId":`...)
		dst = appendJSONString(dst, e.ParentSessionID)
	}
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, `,"sessionId":`...)
	dst = appendJSONString(dst, e.SessionID)
	dst = append(dst, `,"update":`...)
	dst, _ = appendTextChunk(dst, e.Update)
	return append(dst, "}\n"...), true
}

// appendReplayEvent appends the update event of a session/load replay,
// as emit writes map[string]any{"event": "update", "sessionId": sid,
// "replay": true, "update": u}, when u is a plain text chunk, and reports
// false, appending nothing, otherwise.
func appendReplayEvent(dst []byte, sid string, u schema.Update) ([]byte, bool) {
	if !plainTextChunk(u) {
		return dst, false
	}
	dst = append(dst, `{"event":"update","replay":true,"sessionId":`...)
	dst = appendJSONString(dst, sid)
	dst = append(dst, `,"update":`...)
	dst, _ = appendTextChunk(dst, u)
	return append(dst, "}\n"...), true
}

// plainTextChunk reports whether appendTextChunk writes u.
func plainTextChunk(u schema.Update) bool {
	_, _, _, ok := textChunkParts(u)
	return ok
}

// textChunkParts returns the opening of a plain text chunk's JSON, up to
// its kind, its message id and its text, when u is one: an agent message,
// thought or user message chunk whose content is text with no
// annotations, neither with _meta.
func textChunkParts(u schema.Update) (open, id, text string, ok bool) {
	var c schema.ContentBlock
	switch u := u.(type) {
	case *schema.AgentMessageChunk:
		if u == nil || len(u.Meta) > 0 {
			return
		}
		open, id, c = `{"sessionUpdate":"agent_message_chunk"`, u.MessageID, u.Content
	case *schema.AgentThoughtChunk:
		if u == nil || len(u.Meta) > 0 {
			return
		}
		open, id, c = `{"sessionUpdate":"agent_thought_chunk"`, u.MessageID, u.Content
	case *schema.UserMessageChunk:
		if u == nil || len(u.Meta) > 0 {
			return
		}
		open, id, c = `{"sessionUpdate":"user_message_chunk"`, u.MessageID, u.Content
	default:
		return
	}
	t, isText := c.(*schema.TextContent)
	if !isText || t == nil || t.Annotations != nil || len(t.Meta) > 0 {
		return "", "", "", false
	}
	return open, id, t.Text, true
}

// appendTextChunk appends u as encoding/json marshals it when u is a
// plain text chunk (textChunkParts); otherwise it appends nothing and
// reports false.
func appendTextChunk(dst []byte, u schema.Update) ([]byte, bool) {
	open, id, text, ok := textChunkParts(u)
	if !ok {
		return dst, false
	}
	dst = append(dst, open...)
	dst = append(dst, `,"content":{"type":"text","text":`...)
	dst = appendJSONString(dst, text)
	dst = append(dst, '}')
	if id != "" {
		dst = append(dst, `,"messageId":`...)
		dst = appendJSONString(dst, id)
	}
	return append(dst, '}'), true
}

// jsonLine is encoding/json's Encoder writing into a buffer of its own,
// for the update events appendUpdateEvent does not write: one encoder and
// one buffer for the command's life, not one of each per event.
type jsonLine struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendTo appends v's line (newline included) to dst, or returns v's
// encoding error and dst unchanged.
func (j *jsonLine) appendTo(dst []byte, v any) ([]byte, error) {
	if j.enc == nil {
		j.enc = json.NewEncoder(&j.buf)
	}
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return dst, err
	}
	dst = append(dst, j.buf.Bytes()...)
	if j.buf.Cap() > 4*liveMax {
		j.buf = bytes.Buffer{} // a long line's buffer is not kept
		j.enc = nil
	}
	return dst, nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string, HTML
// escaping included (its default, and json.Encoder's): ", \ and the
// controls escaped (\b \f \n \r \t by name, the others as \u00XX), <, >
// and & as \u003c \u003e \u0026, U+2028 and U+2029 as \u2028 \u2029,
// and each byte that is not UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
