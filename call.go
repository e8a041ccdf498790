package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
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
// Unstable: what the unstable methods take and return follows
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
