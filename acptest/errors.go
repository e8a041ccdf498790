package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error is a JSON-RPC error object. The client's error replies to the agent's
// own requests surface as *Error (use [errors.As]); a script or handler that
// returns an *Error has it sent to the client with its code and data
// unchanged. Any other error returned by a script is sent as -32603.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("acptest: error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 && string(e.Data) != "null" {
		s += " (" + string(e.Data) + ")"
	}
	return s
}

// Error codes used by the agent. The client may reply with any integer.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
)

// ErrClosed is returned by the agent's sending methods once the connection is
// closed (the client went away, Close was called, or the script crashed it).
var ErrClosed = errors.New("acptest: connection closed")

// Errorf returns an *Error with the given code and a formatted message, for
// scripts that want the client to see a specific error.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorObject is how err is sent on the wire.
func errorObject(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
