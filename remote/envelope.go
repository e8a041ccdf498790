package remote

import (
	"bytes"

	"github.com/acpclient/acp/internal/jsonscan"
)

// envelope is what the transport reads of a message to route it: the
// top-level fields, aliasing the message, without decoding the rest.
type envelope struct {
	id        []byte // raw JSON; nil when absent
	method    string
	sessionID string // params.sessionId (requests, notifications) or result.sessionId (responses)
	hasResult bool
}

// peek reads msg's envelope; a message it cannot read yields a zero one
// (the client reports it).
func peek(msg []byte) envelope {
	var env envelope
	var params, result []byte
	s := jsonscan.NewObj(msg, false)
	for {
		key, plain, val, more := s.Next()
		if !more {
			break
		}
		k := string(key)
		if !plain {
			// "\u0069d" is "id" to the client's decoder: routing must
			// read the same message the client does (FuzzEnvelope).
			if u, ok := jsonscan.Unquote(append(append([]byte{'"'}, key...), '"')); ok {
				k = u
			}
		}
		switch k {
		case "id":
			if !bytes.Equal(val, []byte("null")) {
				env.id = val
			}
		case "method":
			env.method, _ = jsonscan.Unquote(val)
		case "params":
			params = val
		case "result":
			result, env.hasResult = val, true
		}
	}
	src := params
	if env.method == "" {
		src = result
	}
	if len(src) > 0 {
		if v, found, _ := jsonscan.FindKey(src, "sessionId"); found {
			env.sessionID, _ = jsonscan.Unquote(v)
		}
	}
	return env
}

// isRequest: a request, which its receiver answers.
func (e *envelope) isRequest() bool { return e.method != "" && e.id != nil }

// isResponse: an answer to a request.
func (e *envelope) isResponse() bool { return e.method == "" && e.id != nil }

// idKey is a request id as a map key.
func idKey(id []byte) string { return string(bytes.TrimSpace(id)) }
