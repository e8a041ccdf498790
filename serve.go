package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
	"github.com/creachadair/jrpc2"
)

// The incoming path: the agent's notifications and requests as the reader
// hands them over, each request served by its handler on a goroutine of
// its own, with its error or panic turned into the reply the agent gets.
// How a request is routed to a session first is in dispatch.go.

func (c *Client) onNotification(method string, params []byte) {
	switch {
	case method == schema.MethodElicitationComplete:
		if h := c.opts.Elicitation; h != nil && h.Complete != nil {
			var n schema.CompleteElicitationNotification
			if err := json.Unmarshal(params, &n); err != nil {
				c.diag(DiagBadNotification, "ignored a malformed elicitation/complete", params)
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
		c.diag(DiagUnknownNotification, "ignored the notification "+agenttext.Item(method), nil)
	}
}

// onOversized: a discarded line answered the call id. If that was a
// prompt, the turn fails now, in wire order.
func (c *Client) onOversized(id []byte, method string, size int64) {
	if method != schema.MethodSessionPrompt {
		return // the caller learns it from the call's outcome
	}
	c.mu.Lock()
	t := c.prompts.takeLocked(string(id))
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
			c.diag(DiagLimitExceeded, agenttext.Item(req.Method())+": "+agenttext.Text(herr.Error()), nil)
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
