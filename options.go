package acp

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/acpclient/acp/schema"
)

// ClientOptions: what a client offers the agent and how it treats it.
// Capabilities follow the handlers that are set; the zero value offers
// nothing and refuses every permission.

// ClientOptions configure a [Client]. A nil *ClientOptions is valid: the
// client then advertises no optional capability and answers permission
// requests by rejecting (see [ClientOptions.Permission]).
//
// Every handler is called on a goroutine of its own, never on the goroutine
// that reads the agent's output, so a handler may block (a permission dialog
// may wait for minutes) without delaying updates or other requests. Handlers
// may call back into the client. A handler's context is cancelled when the
// agent withdraws the request ($/cancel_request), when the turn it belongs to
// is cancelled (permission requests), and when the connection closes. A
// panicking handler becomes a -32603 error reply.
type ClientOptions struct {
	// ProtocolVersion is the highest ACP version the client offers: 1 (the
	// zero value selects it) or 2. Offered 2, the client takes what the
	// agent picks, 1 or 2 (see [Client.ProtocolVersion]); the same
	// sessions, turns, events and handlers serve both. v2 has no client fs
	// or terminal methods: with a v2 agent, FS and Terminal are not
	// offered. Any other value fails Connect with ErrUnsupportedVersion.
	// Unstable: ACP v2 is in Preview; may change.
	ProtocolVersion int

	// ClientInfo is sent in initialize. Zero means {Name: "acp-go", Version: Version}.
	ClientInfo *schema.Implementation

	// Permission answers session/request_permission. Nil means
	// [RejectAll]: a reject option is chosen, never an allow one. Ready
	// policies: [RejectAll], [AllowAll], [CancelAll], [RememberAlways],
	// [OneAtATime].
	Permission PermissionHandler

	// FS serves fs/read_text_file and fs/write_text_file; each is
	// advertised exactly when its handler is set. workspace.FS serves them
	// confined to the session's directories.
	FS FileSystemHandlers

	// Terminal serves terminal/*, advertised as terminal: true when all five
	// request handlers are set, and holds the hooks the client calls when a
	// session or the client closes. workspace.Terminals is a ready one.
	Terminal TerminalHandlers

	// Elicitation serves elicitation/create in the modes it enables.
	Elicitation *ElicitationHandlers

	// ExtMethod serves the agent's extension requests (methods starting with
	// "_"). Nil answers them -32601.
	ExtMethod ExtMethodHandler

	// ExtNotification receives the agent's extension notifications, one at a
	// time in wire order, on a goroutine of the client's (not the reader).
	// While it is slow, at most Limits.MaxQueuedEvents callbacks wait; the
	// rest are dropped and counted in a "limit_exceeded" diagnostic.
	ExtNotification ExtNotificationHandler

	// MCP serves the MCP servers the client hosts and declares as
	// [*schema.MCPServerACP]: the agent's mcp/message requests. The zero value
	// answers them -32601. Nothing is advertised: the agent says whether it
	// can reach such servers (MCPCapabilities.ACP). Unstable: follows
	// schema.unstable.json; may change.
	MCP MCPHandlers

	// BooleanConfigOptions advertises session.configOptions.boolean: the
	// agent may then offer boolean config options.
	BooleanConfigOptions bool

	// PlanOperations advertises clientCapabilities.plan: the agent may then
	// send plan_update and plan_removed (several plans by id, markdown
	// plans) instead of the legacy plan update. Both are folded either way
	// (SessionState.Plans, PlanContent, Plan).
	PlanOperations bool

	// Subagents advertises clientCapabilities.subagents: the agent may then
	// expose the subagents it delegates to as child sessions, which the
	// client keeps as Sessions of their own (Session.Children,
	// Session.Parent, Client.Session; SessionState.Subagents), with
	// turns the agent starts; and it may send session_message and
	// session_message_chunk (TurnState.SessionMessages). Off by default:
	// with it, the agent reports a child's work on the child session, not
	// the parent's turn, so a caller that watches only the turns it
	// prompted would miss it. Without it, those kinds are protocol
	// violations, dropped and reported (DiagProtocolViolation). A v2
	// agent (ProtocolVersion 2, negotiated) gets child sessions without
	// it: v2 makes them baseline, with no client capability.
	Subagents bool

	// Notices advertises session.notices: the agent may then send notice
	// updates for the user (SessionState.Notice; shown by the caller).
	Notices bool

	// Compaction advertises session.compaction: the agent may then report
	// its context compactions (SessionState.Compaction).
	Compaction bool

	// OnAuthStatus receives each auth status the agent notifies
	// (auth/status_update, or an _auth/status_update in the same shape),
	// one at a time in wire order on a goroutine of the client's, from
	// Connect on (codex-acp notifies one right after initialize);
	// Client.AuthStatus asks for the current one. Unstable: follows
	// schema.unstable.json; may change.
	OnAuthStatus func(schema.AuthStatus)

	// TerminalAuth advertises auth.terminal: the agent may then offer
	// terminal login methods, which the caller runs (see TerminalAuthMethod).
	TerminalAuth bool

	// PositionEncodings lists the position encodings the editor can use for
	// next-edit suggestions, preferred first, advertised as
	// clientCapabilities.positionEncodings. The agent picks one
	// (nes.PositionEncoding); empty means utf-16 only. Unstable:
	// follows schema.unstable.json; may change.
	PositionEncodings []schema.PositionEncodingKind

	// CapabilitiesMeta is sent as clientCapabilities._meta (custom
	// capabilities).
	CapabilitiesMeta json.RawMessage

	// Limits bound everything the agent controls; the zero value selects
	// safe defaults. See [Limits].
	Limits Limits

	// CancelGrace is how long a cancelled turn waits for the agent's answer
	// before it ends locally with ErrCancelGrace. Zero means 10s.
	CancelGrace time.Duration

	// Logger receives diagnostics (junk lines, unknown updates, dropped late
	// answers) at Warn level. Nil discards them unless OnDiagnostic is set.
	Logger *slog.Logger

	// OnDiagnostic receives the same diagnostics as values, in order, on a
	// goroutine of the client's (never the reader). For tests and UIs. It
	// shares a bounded queue with ExtNotification (Limits.MaxQueuedEvents):
	// diagnostics dropped while it was full are counted in one
	// "limit_exceeded" diagnostic once it has drained.
	OnDiagnostic func(Diagnostic)

	// Trace, if set, receives every frame in and out and every stderr line
	// as JSON lines; see [TraceWriter].
	Trace *TraceWriter

	// Observer, if set, watches calls, agent requests and turns for
	// tracing and metrics, and adds trace context to outgoing _meta; see
	// [Observer] (the otelacp module maps it onto OpenTelemetry).
	Observer *Observer

	// Restart, if set, supervises the agent: when it exits or its
	// connection drops without Close, the client reconnects through its
	// Transport, initializes and authenticates again and restores every
	// open session (session/resume where the agent offers it, else
	// session/load, reconciled with what the client already folded; else
	// the session ends with ErrSessionLost). The turn in flight ends with
	// ErrAgentRestarted; calls made meanwhile wait. Nil (the default):
	// the client ends with its agent, as Err says. See [RestartPolicy]
	// and docs/SUPERVISION.md.
	Restart *RestartPolicy
}
