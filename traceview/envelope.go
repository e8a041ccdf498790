package traceview

import (
	"encoding/json"

	"github.com/acpclient/acp/internal/jsonscan"
)

// How the viewer reads one frame's JSON-RPC envelope: by the peeker the
// client routes by, so the page and the client never disagree on a line.

// envelope is a JSON-RPC message, decoded only as far as the page needs.
// The raw members alias the frame's message.
type envelope struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *rpcError
}

// rpcError is an error response's error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// peekEnvelope reads msg with jsonscan.Peek, the reader the client's
// engine routes by, so the page shows a frame as the client read it: a
// message the client refuses (ambiguous routing members, a method that is
// no string) is not a JSON-RPC message here either. Only an error object
// is decoded further.
func peekEnvelope(msg []byte) (envelope, error) {
	e, err := jsonscan.Peek(msg)
	if err != nil {
		if err == jsonscan.ErrSyntax {
			var v any
			if jerr := json.Unmarshal(msg, &v); jerr != nil {
				return envelope{}, jerr // encoding/json's words for it
			}
		}
		return envelope{}, err
	}
	m := envelope{ID: e.ID, Method: e.Method, Params: e.Params, Result: e.Result}
	if e.Error != nil && string(e.Error) != "null" {
		m.Error = new(rpcError)
		if err := json.Unmarshal(e.Error, m.Error); err != nil {
			return envelope{}, err
		}
	}
	return m, nil
}
