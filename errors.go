package acp

import (
	"errors"
	"github.com/acpclient/acp/schema"
	"strings"
)

// The client's errors: what the client itself decides (a closed
// connection, a turn already running, a lost session), how an agent process
// ended, and how a call's error names its method. The protocol's error
// replies and their codes are in protocol_errors.go.

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

	// ErrTurnInProgress: Prompt was called while the session's previous turn
	// had not ended. Turns are not queued: wait for the running one (or
	// cancel it) first.
	ErrTurnInProgress = errors.New("acp: a turn is already running in this session")

	// ErrLineTooLong: a line from the agent exceeded the configured cap.
	// A call whose response was on that line fails with this error.
	ErrLineTooLong = errors.New("acp: line exceeds the size limit")

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
	var agentErr *schema.Error
	var exitErr *ExitError
	if !errors.As(e.err, &agentErr) && !errors.As(e.err, &exitErr) {
		msg = strings.ReplaceAll(msg, ": acp: ", ": ")
	}
	return "acp: " + e.method + ": " + msg
}

func (e *methodError) Unwrap() error { return e.err }
