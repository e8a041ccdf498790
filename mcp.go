package acp

import (
	"context"
	"encoding/json"

	"github.com/acpclient/acp/internal/agenttext"
)

// MCP-over-ACP lets the client host MCP servers itself and have the agent
// reach them over the ACP connection instead of a subprocess or a URL. The
// client declares such a server in session/new as an [*MCPServerACP] (only
// when the agent advertises mcpCapabilities.acp); the agent then opens a
// connection to it with mcp/connect, exchanges MCP messages on it with
// mcp/message, and closes it with mcp/disconnect. The client advertises
// nothing: the agent's capability alone decides.
//
// Unstable: follows schema.unstable.json; may change.
const (
	MethodMCPConnect    = "mcp/connect"    // agent to client: request
	MethodMCPMessage    = "mcp/message"    // either direction: request or notification
	MethodMCPDisconnect = "mcp/disconnect" // agent to client: request
)

// MCPHandlers serve the MCP servers the client declared as [*MCPServerACP].
// Each unset request handler answers its method -32601 (method not found),
// as does the whole group when it is the zero value. Request handlers run
// like every other handler: each on its own goroutine, its context cancelled
// when the agent withdraws the request or the connection closes.
//
// The agent is held to what the client declared and opened; what it names
// otherwise is refused before any of these handlers runs:
//   - mcp/connect runs Connect only for a ServerID declared as an
//     [*MCPServerACP] in a session/new, session/load, session/resume or
//     session/fork this client sent on the connection (any session, any
//     outcome; through the typed helpers, or [Client.Call] with a typed
//     request); otherwise it is answered -32602 and reported as a
//     [DiagUnknownMCPServer] diagnostic.
//   - mcp/message (request or notification) and mcp/disconnect reach
//     Message, Notify and Disconnect only for a ConnectionID that Connect
//     returned and no successful Disconnect has closed since; otherwise a
//     request is answered -32602, a notification dropped, and either is
//     reported as a [DiagUnknownMCPConnection] diagnostic. While a
//     Disconnect runs, its connection takes no other message or
//     disconnect; if it fails, the connection stays open. A message that
//     passed the check just before a disconnect began may still reach
//     Message while Disconnect runs.
//   - At most [Limits].MaxMCPConnections connections are open at once,
//     counting those whose Connect is still running, even for a request
//     the agent withdrew; over it mcp/connect is refused with an error
//     wrapping [ErrLimitExceeded] and a "limit_exceeded" diagnostic. A
//     connection Connect opens for a withdrawn request is passed to
//     Disconnect at once (the agent never learns its id).
//   - The outcome of Connect and Disconnect is what the handler returns,
//     even when the agent withdrew the request meanwhile: a withdrawn
//     disconnect whose Disconnect then succeeds still closes the
//     connection.
//
// Declarations and connections belong to the ACP connection, not to a
// session: mcp/connect names no session, and a server id is unique on the
// whole connection. Closing a session leaves its servers declared and their
// connections open; a connection ends with a successful mcp/disconnect or
// with the ACP connection, and Disconnect is not called for the ones still
// open then (release what Connect allocated once [Client.Wait] or
// [Client.Close] returns). Leaving Disconnect unset makes every connection
// last as long as the ACP connection, counted against the limit.
//
// The server's own messages to the agent (MCP requests such as sampling, and
// MCP notifications) go out as mcp/message through [Client.Call] and
// [Client.Notify] with a [MessageMCPRequest].
//
// Unstable: follows schema.unstable.json; may change.
type MCPHandlers struct {
	// Connect answers mcp/connect: the agent opens a connection to the
	// server named by ServerID (always one the client declared) and gets
	// back a ConnectionID of the client's choosing, fresh for every
	// connection: the client tracks connections by it, so an id returned
	// while it is still open names that one connection. The agent may open
	// several connections to one server.
	Connect MCPConnectHandler

	// Message answers the agent's MCP requests sent as mcp/message. Its
	// result is the inner MCP result; an MCP error is returned as an
	// [*Error], whose code and message the agent receives unchanged.
	Message MCPMessageHandler

	// Disconnect answers mcp/disconnect: the agent closes ConnectionID
	// (always an open one). Once it returns without error the id is
	// forgotten and its slot under Limits.MaxMCPConnections freed.
	Disconnect MCPDisconnectHandler

	// Notify receives the agent's MCP notifications sent as mcp/message (no
	// JSON-RPC id), one at a time in wire order on the client's callback
	// goroutine (the one OnDiagnostic and ExtNotification run on, never the
	// reader). While it is slow, at most Limits.MaxQueuedEvents callbacks
	// wait; the rest are dropped and counted in a "limit_exceeded"
	// diagnostic. Only notifications on an open connection are queued. Nil
	// ignores them.
	Notify func(*MessageMCPNotification)
}

// MCPConnectHandler serves mcp/connect.
//
// Unstable: follows schema.unstable.json; may change.
type MCPConnectHandler func(ctx context.Context, req *ConnectMCPRequest) (*ConnectMCPResponse, error)

// MCPMessageHandler serves mcp/message requests.
//
// Unstable: follows schema.unstable.json; may change.
type MCPMessageHandler func(ctx context.Context, req *MessageMCPRequest) (*MessageMCPResponse, error)

// MCPDisconnectHandler serves mcp/disconnect.
//
// Unstable: follows schema.unstable.json; may change.
type MCPDisconnectHandler func(ctx context.Context, req *DisconnectMCPRequest) (*DisconnectMCPResponse, error)

// ConnectMCPRequest is mcp/connect's params.
//
// Unstable: follows schema.unstable.json; may change.
type ConnectMCPRequest struct {
	// ServerID is the MCPServerACP.ServerID the client declared.
	ServerID string          `json:"serverId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ConnectMCPResponse is mcp/connect's result.
//
// Unstable: follows schema.unstable.json; may change.
type ConnectMCPResponse struct {
	ConnectionID string          `json:"connectionId"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// MessageMCPRequest is mcp/message's params: one MCP message on an open
// connection, its method and params flattened in.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPRequest struct {
	ConnectionID string `json:"connectionId"`
	// Method is the inner MCP method, such as "tools/call".
	Method string `json:"method"`
	// Params are the inner MCP params, an object; nil means none.
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// MessageMCPNotification is an mcp/message notification's params: an MCP
// notification on an open connection.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPNotification = MessageMCPRequest

// MessageMCPResponse is mcp/message's result: the inner MCP result, any JSON
// value, sent as it is. Empty Result is sent as {}.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPResponse struct {
	Result json.RawMessage
}

// MarshalJSON returns Result, or {} when it is empty.
func (r MessageMCPResponse) MarshalJSON() ([]byte, error) {
	if len(r.Result) == 0 {
		return []byte("{}"), nil
	}
	return r.Result.MarshalJSON()
}

// DisconnectMCPRequest is mcp/disconnect's params.
//
// Unstable: follows schema.unstable.json; may change.
type DisconnectMCPRequest struct {
	ConnectionID string          `json:"connectionId"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// DisconnectMCPResponse is mcp/disconnect's result.
//
// Unstable: follows schema.unstable.json; may change.
type DisconnectMCPResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// MCPServerACP is an MCP server that lives in the client and is reached over
// the ACP connection ("type": "acp"); declare it only when the agent
// advertises mcpCapabilities.acp, and serve it with ClientOptions.MCP.
//
// Declaring it in a session/new, session/load, session/resume or
// session/fork request is what lets the agent connect to it: the client
// records ServerID as the request is sent (the agent may connect before it
// answers), for the rest of the connection, and refuses mcp/connect for any
// other server id (see [MCPHandlers]).
//
// Unstable: follows schema.unstable.json; may change.
type MCPServerACP struct {
	Name string `json:"name"`
	// ServerID is chosen by the client and comes back in mcp/connect; it
	// must be unique among the ACP-transport servers on the connection.
	ServerID string          `json:"serverId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func (*MCPServerACP) isMCPServer() {}

// MarshalJSON writes "type": "acp".
func (s MCPServerACP) MarshalJSON() ([]byte, error) {
	type body MCPServerACP
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"acp", body(s)})
}

// onMCPNotification queues an mcp/message notification for MCP.Notify.
func (c *Client) onMCPNotification(params []byte) {
	h := c.opts.MCP.Notify
	if h == nil {
		return
	}
	var n MessageMCPNotification
	if err := json.Unmarshal(params, &n); err != nil {
		c.diag("bad_notification", "ignored a malformed mcp/message notification", params)
		return
	}
	if !c.mcp.usable(n.ConnectionID) {
		c.diag(string(DiagUnknownMCPConnection), "dropped an mcp/message notification on "+agenttext.Quote(n.ConnectionID)+", which is not an open MCP connection", nil)
		return
	}
	c.events.Push(eventMCPNotification, int64(len(params)), func() { h(&n) })
}
