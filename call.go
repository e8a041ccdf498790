package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
	"github.com/creachadair/jrpc2"
)

// Call sends a request with any method name and decodes the result into
// result, which may be nil; nil params are sent as {}. It reaches methods
// the SDK has no typed helper for, such as those of the unstable schema
// (session/fork, nes/*, document/*, providers/*).
//
// Call checks no capability and tracks nothing: the caller owns the
// protocol. A session/prompt sent this way is no turn, and updates the agent
// sends meanwhile still fold into the session as updates outside a turn.
// One exception: the [schema.MCPServerACP] servers in params of a typed
// NewSessionRequest, LoadSessionRequest, ResumeSessionRequest or
// ForkSessionRequest (value or pointer) are declared, as the typed helpers
// declare them, so the agent may send mcp/message to them; servers in params of
// any other type (a map, raw JSON) are not, and such a message is refused.
// An agent's error reply is returned as *Error. Call is safe for concurrent
// use. Extension methods (names starting with "_") are called the same way.
//
// What the unstable methods take and return follows
// schema.unstable.json and may change.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if method == "" {
		return errors.New("acp: Call needs a method name")
	}
	if params == nil {
		params = struct{}{}
	}
	if servers := mcpServersOf(params); servers != nil {
		c.mcp.declare(servers)
	}
	return c.call(ctx, method, params, result)
}

// mcpServersOf returns the MCP servers of a typed session request.
func mcpServersOf(params any) []schema.MCPServer {
	switch p := params.(type) {
	case *schema.NewSessionRequest:
		if p != nil {
			return p.MCPServers
		}
	case schema.NewSessionRequest:
		return p.MCPServers
	case *schema.LoadSessionRequest:
		if p != nil {
			return p.MCPServers
		}
	case schema.LoadSessionRequest:
		return p.MCPServers
	case *schema.ResumeSessionRequest:
		if p != nil {
			return p.MCPServers
		}
	case schema.ResumeSessionRequest:
		return p.MCPServers
	case *schema.ForkSessionRequest:
		if p != nil {
			return p.MCPServers
		}
	case schema.ForkSessionRequest:
		return p.MCPServers
	}
	return nil
}

// Notify sends a notification with any method name; nil params are sent as
// {}. As with Call, nothing is checked or tracked: a session/cancel sent
// this way does not cancel the SDK's turn (use Turn.Cancel).
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if method == "" {
		return errors.New("acp: Notify needs a method name")
	}
	if params == nil {
		params = struct{}{}
	}
	return c.notify(ctx, method, params)
}

// notify sends one notification through jrpc2.
func (c *Client) notify(ctx context.Context, method string, params any) (err error) {
	params, end := c.observeCall(ctx, method, params, true)
	if end != nil {
		defer func() { end(err) }()
	}
	g, err := c.connFor(ctx)
	if err != nil {
		return callError(method, err)
	}
	if err := g.rpc.Notify(ctx, method, params); err != nil {
		return callError(method, c.mapSendErr(g, err))
	}
	return nil
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
