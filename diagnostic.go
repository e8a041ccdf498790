package acp

// DiagnosticKind says what a [Diagnostic] is about. The set grows: a
// consumer should treat an unknown kind as a warning worth logging.
type DiagnosticKind string

// The kinds of [Diagnostic] the client reports. None of them ends the
// connection.
const (
	// DiagBlankLine: a blank line on the agent's stdout was skipped.
	DiagBlankLine DiagnosticKind = "blank_line"
	// DiagJunkLine: a line (or batch item) that is not JSON, or not a
	// JSON-RPC message, was skipped; Line holds it.
	DiagJunkLine DiagnosticKind = "junk_line"
	// DiagLineTooLong: a line over [Limits.MaxLineBytes] was discarded; a
	// call it answered fails with [ErrLineTooLong].
	DiagLineTooLong DiagnosticKind = "line_too_long"
	// DiagBadRequest: an agent request with an invalid id was skipped
	// (there is no id to answer).
	DiagBadRequest DiagnosticKind = "bad_request"
	// DiagOrphanError: the agent sent an error response with a null id,
	// which answers nothing the client sent.
	DiagOrphanError DiagnosticKind = "orphan_error"
	// DiagBadNotification: a known notification with malformed params was
	// ignored (e.g. $/cancel_request without a requestId).
	DiagBadNotification DiagnosticKind = "bad_notification"
	// DiagUnknownNotification: a notification of a method the client does
	// not know was ignored (extension notifications go to their handler).
	DiagUnknownNotification DiagnosticKind = "unknown_notification"
	// DiagBadUpdate: a session/update that did not decode was kept as an
	// [schema.UnknownUpdate].
	DiagBadUpdate DiagnosticKind = "bad_update"
	// DiagUnknownUpdate: an update of a kind this package does not know was
	// kept as an [schema.UnknownUpdate].
	DiagUnknownUpdate DiagnosticKind = "unknown_update"
	// DiagLateResponse: the agent answered a cancelled prompt after the
	// cancel grace period had ended the turn, or sent a response for no
	// pending call of the client's (an unknown id, a second answer to one
	// id, the answer to a call whose caller gave up); the answer was ignored.
	DiagLateResponse DiagnosticKind = "late_response"
	// DiagLimitExceeded: something the agent sent or asked for went over
	// one of the client's [Limits] or a handler's limit; the agent was
	// answered with an error wrapping [schema.ErrLimitExceeded].
	DiagLimitExceeded DiagnosticKind = "limit_exceeded"
	// DiagDuplicateID: an agent request reused the id of one of its
	// requests that is still pending; it was answered -32600 and not served,
	// so the pending one stays answerable (and cancellable) under its id.
	DiagDuplicateID DiagnosticKind = "duplicate_id"
	// DiagInvalidPermissionAnswer: the permission handler chose an option
	// the agent did not offer, or an outcome other than selected or
	// cancelled. The agent was answered -32603 (never an allow).
	DiagInvalidPermissionAnswer DiagnosticKind = "invalid_permission_answer"
	// DiagInvalidElicitationAnswer: the elicitation handler accepted a form
	// with content that does not match the requested schema. The agent was
	// answered -32603 instead; the message names the fields at fault.
	DiagInvalidElicitationAnswer DiagnosticKind = "invalid_elicitation_answer"
	// DiagDuplicateSessionID: the agent answered session/new or
	// session/fork with the id of a session already open on this client;
	// the call failed with [ErrDuplicateSessionID] and the open session was
	// left as it was.
	DiagDuplicateSessionID DiagnosticKind = "duplicate_session_id"
	// DiagUnknownMCPServer: the agent sent mcp/message for a serverId the
	// client did not declare as an [*schema.MCPServerACP] on this connection. It was
	// answered -32602; MCPHandlers.Message did not run.
	DiagUnknownMCPServer DiagnosticKind = "unknown_mcp_server"
	// DiagDuplicateMCPRequest: the agent sent mcp/message with a requestId
	// already active on the same server. It was answered -32602;
	// MCPHandlers.Message did not run for it.
	DiagDuplicateMCPRequest DiagnosticKind = "duplicate_mcp_request"
	// DiagBadSuggestion: a suggestion in an nes/suggest answer did not
	// decode (a known kind with a missing or malformed field, or a value
	// that is not an object). It was dropped; the others were delivered.
	DiagBadSuggestion DiagnosticKind = "bad_suggestion"
	// DiagForeignSuggestion: a suggestion in an nes/suggest answer was for
	// another document than the one asked about (its uri is not
	// nes.SuggestRequest.URI, byte for byte) and nes.SuggestRequest.AllowURI
	// did not allow it. It was dropped; the others were delivered.
	DiagForeignSuggestion DiagnosticKind = "foreign_suggestion"

	// DiagObserverPanic: a ClientOptions.Observer callback panicked. The
	// panic was recovered where it happened; the call, request or update
	// it observed went on as if that callback were unset (a call without
	// the trace context it would have injected, a turn no longer
	// observed).
	DiagObserverPanic DiagnosticKind = "observer_panic"
)

// Diagnostic reports something the client tolerated: input it skipped or
// could not fully decode, or an answer that came too late to use.
type Diagnostic struct {
	Kind    DiagnosticKind // one of the Diag* constants
	Message string
	Line    string // the offending input, cut to 512 bytes; may be empty
	// SessionID is the session the diagnostic is about, when it is about
	// one the client could tell; "" otherwise.
	SessionID string
}
