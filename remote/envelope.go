package remote

import (
	"bytes"
	"errors"

	"github.com/acpclient/acp/internal/jsonscan"
)

// envelope is what the transport reads of a message to route it: the
// top-level fields, aliasing the message, without decoding the rest.
type envelope struct {
	id        []byte // raw JSON; nil when absent or null
	method    string
	sessionID string // params.sessionId (requests, notifications) or result.sessionId (responses)
	hasResult bool
}

// peek reads msg's envelope with jsonscan.Peek, the reader the client's
// engine uses on the same messages, so routing reads what the client reads.
// A message it cannot read, or one the client refuses as ambiguous (a
// routing member repeated or written in another case), yields a zero
// envelope (the client reports it). A method that is not a string reads as
// none, the rest of the envelope being routed as usual.
func peek(msg []byte) envelope {
	e, err := jsonscan.Peek(msg)
	if err != nil && !errors.Is(err, jsonscan.ErrMethod) {
		return envelope{}
	}
	env := envelope{method: e.Method, hasResult: e.Result != nil}
	if string(e.ID) != "null" {
		env.id = e.ID
	}
	if e.Method != "" {
		env.sessionID = string(e.SessionID)
	} else {
		env.sessionID = string(e.ResultSessionID)
	}
	return env
}

// isRequest: a request, which its receiver answers.
func (e *envelope) isRequest() bool { return e.method != "" && e.id != nil }

// isResponse: an answer to a request.
func (e *envelope) isResponse() bool { return e.method == "" && e.id != nil }

// idKey is a request id as a map key.
func idKey(id []byte) string { return string(bytes.TrimSpace(id)) }
