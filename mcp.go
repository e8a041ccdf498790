package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
)

// MCPHandlers serve the MCP servers the client declared as [*schema.MCPServerACP].
// The zero value serves none: mcp/message is answered -32601 (method not
// found).
//
// The agent is held to what the client declared; what it names otherwise is
// refused before Message runs:
//   - Message runs only for a ServerID declared as an [*schema.MCPServerACP] in a
//     session/new, session/load, session/resume or session/fork this client
//     sent on the connection (any session, any outcome; through the typed
//     helpers, or [Client.Call] with a typed request); otherwise the request
//     is answered -32602 and reported as a [DiagUnknownMCPServer]
//     diagnostic.
//   - A RequestID already active for the same server is refused with -32602
//     and a [DiagDuplicateMCPRequest] diagnostic: the inner id names one
//     request, which notifications and cancellation refer to.
//   - At most [Limits].MaxMCPRequests inner requests are active at once,
//     over every server, counting those whose handler still runs after the
//     agent withdrew them; over it mcp/message is refused with
//     [schema.CodeMCPLimitExceeded], an error wrapping [schema.ErrLimitExceeded] and a
//     "limit_exceeded" diagnostic.
//
// Declarations belong to the ACP connection, not to a session: mcp/message
// names no session, and a server id is unique on the whole connection.
// Closing a session leaves its servers declared.
//
// Unstable: follows schema.unstable.json; may change.
type MCPHandlers struct {
	// Message serves one inner MCP request, on its own goroutine like every
	// other handler; its context is cancelled when the agent withdraws the
	// request ($/cancel_request of the outer mcp/message, the binding's
	// only cancellation) or the connection closes. Its outcome is the inner
	// MCP outcome: a [*schema.MessageMCPResponse] with a Result (any JSON value,
	// null included) or an Error, or an error wrapping an [*schema.MCPError],
	// which reaches the agent as the inner MCP error. Any other error is an
	// outer ACP error (an [*schema.Error] as it is, anything else -32603), which
	// the schema reserves for failures of the binding itself. While it
	// runs, [Client.NotifyMCP] sends MCP notifications for the request.
	Message MCPMessageHandler
}

// MCPMessageHandler serves mcp/message requests.
//
// Unstable: follows schema.unstable.json; may change.
type MCPMessageHandler func(ctx context.Context, req *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error)

// ErrMCPRequestNotActive is returned by [Client.NotifyMCP] for a request
// that is not active: the schema allows a server's notifications only for
// an active request, and the agent drops the others.
//
// Unstable: follows schema.unstable.json; may change.
var ErrMCPRequestNotActive = errors.New("acp: no active MCP request with this serverId and requestId")

// NotifyMCP sends an MCP notification from a declared server for the
// agent's active request n.RequestID (from inside the [MCPMessageHandler]
// serving it, before it returns). It returns [ErrMCPRequestNotActive], and
// sends nothing, when that request is not active: its handler returned, or
// it never arrived. Notifications sent before the handler returns reach the
// agent before its response.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) NotifyMCP(ctx context.Context, n *schema.MessageMCPNotification) error {
	if !c.mcp.isActive(n.ServerID, n.RequestID) {
		return ErrMCPRequestNotActive
	}
	return c.Notify(ctx, schema.MethodMCPMessage, n)
}
