package schema

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/acpclient/acp/internal/agenttext"
)

// The protocol's errors: JSON-RPC 2.0 error replies with ACP's codes, and
// the sentinels [Error.Is] matches them to. The client's own errors are in
// errors.go.

// Error is an error reply received from, or sent to, the peer: a JSON-RPC 2.0
// error object. Use [errors.As] to get at it:
//
//	var e *schema.Error
//	if errors.As(err, &e) && e.Code == schema.CodeAuthRequired { ... }
//
// A handler that returns an *Error (possibly wrapped) has it sent to the agent
// with its code and data unchanged; any other handler error is sent as
// [CodeInternalError].
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error codes defined by JSON-RPC 2.0 and by ACP. The code space is open:
// [Error.Code] keeps whatever integer the peer sent.
const (
	CodeParseError       int64 = -32700
	CodeInvalidRequest   int64 = -32600
	CodeMethodNotFound   int64 = -32601
	CodeInvalidParams    int64 = -32602
	CodeInternalError    int64 = -32603
	CodeRequestCancelled int64 = -32800 // $/cancel_request or internal cancellation
	CodeAuthRequired     int64 = -32000 // the agent wants authenticate first
	CodeResourceNotFound int64 = -32002 // e.g. a file that does not exist
)

func (e *Error) Error() string {
	msg := "acp: agent error " + strconv.FormatInt(e.Code, 10)
	if name := codeName(e.Code); name != "" {
		msg += " (" + name + ")"
	}
	if e.Message != "" {
		msg += ": " + agenttext.Text(e.Message) // the agent chose its length; Message keeps it whole
	}
	if len(e.Data) > 0 && string(e.Data) != "null" {
		d := string(e.Data)
		if len(d) > 200 {
			d = d[:200] + "..."
		}
		msg += " " + d
	}
	return msg
}

// Is makes errors.Is(err, ErrAuthRequired) true for a -32000 reply and
// errors.Is(err, ErrResourceNotFound) true for a -32002 reply, so callers need
// not compare codes by hand.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrAuthRequired:
		return e.Code == CodeAuthRequired
	case ErrResourceNotFound:
		return e.Code == CodeResourceNotFound
	case ErrMethodNotFound:
		return e.Code == CodeMethodNotFound
	}
	return false
}

func codeName(code int64) string {
	switch code {
	case CodeParseError:
		return "parse error"
	case CodeInvalidRequest:
		return "invalid request"
	case CodeMethodNotFound:
		return "method not found"
	case CodeInvalidParams:
		return "invalid params"
	case CodeInternalError:
		return "internal error"
	case CodeRequestCancelled:
		return "request cancelled"
	case CodeAuthRequired:
		return "auth required"
	case CodeResourceNotFound:
		return "resource not found"
	}
	return ""
}

// Sentinel errors of the protocol: [Error.Is] matches each to its code,
// so they live beside it. Test them with [errors.Is].
var (
	// ErrUnsupportedVersion: the agent answered initialize with a protocol
	// version this package does not speak. The connection is closed.
	ErrUnsupportedVersion = errors.New("acp: unsupported protocol version")

	// ErrAuthRequired matches an agent's -32000 reply (see [Error.Is]).
	ErrAuthRequired = errors.New("acp: authentication required")

	// ErrResourceNotFound matches a -32002 reply; handlers may return it
	// (wrapped or not) to send -32002.
	ErrResourceNotFound = errors.New("acp: resource not found")

	// ErrMethodNotFound matches a -32601 reply.
	ErrMethodNotFound = errors.New("acp: method not found")

	// ErrLimitExceeded: something the agent sent or asked for went over one
	// of the client's [Limits] (or a handler's own limit). The agent is
	// answered with an error naming the limit; locally, a [Diagnostic] of
	// kind "limit_exceeded" reports it.
	ErrLimitExceeded = errors.New("acp: limit exceeded")
)
