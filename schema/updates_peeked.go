package schema

import (
	"bytes"

	"github.com/acpclient/acp/internal/jsonscan"
)

// The decoder of a session/update whose line the reader has already
// peeked (jsonscan.Peek): the peek found params' sessionId, update, _meta
// and the update's kind in its one pass over the line, so this decoder
// walks nothing of params again and goes straight to the kind's decoder.
// Its result is DecodeNotification's, whatever the input (FuzzDecodeNotification
// holds the two equal); for any shape the peek did not read exactly it is
// DecodeNotification itself.

func init() { jsonscan.DecodePeeked = decodePeeked }

// decodePeeked decodes params, a session/update's, of which Peek read u.
// The notification's SessionID is known when u's id is that string (a
// session the caller knows: no copy of the id is made).
func decodePeeked(version int, params []byte, peek jsonscan.Update, known string) (SessionNotification, error) {
	u := &peek
	if !u.Exact || u.Kind == nil {
		return DecodeNotification(version, params)
	}
	n := SessionNotification{SessionID: known}
	if string(u.SessionID) != known {
		n.SessionID = string(u.SessionID)
	}
	if u.Meta != nil {
		n.Meta = bytes.Clone(u.Meta)
	}
	var ok bool
	if version == 2 {
		n.Update, ok = decodePeekedV2(u)
	} else {
		n.Update, ok = decodePeekedV1(u)
	}
	if !ok {
		m, err := DecodeNotification(version, params)
		if m.SessionID == n.SessionID {
			m.SessionID = n.SessionID // known's string, as above
		}
		return m, err
	}
	return n, nil
}

// decodePeekedV1 is decodeNotificationMeta's fast paths, chosen by kind.
func decodePeekedV1(u *jsonscan.Update) (Update, bool) {
	switch string(u.Kind) {
	case "tool_call_update":
		if up, ok := decodeToolCallUpdate(u.Body); ok {
			return up, true
		}
	case "tool_call":
		if up, ok := decodeToolCall(u.Body); ok {
			return up, true
		}
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if up, ok := peekedTextChunk(u); ok {
			return up, true
		}
	}
	up, err := decodeUpdate(u.Body)
	return up, err == nil
}

// decodePeekedV2 is decodeNotificationV2's paths for the kinds that need
// no v2 mapping beyond what the kind says; the rest is left to it.
func decodePeekedV2(u *jsonscan.Update) (Update, bool) {
	switch string(u.Kind) {
	case "config_option_update", "subagent_update":
		return nil, false
	case "tool_call_update":
		// fastUpsert read from the walk when it can (readsAsV1), else
		// from the bytes.
		t, walked := walkTool(u.Body, "tool_call_update", true)
		if !(walked && t.readsAsV1()) && !fastUpsert(u.Body) {
			return nil, false
		}
		var up Update
		ok := false
		if walked {
			up, ok = t.toolCallUpdate()
		}
		if !ok {
			var err error
			up, err = decodeUpdate(u.Body)
			ok = err == nil
		}
		// v1's reading of it, whichever decoder made it: when v2 reads it
		// otherwise (upsertReadAsV2), the v2 decoder takes it, once.
		if !ok || !upsertReadAsV2(up, u.Body) {
			return nil, false
		}
		return up, true
	}
	if !isV2Kind(u.Kind) {
		return decodePeekedV1(u)
	}
	up, err := decodeUpdateV2(string(u.Kind), u.Body)
	return up, err == nil
}

// peekedTextChunk makes the plain text chunk Peek found (u.Chunk), as
// decodeTextChunk makes it, without scanning the update again.
func peekedTextChunk(u *jsonscan.Update) (Update, bool) {
	if u.Chunk == jsonscan.ChunkNone {
		return nil, false
	}
	var id string
	if u.MsgID != nil {
		var ok bool
		if id, ok = jsonscan.Unquote(u.MsgID); !ok {
			return nil, false
		}
	}
	t, ok := jsonscan.Unquote(u.Text)
	if !ok {
		return nil, false
	}
	switch u.Chunk {
	case jsonscan.ChunkMessage:
		return AgentMessageText(id, t), true
	case jsonscan.ChunkThought:
		return AgentThoughtText(id, t), true
	}
	return UserMessageText(id, t), true
}
