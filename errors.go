package acp

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
)

// Error is an error reply received from, or sent to, the peer: a JSON-RPC 2.0
// error object. Use [errors.As] to get at it:
//
//	var e *acp.Error
//	if errors.As(err, &e) && e.Code == acp.CodeAuthRequired { ... }
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

// Sentinel errors. They are returned wrapped (with the method name and the
// cause), so test them with [errors.Is].
var (
	// ErrConnClosed: the connection to the agent ended (the agent exited,
	// closed its stdout, or Close was called). When the agent process died the
	// error also wraps an *[ExitError] with its exit status and stderr tail.
	// With ClientOptions.Restart an agent's death is ErrAgentRestarted
	// instead, until the client gives up (ErrTooManyRestarts) or is closed.
	ErrConnClosed = errors.New("acp: connection closed")

	// ErrNotSupported: the agent did not advertise the capability the call
	// needs (loadSession, sessionCapabilities.*, auth.logout, a prompt
	// content type). Nothing was sent.
	ErrNotSupported = errors.New("acp: not supported by the agent")

	// ErrUnsupportedVersion: the agent answered initialize with a protocol
	// version this package does not speak. The connection is closed.
	ErrUnsupportedVersion = errors.New("acp: unsupported protocol version")

	// ErrTurnInProgress: Prompt was called while the session's previous turn
	// had not ended. Turns are not queued: wait for the running one (or
	// cancel it) first.
	ErrTurnInProgress = errors.New("acp: a turn is already running in this session")

	// ErrLineTooLong: a line from the agent exceeded the configured cap.
	// A call whose response was on that line fails with this error.
	ErrLineTooLong = errors.New("acp: line exceeds the size limit")

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

	// ErrSessionClosed: the session was closed or released on this client
	// (Session.Close, Session.Release); nothing was sent.
	ErrSessionClosed = errors.New("acp: session closed")

	// ErrTurnEnded: the turn ended before what was waited for happened
	// (Turn.WaitFor).
	ErrTurnEnded = errors.New("acp: the turn ended")

	// ErrDuplicateSessionID: the agent answered session/new or
	// session/fork with the id of a session that is open on this client.
	// The call fails; the open session keeps its routing, roots and state.
	// Nothing is sent to the agent (a session/close would name the open
	// session too).
	ErrDuplicateSessionID = errors.New("acp: the agent answered with the id of a session already open on this client")

	// ErrCancelGrace: a cancelled turn was ended locally because the agent
	// did not answer session/prompt within the cancel grace period.
	ErrCancelGrace = errors.New("acp: agent did not answer the cancelled prompt in time")

	// ErrAgentRestarted: the agent died (or its connection dropped) while
	// the call or turn was in flight, and the client restarts it
	// (ClientOptions.Restart). The turn keeps what it had folded; the
	// session is restored, so the next Prompt works. It wraps what ended
	// the connection (an *[ExitError] for an agent process), not
	// ErrConnClosed: the client lives on.
	ErrAgentRestarted = errors.New("acp: the agent restarted")

	// ErrSessionLost: after a restart of the agent the session could not
	// be brought back (the agent offers neither session/resume nor
	// session/load, or refused them). The session is released on the
	// client; the error is its Session.Err and that of every later call
	// on it, and names the session.
	ErrSessionLost = errors.New("acp: the session was lost when the agent restarted")

	// ErrTooManyRestarts: the agent died more often than
	// RestartPolicy.MaxRestarts within RestartPolicy.Window, or could not
	// be restarted that often: the client ends, and Client.Err wraps
	// this, ErrConnClosed and the last death's cause (an *[ExitError]
	// with the exit status and stderr tail).
	ErrTooManyRestarts = errors.New("acp: the agent died too often")
)

// ExitError reports how the agent process ended. It is wrapped, together with
// [ErrConnClosed] (or [ErrAgentRestarted] under ClientOptions.Restart), in the
// error of every call that was pending when the agent died.
type ExitError struct {
	// Status is the process's exit status as os.ProcessState.String words it
	// ("exit status 3", "signal: killed").
	Status string
	// ExitCode is the exit code, or -1 if the process was killed by a signal.
	ExitCode int
	// StderrTail is the last bytes (up to 64 KiB) the agent wrote to stderr.
	StderrTail string
}

func (e *ExitError) Error() string {
	s := "agent " + e.Status
	if tail := lastLines(e.StderrTail, 5); tail != "" {
		s += "; stderr tail:\n" + tail
	}
	return s
}

// callError wraps err with the method it failed. The message has one "acp:"
// prefix: the sentinels, *Error and the decoding errors carry their own, so
// that they read well alone, and it is dropped here rather than repeated.
func callError(method string, err error) error {
	return &methodError{method: method, err: err}
}

type methodError struct {
	method string
	err    error
}

func (e *methodError) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), "acp: ")
	// A cause wrapped further in ("decoding the result: acp: ...") loses
	// its prefix too, unless the message holds the agent's own words (an
	// error reply, its stderr), which are shown as sent.
	var agentErr *Error
	var exitErr *ExitError
	if !errors.As(e.err, &agentErr) && !errors.As(e.err, &exitErr) {
		msg = strings.ReplaceAll(msg, ": acp: ", ": ")
	}
	return "acp: " + e.method + ": " + msg
}

func (e *methodError) Unwrap() error { return e.err }
