package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
	"github.com/creachadair/jrpc2"
)

// ProtocolVersion is the ACP protocol version this package speaks.
const ProtocolVersion = 1

// Version is this SDK's version, sent as clientInfo.version by default.
const Version = "0.1.0"

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
	// one at a time in wire order on a goroutine of the client's; the
	// latest, notified or asked for with Client.AuthStatus, is also
	// Client.LastAuthStatus. Unstable: follows schema.unstable.json; may
	// change.
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

// Client is a connection to one ACP agent. It is safe for concurrent use.
//
// Create it with [Connect], which performs the initialize handshake; end it
// with [Client.Close].
type Client struct {
	opts      ClientOptions
	transport Transport
	// conn is the current connection to the agent: the first one, or the
	// latest a restart opened (restart.go). It is swapped under c.mu, and
	// read without it (atomically) by calls and the reader hooks; each
	// connection's own hooks know their connection.
	conn atomic.Pointer[agentConn]
	// ready is closed while conn is usable; a restart replaces it with an
	// open channel until the sessions are restored, and calls wait on it
	// (connFor). Guarded by mu.
	ready chan struct{}
	sup   *supervisor // nil unless ClientOptions.Restart is set
	// version is 2 once the agent answered initialize with version 2 (0
	// otherwise: v1). It is set on the reader goroutine, in wire order
	// (onInitAnswered), so every line after the answer is read in the
	// version it picked, and never changes after.
	version int

	events *engine.EventQueue // diagnostics and notifications, off the reader

	baseCtx    context.Context // ends when the connection ends
	baseCancel context.CancelFunc

	mu            sync.Mutex
	auth          *schema.AuthStatus          // the latest auth status heard of, under mu
	lastAuth      *schema.AuthenticateRequest // the last successful Authenticate, repeated by a restart
	sessions      map[string]*Session
	orphans       map[string][]orphan  // updates for session ids not registered yet
	orphanBytes   int                  // their notifications' total size
	subagents     int                  // child sessions registered (Limits.MaxSubagentSessions)
	subagentDrops int                  // announcements dropped past that limit
	prompts       map[string]*Turn     // in-flight session/prompt by request id
	creating      map[string]*creation // in-flight session/new and session/fork by request id
	sending       *Turn                // the prompt between Batch and the wire (holds promptSlot)
	promptSlot    chan struct{}        // one prompt at a time on its way into jrpc2
	deadPrompts   map[string]bool      // prompts ended locally; their late answers are ignored
	ended         bool                 // end ran: no prompt may register any more
	closing       bool                 // Close was called: no restart any more
	restoring     *Session             // the session a restart's load or resume is for (restore.go)

	mcp mcpRequests // declared MCP-over-ACP servers and active inner requests

	done      chan struct{} // closed when the connection has ended
	endOnce   sync.Once
	endErr    error          // why the connection ended (wraps ErrConnClosed)
	calls     sync.WaitGroup // prompt calls running in jrpc2
	closeOnce sync.Once
	closeErr  error
}

// Connect opens the transport, performs the initialize handshake and
// returns the connected client. No other request is sent before the agent
// has answered initialize. If the agent answers with a protocol version
// other than [ProtocolVersion], the connection is closed and the error wraps
// [schema.ErrUnsupportedVersion]. If ctx ends during the handshake, the connection
// is closed too.
func Connect(ctx context.Context, t Transport, opts *ClientOptions) (*Client, error) {
	c := &Client{
		sessions:   map[string]*Session{},
		orphans:    map[string][]orphan{},
		prompts:    map[string]*Turn{},
		creating:   map[string]*creation{},
		promptSlot: make(chan struct{}, 1),
		done:       make(chan struct{}),
	}
	if opts != nil {
		c.opts = *opts
	}
	if all, some := c.opts.Terminal.complete(); some && !all {
		return nil, errors.New("acp: ClientOptions.Terminal sets some of the five terminal handlers but not all; the terminal capability covers all five")
	}
	c.opts.Limits = c.opts.Limits.withDefaults()
	c.baseCtx, c.baseCancel = context.WithCancel(context.Background())
	c.events = engine.NewEventQueue(c.opts.Limits.MaxQueuedEvents, eventKinds, c.reportDropped)

	c.transport = t
	c.ready = make(chan struct{})
	close(c.ready)
	offered, err := c.opts.offeredVersion()
	if err != nil {
		c.events.Close()
		c.baseCancel()
		return nil, err
	}
	if c.opts.Restart != nil {
		c.sup = newSupervisor(c.opts.Restart)
	}
	g, err := c.dial(ctx, 1, offered)
	if err != nil {
		if g == nil {
			c.events.Close()
			c.baseCancel()
			return nil, err
		}
		c.conn.Store(g)
		c.abort()
		return nil, err
	}
	c.conn.Store(g)
	return c, nil
}

// abort closes a connection that never became usable. An agent subprocess
// is killed at once rather than shut down in stages: it holds no session
// worth a grace period, and the staged shutdown would keep Connect's caller
// waiting for seconds past its deadline.
func (c *Client) abort() {
	if p := c.conn.Load().link.proc; p != nil {
		p.kill()
	}
	c.Close()
}

// capabilities derives what the client advertises from the handlers that are
// set: an unset handler is never advertised.
func (c *Client) capabilities() schema.ClientCapabilities {
	var caps schema.ClientCapabilities
	caps.FS.ReadTextFile = c.opts.FS.ReadTextFile != nil
	caps.FS.WriteTextFile = c.opts.FS.WriteTextFile != nil
	caps.Terminal, _ = c.opts.Terminal.complete()
	caps.Auth.Terminal = c.opts.TerminalAuth
	if c.opts.BooleanConfigOptions || c.opts.Notices || c.opts.Compaction {
		caps.Session = &schema.ClientSessionCapabilities{}
		if c.opts.BooleanConfigOptions {
			caps.Session.ConfigOptions = &schema.SessionConfigOptionsCapabilities{Boolean: &schema.Capability{}}
		}
		if c.opts.Notices {
			caps.Session.Notices = &schema.Capability{}
		}
		if c.opts.Compaction {
			caps.Session.Compaction = &schema.Capability{}
		}
	}
	if c.opts.PlanOperations {
		caps.Plan = &schema.Capability{}
	}
	if c.opts.Subagents {
		caps.Subagents = &schema.Capability{}
	}
	if e := c.opts.Elicitation; e != nil && e.Create != nil && (e.Form || e.URL) {
		caps.Elicitation = &schema.ElicitationCapabilities{}
		if e.Form {
			caps.Elicitation.Form = &schema.Capability{}
		}
		if e.URL {
			caps.Elicitation.URL = &schema.Capability{}
		}
	}
	caps.PositionEncodings = c.opts.PositionEncodings
	caps.Meta = c.opts.CapabilitiesMeta
	return caps
}

// InitializeResponse returns the agent's answer to initialize: the
// protocol version negotiated (1, or 2 only when
// ClientOptions.ProtocolVersion offered 2; fixed once Connect returns), its
// capabilities, auth methods and info. The result must not be modified.
//
// After a restart (ClientOptions.Restart) it is the restarted agent's
// answer.
func (c *Client) InitializeResponse() *schema.InitializeResponse { return c.agent() }

// ClientCapabilities returns the capabilities the client advertises in
// initialize, derived from ClientOptions (an unset handler is never
// advertised). Packages built over the client read from it what the editor
// offered, as nes does the position encodings to settle which one the
// agent's choice means.
func (c *Client) ClientCapabilities() schema.ClientCapabilities { return c.capabilities() }

// agent returns the current connection's initialize answer.
func (c *Client) agent() *schema.InitializeResponse { return &c.conn.Load().init }

// Done is closed when the connection has ended: the agent exited or closed
// its output, or Close was called. With ClientOptions.Restart, an agent's
// death does not close it: it closes when Close is called or the client
// gives up restarting (see [RestartPolicy]).
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (wrapping [ErrConnClosed], and an
// [*ExitError] when the agent process died), or nil while it is open.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return nil
	}
}

// Wait blocks until the connection has ended and returns [Client.Err].
func (c *Client) Wait() error {
	<-c.done
	return c.endErr
}

// StderrTail returns the last 64 KiB the agent wrote to stderr (empty for a
// stream transport).
//
// After a restart it is the current agent process's, or, while the client
// waits to restart it, the dead one's.
func (c *Client) StderrTail() string {
	p := c.conn.Load().link.proc
	if p == nil {
		return ""
	}
	return p.stderrTail()
}

// Close ends the connection. Pending calls fail with ErrConnClosed, queued
// frames are flushed (bounded by the shutdown grace), the agent's stdin is
// closed, and an agent subprocess is shut down in stages (see
// [CommandTransport]). Close is idempotent and safe to call concurrently; it
// returns when no goroutine of the client is left and no process it started
// is running. It returns nil unless shutting down itself failed.
//
// Every diagnostic and notification queued for the client's callback
// goroutine (OnDiagnostic, the Logger, ExtNotification,
// Elicitation.Complete, MCP.Notify) before Close has been delivered when it
// returns, so Close waits for a callback that is still running.
//
// Close may be called from any callback. Called from a callback on that
// goroutine, it cannot wait for the goroutine it runs on: it returns once
// everything else has ended, and the goroutine delivers what is left and
// exits as soon as the callback returns.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.end(fmt.Errorf("%w: closed by the client", ErrConnClosed))
		if c.sup != nil {
			c.sup.stop() // a restart under way gives up and closes what it opened
		}
		c.conn.Load().shutdown()
		c.baseCancel()
		c.calls.Wait()
		if h := c.opts.Terminal.Close; h != nil {
			if err := h(); err != nil {
				c.closeErr = err
			}
		}
		c.events.Close()
		if c.opts.Trace != nil {
			c.opts.Trace.flush()
		}
	})
	return c.closeErr
}

// end records why the connection ended (first reason wins) and fails every
// turn still waiting for its answer.
func (c *Client) end(reason error) {
	c.endOnce.Do(func() {
		c.endErr = reason
		c.mu.Lock()
		c.ended = true // no prompt registers after this
		turns := make([]*Turn, 0, len(c.prompts))
		for id, t := range c.prompts {
			turns = append(turns, t)
			delete(c.prompts, id)
		}
		c.mu.Unlock()
		for _, t := range turns {
			t.fail(callError(schema.MethodSessionPrompt, reason))
		}
		c.failChildTurns(reason)
		close(c.done)
		c.baseCancel()
	})
}

// onEOF runs on g's reader goroutine when the agent's output has ended,
// before jrpc2 learns of it. It records why the connection ended, so that
// calls fail with that reason rather than jrpc2's context.Canceled. (The
// wire then waits until jrpc2 has delivered the responses it was handed.)
func (c *Client) onEOF(g *agentConn, err error) {
	cause := errors.New("the agent closed its output")
	if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
		cause = fmt.Errorf("reading from the agent: %w", err)
	}
	if p := g.link.proc; p != nil {
		// A dying agent's stdout closes a moment before its exit status is
		// known; wait for it, so the error can say how it died. An agent
		// that closes its stdout and lives on ends the connection when it
		// exits or Close is called.
		p.awaitExit(c.baseCtx.Done())
		if ee := p.exitError(); ee != nil {
			cause = ee
		}
	}
	c.connEnded(g, cause)
}

// onRPCStop is jrpc2's OnStop: its reader has stopped and will deliver
// nothing more. Usually that is because the connection is ending anyway
// (the agent's output ended, or Close); if jrpc2 stopped for any other
// reason, the connection ends here and now, so that Done closes, Err says
// why, and every pending call and turn fails instead of waiting forever.
func (c *Client) onRPCStop(g *agentConn, err error) {
	c.connEnded(g, fmt.Errorf("the JSON-RPC engine stopped reading: %v", err))
}

// call performs one request through jrpc2 and decodes its result into
// result (which may be nil).
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	_, err := c.callID(ctx, method, params, result)
	return err
}

// callID is call that also returns the call's request id (as JSON text;
// empty if the request never reached the wire).
//
// While a restart is under way (ClientOptions.Restart), the call waits for
// the restored connection, bounded by ctx (connFor).
func (c *Client) callID(ctx context.Context, method string, params, result any) (string, error) {
	g, err := c.connFor(ctx)
	if err != nil {
		return "", callError(method, err)
	}
	return c.callOn(ctx, g, method, params, result)
}

// callOn is callID on the connection g. Every call the client makes goes
// through it, a restart's initialize and restore included, so the
// Observer sees each one.
func (c *Client) callOn(ctx context.Context, g *agentConn, method string, params, result any) (_ string, err error) {
	params, end := c.observeCall(ctx, method, params, false)
	if end != nil {
		defer func() { end(err) }()
	}
	// A batch of one is sent as a plain request; unlike Call, Batch
	// returns the response (and so its id) whether the call failed or not.
	rsps, err := g.rpc.Batch(ctx, []jrpc2.Spec{{Method: method, Params: params}})
	if err != nil {
		return "", callError(method, c.mapSendErr(g, err))
	}
	rsp := rsps[0]
	id := rsp.ID()
	out := g.wire.Settle(id)
	if err := c.callErr(ctx, g, out, rsp.Error()); err != nil {
		return id, callError(method, err)
	}
	if result == nil {
		return id, nil
	}
	err = nil
	var raw json.RawMessage
	if err = rsp.UnmarshalResult(&raw); err == nil {
		err = schema.DecodeResult(c.version, raw, result)
	}
	if err != nil {
		return id, callError(method, fmt.Errorf("decoding the result: %w", agenttext.Error(err)))
	}
	return id, nil
}

// callErr decides why a call ended. The reader recorded whether the agent
// answered it; if not, jrpc2 failed it itself, which it does only when the
// caller's context ended or when it stopped (the connection is ending).
func (c *Client) callErr(ctx context.Context, g *agentConn, out engine.CallOutcome, je *jrpc2.Error) error {
	switch {
	case out.TooLong > 0:
		return fmt.Errorf("%w: the %d-byte response was discarded (Limits.MaxLineBytes is %d)", ErrLineTooLong, out.TooLong, c.opts.Limits.MaxLineBytes)
	case !out.Answered || (ctx.Err() != nil && je != nil && (je.Code == jrpc2.Cancelled || je.Code == jrpc2.DeadlineExceeded)):
		// Also when the answer lost jrpc2's race against the caller's
		// context: the caller gave up, whatever the agent said.
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		<-g.done // OnStop ends the connection, if nothing did before
		return g.endErr
	case je != nil:
		return c.authError(&schema.Error{Code: int64(je.Code), Message: je.Message, Data: je.Data})
	}
	return nil
}

// onCallAbandoned is jrpc2's OnCancel: the caller's context ended before the
// agent answered. Tell the agent it may stop working on it.
func (c *Client) onCallAbandoned(g *agentConn, rsp *jrpc2.Response) {
	select {
	case <-g.done:
		return
	default:
	}
	frame, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  schema.MethodCancelRequest,
		"params":  map[string]any{"requestId": json.RawMessage(rsp.ID())},
	})
	if err == nil {
		_ = g.wire.SendRaw(frame, true)
	}
}

// diag reports a diagnostic; it runs on the reader goroutine, so it only
// queues.
func (c *Client) diag(kind, msg string, line []byte) {
	c.diagIn("", kind, msg, line)
}

// deliverDiag runs on the callback goroutine.
func (c *Client) deliverDiag(d Diagnostic) {
	if c.opts.Logger != nil {
		logDiagnostic(c.opts.Logger, d)
	}
	if c.opts.OnDiagnostic != nil {
		c.opts.OnDiagnostic(d)
	}
}

// reportDropped runs on the callback goroutine once the queue has room
// again after callbacks were dropped.
func (c *Client) reportDropped(dropped []int) {
	if c.opts.Logger == nil && c.opts.OnDiagnostic == nil {
		return
	}
	var parts []string
	for k, n := range dropped {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, eventKindNames[k]))
		}
	}
	c.deliverDiag(Diagnostic{
		Kind:    "limit_exceeded",
		Message: fmt.Sprintf("%s: the callback queue was full (Limits.MaxQueuedEvents is %d); dropped %s", schema.ErrLimitExceeded.Error(), c.opts.Limits.MaxQueuedEvents, strings.Join(parts, ", ")),
	})
}

func (c *Client) onNotification(method string, params []byte) {
	switch {
	case method == schema.MethodElicitationComplete:
		if h := c.opts.Elicitation; h != nil && h.Complete != nil {
			var n schema.CompleteElicitationNotification
			if err := json.Unmarshal(params, &n); err != nil {
				c.diag("bad_notification", "ignored a malformed elicitation/complete", params)
				return
			}
			c.events.Push(eventElicitation, int64(len(n.ElicitationID)), func() { h.Complete(n.ElicitationID) })
		}
	case method == schema.MethodAuthStatusUpdate:
		c.onAuthStatusUpdate(method, params)
	case method == "_"+schema.MethodAuthStatusUpdate:
		// An extension of the agent's own: codex-acp 2.6 and
		// claude-agent-acp 0.101 send {"authStatus":{"kind","label",
		// "detail"}} (which credential is in use), not the schema's
		// AuthStatus. Read it as an auth status only when it has that
		// shape; otherwise it is theirs to define, so no diagnostic. It
		// reaches ExtNotification either way.
		if st, ok := decodeAuthStatus(params); ok {
			c.keepAuthStatus(&st, true)
		}
		if h := c.opts.ExtNotification; h != nil {
			c.events.Push(eventExtNotification, int64(len(params)), func() { h(method, json.RawMessage(params)) })
		}
	case len(method) > 1 && method[0] == '_':
		if h := c.opts.ExtNotification; h != nil {
			// The wire hands notification params over as a copy already.
			c.events.Push(eventExtNotification, int64(len(params)), func() { h(method, json.RawMessage(params)) })
		}
	default:
		c.diag("unknown_notification", "ignored the notification "+agenttext.Item(method), nil)
	}
}

// onOversized: a discarded line answered the call id. If that was a
// prompt, the turn fails now, in wire order.
func (c *Client) onOversized(id []byte, method string, size int64) {
	if method != schema.MethodSessionPrompt {
		return // the caller learns it from the call's outcome
	}
	c.mu.Lock()
	t := c.prompts[string(id)]
	delete(c.prompts, string(id))
	c.mu.Unlock()
	if t != nil {
		t.fail(callError(schema.MethodSessionPrompt, fmt.Errorf("%w: the %d-byte response was discarded (Limits.MaxLineBytes is %d)", ErrLineTooLong, size, c.opts.Limits.MaxLineBytes)))
	}
}

// serveRequest is jrpc2's OnCallback: one agent request, on its own
// goroutine. It recovers panics and turns handler errors into error
// replies that keep their code and data.
func (c *Client) serveRequest(g *agentConn, req *jrpc2.Request) (result any, err error) {
	id := req.ID()
	in, _ := g.wire.Inbound(id).(*inbound)
	defer g.wire.Forget(id)
	ctx := g.ctx
	if in != nil {
		ctx = in.ctx
		defer in.cancel(nil)
	}
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, &jrpc2.Error{Code: jrpc2.Code(schema.CodeInternalError), Message: fmt.Sprintf("acp: handler for %s panicked: %v", req.Method(), p)}
		}
	}()
	var raw json.RawMessage
	if req.HasParams() {
		_ = req.UnmarshalParams(&raw)
	}
	var share int64
	if bulkyReply(req.Method()) {
		ok := false
		if share, ok = g.wire.AdmitBulky(ctx); !ok {
			return nil, c.toWireError(ctx, context.Cause(ctx))
		}
		defer g.wire.ReleaseBulky(share)
	}
	res, herr := c.dispatch(ctx, in, req.Method(), raw)
	if herr != nil {
		if errors.Is(herr, schema.ErrLimitExceeded) {
			// A handler refused the request at one of its limits: the
			// agent gets the error, the user hears of it too.
			c.diag("limit_exceeded", agenttext.Item(req.Method())+": "+agenttext.Text(herr.Error()), nil)
		}
		return nil, c.toWireError(ctx, herr)
	}
	// Encode the reply here, not in jrpc2, to know its size: the goroutine
	// waits for room in the write budget before jrpc2 queues it.
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &jrpc2.Error{Code: jrpc2.Code(schema.CodeInternalError), Message: "acp: encoding the reply: " + err.Error()}
	}
	if !g.wire.ReserveReply(ctx, id, int64(len(b)+len(id)+len(`{"jsonrpc":"2.0","id":,"result":}`))) && len(b) > smallReply {
		// The request was withdrawn or its turn cancelled while the reply
		// waited; a short error goes out instead.
		return nil, c.toWireError(ctx, context.Cause(ctx))
	}
	return json.RawMessage(b), nil
}

// smallReply is the size under which a reply that could not wait for room
// (its request was withdrawn meanwhile) is sent anyway.
const smallReply = 4 << 10

// bulkyReply reports whether method's reply may be large: such handlers
// take a share of the write budget before they run, so at most a few run at
// once. Extension methods are not among them: they are the user's own code
// and may wait on a person for minutes, which would starve file reads; their
// replies still wait for room before they are queued.
func bulkyReply(method string) bool {
	return method == schema.MethodFSReadTextFile || method == schema.MethodTerminalOutput
}

// toWireError converts a handler's error into the reply the agent gets.
func (c *Client) toWireError(ctx context.Context, err error) *jrpc2.Error {
	var e *schema.Error
	if errors.As(err, &e) {
		return &jrpc2.Error{Code: jrpc2.Code(e.Code), Message: e.Message, Data: e.Data}
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return &jrpc2.Error{Code: jrpc2.Code(schema.CodeInternalError), Message: pe.Error()}
	}
	switch {
	case errors.Is(err, schema.ErrResourceNotFound):
		return &jrpc2.Error{Code: jrpc2.Code(schema.CodeResourceNotFound), Message: err.Error()}
	case errors.Is(err, schema.ErrMethodNotFound):
		return &jrpc2.Error{Code: jrpc2.Code(schema.CodeMethodNotFound), Message: err.Error()}
	case errors.Is(err, errWithdrawn), ctx.Err() != nil && errors.Is(err, context.Canceled):
		return &jrpc2.Error{Code: jrpc2.Code(schema.CodeRequestCancelled), Message: "request cancelled"}
	}
	return &jrpc2.Error{Code: jrpc2.Code(schema.CodeInternalError), Message: err.Error()}
}

// panicError is a recovered handler panic.
type panicError struct {
	method string
	value  any
	stack  []byte
}

func (p *panicError) Error() string {
	return fmt.Sprintf("acp: handler for %s panicked: %v", p.method, p.value)
}

// runHandler runs f on its own goroutine and returns its result, or the
// context's cause as soon as ctx ends: the agent gets its answer (-32800, or
// a cancelled outcome) even if a handler ignores its context; whatever the
// handler returns later is dropped.
func runHandler[T any](ctx context.Context, method string, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				var zero T
				ch <- result{zero, &panicError{method: method, value: p, stack: debug.Stack()}}
			}
		}()
		v, err := f(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		if ctx.Err() == nil {
			return r.v, r.err
		}
		// Both were ready: the cancellation wins, so a withdrawn request
		// never gets a late result and a cancelled turn never a late allow.
	case <-ctx.Done():
	}
	var zero T
	return zero, context.Cause(ctx)
}

// methodNotFound is the reply to a method the client does not serve.
func methodNotFound(method string) error {
	return &schema.Error{Code: schema.CodeMethodNotFound, Message: "method not found: " + method}
}
