package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
)

// The Client and Connect: one connection to an agent, its lifetime and how
// it ends. What the client sends is in call.go, what it serves in serve.go
// and dispatch.go, its options in options.go.

// ProtocolVersion is the ACP protocol version this package speaks.
const ProtocolVersion = 1

// Version is this SDK's version, sent as clientInfo.version by default.
const Version = "0.1.0"

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
	// wakes are the wake-ups the reader owes the readers of what it
	// logged, fired when it has dispatched a read (wake.go).
	wakes readerWakes

	// life is how the connection ends (this file: end, Close, Done, Err).
	life clientLife

	// mu guards the parts below it (and what other fields' comments say),
	// each owned by the feature in the file it names. It is taken before a
	// session's mu, never after.
	mu        sync.Mutex
	lastAuth  *schema.AuthenticateRequest // the last successful Authenticate, repeated by a restart
	routing   clientRouting               // where updates go (session_updates.go)
	subs      subagentCount               // child sessions (subagents.go)
	prompts   promptTable                 // session/prompt calls by request id (turn_prompts.go)
	creating  map[string]*creation        // session/new and session/fork in flight, by request id (session_create.go)
	restoring *Session                    // the session a restart's load or resume is for (restore.go)

	mcp mcpRequests // declared MCP-over-ACP servers and active inner requests, under its own lock (mcp_requests.go)
}

// clientLife is how a client's connection ends: the context its calls and
// connections derive from, Done and Err, and the once-only end and Close.
// ended and closing are guarded by the client's mu; the rest are set once
// (under their sync.Once) and read after done is closed.
type clientLife struct {
	baseCtx    context.Context // ends when the connection ends
	baseCancel context.CancelFunc

	done    chan struct{} // closed when the connection has ended
	endOnce sync.Once
	endErr  error // why the connection ended (wraps ErrConnClosed)
	ended   bool  // end ran: no prompt may register any more
	closing bool  // Close was called: no restart any more

	closeOnce sync.Once
	closeErr  error
}

// clientRouting is where an update for a session id goes
// (session_updates.go): the sessions registered, and the updates kept for
// ids not registered yet (orphans, with their notifications' total size,
// bounded by Limits.MaxOrphanSessions and MaxOrphanBytes). Guarded by the
// client's mu.
type clientRouting struct {
	sessions    map[string]*Session // changed only by setLocked and deleteLocked
	orphans     map[string][]orphan
	orphanBytes int

	// The reader's last lookup (Client.route), read without c.mu: gen
	// counts changes to sessions, and last was sessions[last.id] when
	// gen was lastGen. Written under c.mu, last before lastGen.
	gen     atomic.Uint64
	last    atomic.Pointer[Session]
	lastGen atomic.Uint64
}

// subagentCount is what the client counts of child sessions
// (subagents.go): those registered, against Limits.MaxSubagentSessions,
// and the announcements dropped past it. Guarded by the client's mu.
type subagentCount struct {
	registered int
	dropped    int
}

// Connect opens the transport, performs the initialize handshake and
// returns the connected client. No other request is sent before the agent
// has answered initialize. If the agent answers with a protocol version
// other than [ProtocolVersion], the connection is closed and the error wraps
// [schema.ErrUnsupportedVersion]. If ctx ends during the handshake, the connection
// is closed too.
func Connect(ctx context.Context, t Transport, opts *ClientOptions) (*Client, error) {
	c := &Client{
		routing:  clientRouting{sessions: map[string]*Session{}, orphans: map[string][]orphan{}},
		creating: map[string]*creation{},
		life:     clientLife{done: make(chan struct{})},
	}
	c.prompts.init()
	if opts != nil {
		c.opts = *opts
	}
	if all, some := c.opts.Terminal.complete(); some && !all {
		return nil, errors.New("acp: ClientOptions.Terminal sets some of the five terminal handlers but not all; the terminal capability covers all five")
	}
	c.opts.Limits = c.opts.Limits.withDefaults()
	c.life.baseCtx, c.life.baseCancel = context.WithCancel(context.Background())
	c.events = engine.NewEventQueue(c.opts.Limits.MaxQueuedEvents, eventKinds, c.reportDropped)

	c.transport = t
	c.ready = make(chan struct{})
	close(c.ready)
	offered, err := c.opts.offeredVersion()
	if err != nil {
		c.events.Close()
		c.life.baseCancel()
		return nil, err
	}
	if c.opts.Restart != nil {
		c.sup = newSupervisor(c.opts.Restart)
	}
	g, err := c.dial(ctx, 1, offered)
	if err != nil {
		if g == nil {
			c.events.Close()
			c.life.baseCancel()
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
func (c *Client) Done() <-chan struct{} { return c.life.done }

// Err returns why the connection ended (wrapping [ErrConnClosed], and an
// [*ExitError] when the agent process died), or nil while it is open.
func (c *Client) Err() error {
	select {
	case <-c.life.done:
		return c.life.endErr
	default:
		return nil
	}
}

// Wait blocks until the connection has ended and returns [Client.Err].
func (c *Client) Wait() error {
	<-c.life.done
	return c.life.endErr
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
	c.life.closeOnce.Do(func() {
		c.mu.Lock()
		c.life.closing = true
		c.mu.Unlock()
		c.end(fmt.Errorf("%w: closed by the client", ErrConnClosed))
		if c.sup != nil {
			c.sup.stop() // a restart under way gives up and closes what it opened
		}
		c.conn.Load().shutdown()
		c.life.baseCancel()
		c.prompts.calls.Wait()
		if h := c.opts.Terminal.Close; h != nil {
			if err := h(); err != nil {
				c.life.closeErr = err
			}
		}
		c.events.Close()
		if c.opts.Trace != nil {
			c.opts.Trace.flush()
		}
	})
	return c.life.closeErr
}

// end records why the connection ended (first reason wins) and fails every
// turn still waiting for its answer.
func (c *Client) end(reason error) {
	c.life.endOnce.Do(func() {
		c.life.endErr = reason
		c.mu.Lock()
		c.life.ended = true // no prompt registers after this
		turns := c.prompts.drainLocked(false)
		c.mu.Unlock()
		for _, t := range turns {
			t.fail(callError(schema.MethodSessionPrompt, reason))
		}
		c.failChildTurns(reason)
		close(c.life.done)
		c.life.baseCancel()
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
		p.awaitExit(c.life.baseCtx.Done())
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

// diag reports a diagnostic; it runs on the reader goroutine, so it only
// queues.
func (c *Client) diag(kind DiagnosticKind, msg string, line []byte) {
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
