package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/acpclient/acp/internal/agenttext"
)

// mcpConns is what the client knows of MCP-over-ACP on one ACP connection:
// the ACP-transport servers it has declared and the MCP connections the
// agent has open on them. Both are connection-wide, not per session:
// mcp/connect names no session, a server id is unique on the whole ACP
// connection (the schema forbids reusing one for another server there), and
// the client has no message to close a connection from its side. So a
// declaration, and every connection opened on it, lasts until the agent
// disconnects or the ACP connection ends; closing the session that declared
// the server changes neither.
type mcpConns struct {
	mu       sync.Mutex
	declared map[string]bool     // server ids sent in session/new, load, resume, fork
	open     map[string]*mcpConn // by connection id, as Connect returned it
	opening  int                 // Connect handlers running: each holds a slot
}

type mcpConn struct {
	serverID string
	closing  bool // an mcp/disconnect of it is being served
}

// declare records the ACP-transport servers among servers. It runs before
// the request that carries them is sent: the agent may connect to them while
// it handles that request, before it answers. A declaration stays even if
// the request then fails; the agent has seen it, and the user's Connect
// handler still decides what a connection to it gets.
func (m *mcpConns) declare(servers []MCPServer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range servers {
		if srv, ok := s.(*MCPServerACP); ok && srv != nil {
			if m.declared == nil {
				m.declared = map[string]bool{}
			}
			m.declared[srv.ServerID] = true
		}
	}
}

// reserve takes a connection slot for serverID, or says why not.
func (m *mcpConns) reserve(serverID string, max int) (declared, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.declared[serverID] {
		return false, false
	}
	if len(m.open)+m.opening >= max {
		return true, false
	}
	m.opening++
	return true, true
}

// opened gives back the slot reserve took and, when Connect succeeded,
// records the connection it returned. An id Connect returns while it is
// still open (Connect must return fresh ones) stays one connection.
func (m *mcpConns) opened(connID, serverID string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opening--
	if !ok {
		return
	}
	if m.open == nil {
		m.open = map[string]*mcpConn{}
	}
	if _, dup := m.open[connID]; !dup {
		m.open[connID] = &mcpConn{serverID: serverID}
	}
}

// usable reports whether connID is open and no disconnect of it is under way.
func (m *mcpConns) usable(connID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.open[connID]
	return c != nil && !c.closing
}

// closing marks connID as being disconnected; false if it is not usable.
func (m *mcpConns) closing(connID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.open[connID]
	if c == nil || c.closing {
		return false
	}
	c.closing = true
	return true
}

// closed ends a disconnect: a successful one forgets connID, a failed one
// leaves it open.
func (m *mcpConns) closed(connID string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ok {
		delete(m.open, connID)
	} else if c := m.open[connID]; c != nil {
		c.closing = false
	}
}

// serveMCPConnect serves mcp/connect: only for a declared server, and only
// while fewer than Limits.MaxMCPConnections connections are open (or being
// opened); otherwise Connect does not run.
func (c *Client) serveMCPConnect(ctx context.Context, params json.RawMessage) (any, error) {
	h := c.opts.MCP.Connect
	if h == nil {
		return nil, methodNotFound(MethodMCPConnect)
	}
	var req ConnectMCPRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	max := c.opts.Limits.MaxMCPConnections
	declared, ok := c.mcp.reserve(req.ServerID, max)
	switch {
	case !declared:
		msg := "no MCP server with serverId " + agenttext.Quote(req.ServerID) + " was declared on this connection"
		c.diag(string(DiagUnknownMCPServer), "refused mcp/connect: "+msg, nil)
		return nil, &Error{Code: CodeInvalidParams, Message: "acp: mcp/connect: " + msg}
	case !ok:
		return nil, &mcpLimitError{&Error{
			Code:    CodeInternalError,
			Message: fmt.Sprintf("%s: %d MCP connections are already open (Limits.MaxMCPConnections)", ErrLimitExceeded.Error(), max),
			Data:    json.RawMessage(`{"limit":"MaxMCPConnections","value":` + strconv.Itoa(max) + `}`),
		}}
	}
	// The bookkeeping runs with the handler, not after runHandler returns:
	// when the agent withdraws the request, runHandler answers at once while
	// Connect may still run, and its slot must stay taken until it returns.
	res, err := runHandler(ctx, MethodMCPConnect, func(ctx context.Context) (res *ConnectMCPResponse, err error) {
		recorded := false
		defer func() {
			if !recorded { // an error, or a panic
				c.mcp.opened("", req.ServerID, false)
			}
		}()
		if res, err = h(ctx, &req); err != nil {
			return nil, err
		}
		if res == nil {
			res = &ConnectMCPResponse{}
		}
		c.mcp.opened(res.ConnectionID, req.ServerID, true)
		recorded = true
		if ctx.Err() != nil {
			// The agent withdrew the request and never learns this id: close
			// the connection, or it would hold a slot until the ACP
			// connection ends.
			c.abandonMCPConnection(ctx, res.ConnectionID)
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// abandonMCPConnection disconnects a connection Connect opened for a
// withdrawn request, through the user's Disconnect; without one it stays
// open and counted, like every connection when Disconnect is unset.
func (c *Client) abandonMCPConnection(ctx context.Context, connID string) {
	d := c.opts.MCP.Disconnect
	if d == nil || !c.mcp.closing(connID) {
		return
	}
	ok := false
	defer func() { c.mcp.closed(connID, ok) }()
	_, err := d(context.WithoutCancel(ctx), &DisconnectMCPRequest{ConnectionID: connID})
	ok = err == nil
}

// serveMCPMessage serves an mcp/message request, only on an open
// connection.
func (c *Client) serveMCPMessage(ctx context.Context, params json.RawMessage) (any, error) {
	h := c.opts.MCP.Message
	if h == nil {
		return nil, methodNotFound(MethodMCPMessage)
	}
	var req MessageMCPRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	if !c.mcp.usable(req.ConnectionID) {
		return nil, c.unknownMCPConnection(MethodMCPMessage, req.ConnectionID)
	}
	return serveDecoded(ctx, MethodMCPMessage, &req, h)
}

// serveMCPDisconnect serves mcp/disconnect, only of an open connection; the
// connection is forgotten once Disconnect succeeds.
func (c *Client) serveMCPDisconnect(ctx context.Context, params json.RawMessage) (any, error) {
	h := c.opts.MCP.Disconnect
	if h == nil {
		return nil, methodNotFound(MethodMCPDisconnect)
	}
	var req DisconnectMCPRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	if !c.mcp.closing(req.ConnectionID) {
		return nil, c.unknownMCPConnection(MethodMCPDisconnect, req.ConnectionID)
	}
	// As for Connect, the outcome is Disconnect's own, recorded when it
	// returns: a withdrawn request does not reopen a connection whose
	// Disconnect still runs (and may yet succeed).
	res, err := runHandler(ctx, MethodMCPDisconnect, func(ctx context.Context) (res *DisconnectMCPResponse, err error) {
		ok := false
		defer func() { c.mcp.closed(req.ConnectionID, ok) }()
		res, err = h(ctx, &req)
		ok = err == nil
		return res, err
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return struct{}{}, nil
	}
	return res, nil
}

// unknownMCPConnection is the -32602 for a request on a connection that is
// not open, reported locally too.
func (c *Client) unknownMCPConnection(method, connID string) error {
	msg := "no open MCP connection " + agenttext.Quote(connID)
	c.diag(string(DiagUnknownMCPConnection), "refused "+method+": "+msg, nil)
	return &Error{Code: CodeInvalidParams, Message: "acp: " + method + ": " + msg}
}

// mcpLimitError refuses an mcp/connect over Limits.MaxMCPConnections: the
// agent gets the *Error; locally errors.Is(err, ErrLimitExceeded) holds, so
// the refusal is reported as a "limit_exceeded" diagnostic too.
type mcpLimitError struct{ e *Error }

func (l *mcpLimitError) Error() string   { return l.e.Message }
func (l *mcpLimitError) Unwrap() []error { return []error{l.e, ErrLimitExceeded} }
