package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// mcpRequests is what the client knows of MCP-over-ACP on one ACP
// connection: the ACP-transport servers it has declared and the inner MCP
// requests the agent has active on them. Both are connection-wide, not per
// session: mcp/message names no session, and a server id is unique on the
// whole ACP connection (the schema forbids reusing one for another server
// there). So a declaration lasts until the ACP connection ends; closing the
// session that declared the server does not end it.
type mcpRequests struct {
	mu       sync.Mutex
	declared map[string]bool        // server ids sent in session/new, load, resume, fork
	active   map[mcpRequestKey]bool // inner requests whose handler runs
}

// mcpRequestKey names one inner request: the schema scopes requestId to its
// server.
type mcpRequestKey struct{ serverID, requestID string }

// declare records the ACP-transport servers among servers. It runs before
// the request that carries them is sent: the agent may send mcp/message to
// them while it handles that request, before it answers. A declaration
// stays even if the request then fails; the agent has seen it, and the
// user's handler still decides what a request to it gets.
func (m *mcpRequests) declare(servers []schema.MCPServer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range servers {
		if srv, ok := s.(*schema.MCPServerACP); ok && srv != nil {
			if m.declared == nil {
				m.declared = map[string]bool{}
			}
			m.declared[srv.ServerID] = true
		}
	}
}

// mcpRefusal says why begin refused a request.
type mcpRefusal int

const (
	mcpAccepted mcpRefusal = iota
	mcpUndeclared
	mcpDuplicate
	mcpFull
)

// begin makes k active, or says why not.
func (m *mcpRequests) begin(k mcpRequestKey, max int) mcpRefusal {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !m.declared[k.serverID]:
		return mcpUndeclared
	case m.active[k]:
		return mcpDuplicate
	case len(m.active) >= max:
		return mcpFull
	}
	if m.active == nil {
		m.active = map[mcpRequestKey]bool{}
	}
	m.active[k] = true
	return mcpAccepted
}

// end frees k once its handler has returned.
func (m *mcpRequests) end(k mcpRequestKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.active, k)
}

// isActive reports whether the agent's request k is being served.
func (m *mcpRequests) isActive(serverID, requestID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active[mcpRequestKey{serverID, requestID}]
}

// serveMCPMessage serves an mcp/message request: only for a declared
// server, a request id not already active there, and while fewer than
// Limits.MaxMCPRequests are active; otherwise Message does not run.
func (c *Client) serveMCPMessage(ctx context.Context, params json.RawMessage) (any, error) {
	h := c.opts.MCP.Message
	if h == nil {
		return nil, methodNotFound(schema.MethodMCPMessage)
	}
	var req schema.MessageMCPRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	k := mcpRequestKey{req.ServerID, req.RequestID}
	max := c.opts.Limits.MaxMCPRequests
	switch c.mcp.begin(k, max) {
	case mcpUndeclared:
		msg := "no MCP server with serverId " + agenttext.Quote(req.ServerID) + " was declared on this connection"
		c.diag(DiagUnknownMCPServer, "refused mcp/message: "+msg, nil)
		return nil, &schema.Error{Code: schema.CodeInvalidParams, Message: "acp: mcp/message: " + msg}
	case mcpDuplicate:
		msg := "requestId " + agenttext.Quote(req.RequestID) + " is already active on MCP server " + agenttext.Quote(req.ServerID)
		c.diag(DiagDuplicateMCPRequest, "refused mcp/message: "+msg, nil)
		return nil, &schema.Error{Code: schema.CodeInvalidParams, Message: "acp: mcp/message: " + msg}
	case mcpFull:
		return nil, &mcpLimitError{&schema.Error{
			Code:    schema.CodeMCPLimitExceeded,
			Message: fmt.Sprintf("%s: %d MCP requests are already active (Limits.MaxMCPRequests)", schema.ErrLimitExceeded.Error(), max),
			Data:    json.RawMessage(`{"limit":"MaxMCPRequests","value":` + strconv.Itoa(max) + `}`),
		}}
	}
	// The slot is freed with the handler, not when runHandler returns: when
	// the agent withdraws the request, runHandler answers at once while
	// Message may still run, and what it holds is still held.
	res, err := runHandler(ctx, schema.MethodMCPMessage, func(ctx context.Context) (*schema.MessageMCPResponse, error) {
		defer c.mcp.end(k)
		return h(ctx, &req)
	})
	var inner *schema.MCPError
	switch {
	case errors.As(err, &inner):
		return &schema.MessageMCPResponse{Error: inner}, nil
	case err != nil:
		return nil, err
	case res == nil:
		return &schema.MessageMCPResponse{}, nil
	}
	return res, nil
}

// mcpLimitError refuses an mcp/message over Limits.MaxMCPRequests: the
// agent gets the *Error; locally errors.Is(err, ErrLimitExceeded) holds, so
// the refusal is reported as a "limit_exceeded" diagnostic too.
type mcpLimitError struct{ e *schema.Error }

func (l *mcpLimitError) Error() string   { return l.e.Message }
func (l *mcpLimitError) Unwrap() []error { return []error{l.e, schema.ErrLimitExceeded} }
