package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
	"github.com/creachadair/jrpc2"
)

// agentConn is one connection to the agent: the open transport, the wire
// over it and the jrpc2 client over that, and the agent's initialize
// answer. A Client has one at a time (Client.conn); a restart
// (ClientOptions.Restart) opens the next and swaps it in, so that
// sessions, turns and their folds stay where they are and only the
// connection under them changes. The engine's hooks are bound to their
// connection, so a hook of a connection that has ended never touches the
// one that replaced it.
type agentConn struct {
	n       int // 1 for the connection Connect opened, then 2, 3... for restarts
	link    *link
	wire    *engine.Wire
	rpc     *jrpc2.Client
	init    schema.InitializeResponse
	version int // the version its agent answered initialize with (0: v1)

	// ctx is the parent of the contexts of the agent requests served on
	// this connection (handlers, permission dialogs): it ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	done    chan struct{} // closed when the connection has ended
	endOnce sync.Once
	endErr  error // why it ended: ErrConnClosed, or ErrAgentRestarted when a restart follows
	cause   error // what ended it, without the sentinel (an *ExitError...)

	shutOnce sync.Once
}

// dial opens connection number n through the client's transport and
// performs the initialize handshake on it, offering version offered. On
// failure it returns the connection, for the caller to close (abort), or
// nil when the transport did not open.
func (c *Client) dial(ctx context.Context, n, offered int) (*agentConn, error) {
	l, err := openLink(ctx, c.transport, linkHooks{stderrLine: c.traceStderr})
	if err != nil {
		return nil, err
	}
	g := &agentConn{n: n, link: l, done: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancel(c.life.baseCtx)
	lim := c.opts.Limits
	g.wire = engine.NewWire(l.r, l.w, l.closeRead, l.closeWrite, engine.Limits{
		MaxLine:    lim.MaxLineBytes,
		MaxPending: lim.MaxPendingRequests,
		MaxBatch:   lim.MaxBatchItems,
		MaxQueued:  lim.MaxQueuedWriteBytes,
	}, engine.Hooks{
		Update:       c.onUpdate,
		Notification: c.onNotification,
		Response: func(id []byte, method string, raw []byte) {
			switch method {
			case schema.MethodInitialize:
				c.onInitAnswered(g, raw)
				return
			case schema.MethodSessionLoad, schema.MethodSessionResume:
				c.restoreAnswered()
			}
			c.onResponse(id, method, raw)
		},
		CallSent: c.onCallSent,
		Request: func(id []byte, method string, params []byte) engine.Request {
			return c.onRequest(g, id, method, params)
		},
		Oversized:     c.onOversized,
		Diag:          func(kind, msg string, line []byte) { c.diag(DiagnosticKind(kind), msg, line) }, // the engine knows no ACP type
		EOF:           func(err error) { c.onEOF(g, err) },
		Trace:         c.traceFrame,
		Drained:       c.onDrained,
		Closed:        ErrConnClosed,
		LimitExceeded: schema.ErrLimitExceeded,
	})
	g.rpc = jrpc2.NewClient(g.wire, &jrpc2.ClientOptions{
		OnCallback: func(_ context.Context, req *jrpc2.Request) (any, error) { return c.serveRequest(g, req) },
		OnCancel:   func(_ *jrpc2.Client, rsp *jrpc2.Response) { c.onCallAbandoned(g, rsp) },
		OnStop:     func(_ *jrpc2.Client, err error) { c.onRPCStop(g, err) },
	})
	var raw json.RawMessage
	if _, err := c.callOn(ctx, g, schema.MethodInitialize, c.initParams(offered), &raw); err != nil {
		var ae *schema.Error
		if errors.As(err, &ae) && ae.Code == schema.CodeUnsupportedVersion {
			return g, fmt.Errorf("%w: the agent speaks none of the versions up to %d: %w", schema.ErrUnsupportedVersion, offered, err)
		}
		return g, err
	}
	if err := schema.DecodeInitializeResponse(offered, raw, &g.init); err != nil {
		return g, callError(schema.MethodInitialize, err)
	}
	return g, nil
}

// shutdown closes the connection: it flushes what is queued (bounded by
// the shutdown grace), ends an agent process in stages and stops the
// wire and jrpc2. Idempotent.
func (g *agentConn) shutdown() {
	g.shutOnce.Do(func() {
		grace := 2 * time.Second
		p := g.link.proc
		if p != nil {
			grace = p.grace
		}
		// Flush what is queued (the agent may be owed a reply), but do not
		// let an agent that stopped reading hold Close past the grace.
		g.wire.CloseWrite(grace)
		if p != nil {
			p.shutdown()
		}
		_ = g.wire.Close() // unblocks the reader if a grandchild holds stdout
		g.rpc.Close()
		g.cancel()
	})
}

// kill closes a connection whose agent is dead or useless (a failed
// handshake, a dead agent's leftovers): no grace, the process group is
// killed at once.
func (g *agentConn) kill() {
	if p := g.link.proc; p != nil {
		p.kill()
	}
	g.shutdown()
}

// connFor returns the connection a call should go out on: the current one
// once it is usable. While a restart is under way it waits, bounded by
// ctx, until the restart has restored the sessions or the client has
// ended (then the call fails with why). The restart's own calls carry
// their connection in ctx (withConn) and go out at once.
func (c *Client) connFor(ctx context.Context) (*agentConn, error) {
	if g, ok := ctx.Value(connKey{}).(*agentConn); ok {
		return g, nil
	}
	for {
		c.mu.Lock()
		g, ready := c.conn.Load(), c.ready
		c.mu.Unlock()
		select {
		case <-ready:
			return g, nil
		default:
		}
		select {
		case <-ready:
		case <-c.life.done:
			return g, nil // it fails with why the client ended
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the agent's restart: %w", context.Cause(ctx))
		}
	}
}

// connKey marks the context of a restart's own calls with the connection
// they go out on.
type connKey struct{}

func withConn(ctx context.Context, g *agentConn) context.Context {
	return context.WithValue(ctx, connKey{}, g)
}

// connEnded runs once per connection, when it has ended (its output ended,
// jrpc2 stopped, or Close). Without supervision, or after Close, the
// client ends with it. With supervision (ClientOptions.Restart) the
// turns in flight fail with ErrAgentRestarted, the handlers' contexts end
// (a permission dialog is cancelled), new calls start waiting (c.ready)
// and the supervisor restarts the agent.
func (c *Client) connEnded(g *agentConn, cause error) {
	g.endOnce.Do(func() {
		c.mu.Lock()
		restart := c.sup != nil && !c.life.closing && !c.life.ended && (c.conn.Load() == g || g.n > 1)
		g.cause = cause
		if restart {
			g.endErr = fmt.Errorf("%w: %w", ErrAgentRestarted, cause)
			select {
			case <-c.ready:
				c.ready = make(chan struct{}) // calls wait from now on
			default: // a restart is already under way: g was its connection
			}
		} else {
			g.endErr = fmt.Errorf("%w: %w", ErrConnClosed, cause)
		}
		close(g.done)
		var turns []*Turn
		if restart {
			drained := errors.Is(cause, ErrDrained)
			for _, t := range c.prompts.drainLocked(true) { // request ids start again on the next connection
				if t.call.writing {
					continue // its write's outcome decides (wrote, runPrompt)
				}
				if drained && c.holdDrainedLocked(t) {
					continue // not delivered: sent again after the restart
				}
				turns = append(turns, t)
			}
			if drained {
				c.holdRunningLocked() // prompts on their way to the wire
			}
		}
		c.mu.Unlock()
		g.cancel()
		if !restart {
			c.end(g.endErr)
			if c.version == 2 {
				c.failRunningTurns(g.endErr)
			}
			return
		}
		for _, t := range turns {
			t.fail(callError(schema.MethodSessionPrompt, g.endErr))
		}
		c.failRunningTurns(g.endErr)
		c.sup.died(c, g)
	})
}

// failRunningTurns fails every turn still running on the client's
// sessions when their connection ended: a v2 turn whose prompt was
// answered waits for an idle that will not come, and a child's turn for
// its parent's report. (v1 turns waiting for their answer are in
// c.prompts and failed there.)
func (c *Client) failRunningTurns(reason error) {
	c.mu.Lock()
	var turns []*Turn
	for _, s := range c.routing.sessions {
		s.mu.Lock()
		if t := s.turn; t != nil && !t.call.writing {
			turns = append(turns, t)
		}
		s.mu.Unlock()
	}
	c.mu.Unlock()
	for _, t := range turns {
		method := schema.MethodSessionPrompt
		if t.byAgent {
			method = "subagent"
		}
		t.fail(callError(method, reason))
	}
}
