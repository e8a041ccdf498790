package acp

import (
	"context"
	"encoding/json"
)

// MCP-over-ACP lets the client host MCP servers itself and have the agent
// reach them over the ACP connection instead of a subprocess or a URL. The
// client declares such a server in session/new as an [*McpServerACP] (only
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

// MCPHandlers serve the MCP servers the client declared as [*McpServerACP].
// Each unset request handler answers its method -32601 (method not found),
// as does the whole group when it is the zero value. Request handlers run
// like every other handler: each on its own goroutine, its context cancelled
// when the agent withdraws the request or the connection closes.
//
// The server's own messages to the agent (MCP requests such as sampling, and
// MCP notifications) go out as mcp/message through [Client.Call] and
// [Client.Notify] with a [MessageMcpRequest].
//
// Unstable: follows schema.unstable.json; may change.
type MCPHandlers struct {
	// Connect answers mcp/connect: the agent opens a connection to the
	// server named by ServerID and gets back a ConnectionID of the client's
	// choosing, fresh for every connection. The agent may open several
	// connections to one server.
	Connect MCPConnectHandler

	// Message answers the agent's MCP requests sent as mcp/message. Its
	// result is the inner MCP result; an MCP error is returned as an
	// [*Error], whose code and message the agent receives unchanged.
	Message MCPMessageHandler

	// Disconnect answers mcp/disconnect: the agent closes ConnectionID.
	Disconnect MCPDisconnectHandler

	// Notify receives the agent's MCP notifications sent as mcp/message (no
	// JSON-RPC id), one at a time in wire order on the client's callback
	// goroutine (the one OnDiagnostic and ExtNotification run on, never the
	// reader). While it is slow, at most Limits.MaxQueuedEvents callbacks
	// wait; the rest are dropped and counted in a "limit_exceeded"
	// diagnostic. Nil ignores them.
	Notify func(*MessageMcpNotification)
}

// MCPConnectHandler serves mcp/connect.
//
// Unstable: follows schema.unstable.json; may change.
type MCPConnectHandler func(ctx context.Context, req *ConnectMcpRequest) (*ConnectMcpResponse, error)

// MCPMessageHandler serves mcp/message requests.
//
// Unstable: follows schema.unstable.json; may change.
type MCPMessageHandler func(ctx context.Context, req *MessageMcpRequest) (*MessageMcpResponse, error)

// MCPDisconnectHandler serves mcp/disconnect.
//
// Unstable: follows schema.unstable.json; may change.
type MCPDisconnectHandler func(ctx context.Context, req *DisconnectMcpRequest) (*DisconnectMcpResponse, error)

// ConnectMcpRequest is mcp/connect's params.
//
// Unstable: follows schema.unstable.json; may change.
type ConnectMcpRequest struct {
	// ServerID is the McpServerACP.ServerID the client declared.
	ServerID string          `json:"serverId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ConnectMcpResponse is mcp/connect's result.
//
// Unstable: follows schema.unstable.json; may change.
type ConnectMcpResponse struct {
	ConnectionID string          `json:"connectionId"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// MessageMcpRequest is mcp/message's params: one MCP message on an open
// connection, its method and params flattened in.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMcpRequest struct {
	ConnectionID string `json:"connectionId"`
	// Method is the inner MCP method, such as "tools/call".
	Method string `json:"method"`
	// Params are the inner MCP params, an object; nil means none.
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// MessageMcpNotification is an mcp/message notification's params: an MCP
// notification on an open connection.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMcpNotification = MessageMcpRequest

// MessageMcpResponse is mcp/message's result: the inner MCP result, any JSON
// value, sent as it is. Empty Result is sent as {}.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMcpResponse struct {
	Result json.RawMessage
}

// MarshalJSON returns Result, or {} when it is empty.
func (r MessageMcpResponse) MarshalJSON() ([]byte, error) {
	if len(r.Result) == 0 {
		return []byte("{}"), nil
	}
	return r.Result.MarshalJSON()
}

// DisconnectMcpRequest is mcp/disconnect's params.
//
// Unstable: follows schema.unstable.json; may change.
type DisconnectMcpRequest struct {
	ConnectionID string          `json:"connectionId"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// DisconnectMcpResponse is mcp/disconnect's result.
//
// Unstable: follows schema.unstable.json; may change.
type DisconnectMcpResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// McpServerACP is an MCP server that lives in the client and is reached over
// the ACP connection ("type": "acp"); declare it only when the agent
// advertises mcpCapabilities.acp, and serve it with ClientOptions.MCP.
//
// Unstable: follows schema.unstable.json; may change.
type McpServerACP struct {
	Name string `json:"name"`
	// ServerID is chosen by the client and comes back in mcp/connect; it
	// must be unique among the ACP-transport servers on the connection.
	ServerID string          `json:"serverId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

func (*McpServerACP) isMcpServer() {}

// MarshalJSON writes "type": "acp".
func (s McpServerACP) MarshalJSON() ([]byte, error) {
	type body McpServerACP
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
	var n MessageMcpNotification
	if err := json.Unmarshal(params, &n); err != nil {
		c.diag("bad_notification", "ignored a malformed mcp/message notification", params)
		return
	}
	c.events.Push(eventMCPNotification, int64(len(params)), func() { h(&n) })
}
