package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/acpclient/acp/internal/jsonscan"
)

// envelope is the little of a JSON-RPC message the gateway reads to route
// it: everything else passes through untouched, and is only scanned, not
// copied (params and result can be large: a session/load replay, a diff).
// It is read by jsonscan.Peek, the reader the client's own engine uses, so
// the gateway routes a message exactly as the client reads it; its slices
// alias the line.
type envelope struct{ jsonscan.Envelope }

// parseEnvelope reads the routing fields of one JSON object. ok is false
// for anything but an object, and for a message the client would refuse
// as ambiguous (a routing member repeated or written in another case) or
// whose method is not a string.
func parseEnvelope(b []byte) (e envelope, ok bool) {
	env, err := jsonscan.Peek(b)
	if err != nil {
		return envelope{}, false
	}
	return envelope{env}, true
}

// updateOpening is how most agents begin a session/update notification
// (the method is its second member: a message with a method is no
// response, whatever follows).
var updateOpening = []byte(`{"jsonrpc":"2.0","method":"session/update","params":`)

// hasID reports whether the message has an "id" member (null counts).
func (e *envelope) hasID() bool { return e.ID != nil }

// isRequest: a method and an id.
func (e *envelope) isRequest() bool { return e.HasMethod && e.hasID() }

// isResponse: an id, no method, and a result or an error.
func (e *envelope) isResponse() bool {
	return !e.HasMethod && e.hasID() && (e.Result != nil || e.Error != nil)
}

// method is the method name, "" if none.
func (e *envelope) method() string { return e.Method }

// sessionID is params.sessionId when it is a string.
func (e *envelope) sessionID() (string, bool) { return string(e.SessionID), e.HasSession }

// idKey is the routing key of a JSON-RPC id: "s:" and the string, "n:" and
// the number's text, or "null". ok is false for ids of any other type and
// for ids over maxIDBytes.
func idKey(id json.RawMessage) (key string, ok bool) {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || len(id) > maxIDBytes+2 {
		return "", false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(id, &s) != nil || len(s) > maxIDBytes {
			return "", false
		}
		return "s:" + s, true
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if json.Unmarshal(id, &n) != nil {
			return "", false
		}
		return "n:" + string(id), true
	case bytes.Equal(id, []byte("null")):
		return "null", true
	}
	return "", false
}

// sessionScopedMethods are the client→agent methods that must carry
// Acp-Session-Id even when their params lack sessionId: the TypeScript
// server's list (protocol.js SESSION_SCOPED_METHODS). Any message whose
// params carry a sessionId needs the header too.
var sessionScopedMethods = map[string]bool{
	"session/cancel":            true,
	"session/close":             true,
	"session/delete":            true,
	"session/fork":              true,
	"session/load":              true,
	"session/prompt":            true,
	"session/resume":            true,
	"session/set_config_option": true,
	"session/set_mode":          true,
	"session/set_model":         true,
}

// rpcError is a JSON-RPC error response with the given id (raw JSON).
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}
