package schema

import (
	"encoding/json"
	"strconv"
)

// MCP-over-ACP lets the client host MCP servers itself and have the agent
// reach them over the ACP connection instead of a subprocess or a URL. The
// client declares such a server in session/new as an [*MCPServerACP] (only
// when the agent advertises mcpCapabilities.acp); the agent then sends each
// MCP request to it as an mcp/message request naming the server (serverId)
// and the inner request (requestId, the caller's own id, distinct from the
// outer JSON-RPC id). The binding is request-scoped (schema 1.24.1): there
// is no connection to open or close, and the client advertises nothing: the
// agent's capability alone decides.
//
// Unstable: follows schema.unstable.json; may change.
const (
	// MethodMCPMessage is an MCP request from the agent to a server the
	// client declared (a request), and an MCP notification from that server
	// for one of the agent's active requests (a notification, client to
	// agent; see [Client.NotifyMCP]).
	MethodMCPMessage = "mcp/message"
)

// CodeMCPLimitExceeded is the outer ACP error code of an mcp/message refused
// because [Limits].MaxMCPRequests inner requests are already active; the
// TypeScript SDK's binding uses the same code (resourceLimitExceeded).
//
// Unstable: follows schema.unstable.json; may change.
const CodeMCPLimitExceeded = -33000

// MessageMCPRequest is mcp/message's params: one inner MCP request to a
// declared server, its method and params flattened in.
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPRequest struct {
	// ServerID is the MCPServerACP.ServerID the client declared.
	ServerID string `json:"serverId"`
	// RequestID is the agent's id of the inner MCP request, unique among
	// its active requests to the server; not the outer JSON-RPC id.
	RequestID string `json:"requestId"`
	// Method is the inner MCP method, such as "tools/call".
	Method string `json:"method"`
	// Params are the inner MCP params, an object; nil means none.
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// MessageMCPNotification is an mcp/message notification's params: an MCP
// notification (progress, a subscription event) from a declared server for
// the agent's active request RequestID. Send it with [Client.NotifyMCP].
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPNotification struct {
	ServerID  string `json:"serverId"`
	RequestID string `json:"requestId"`
	// Method is the inner MCP notification method, such as
	// "notifications/progress".
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// MessageMCPResponse is mcp/message's result: exactly one inner MCP outcome.
// When Error is set it is sent as the inner error and Result is ignored;
// otherwise Result is sent as it is, any JSON value ("null" stays null), and
// an empty Result as {} (the empty MCP result).
//
// Unstable: follows schema.unstable.json; may change.
type MessageMCPResponse struct {
	Result json.RawMessage
	Error  *MCPError
	Meta   json.RawMessage
}

// MarshalJSON writes {"result": ...} or {"error": ...}, with _meta when set.
func (r MessageMCPResponse) MarshalJSON() ([]byte, error) {
	var w struct {
		Result json.RawMessage `json:"result,omitempty"`
		Error  *MCPError       `json:"error,omitempty"`
		Meta   json.RawMessage `json:"_meta,omitempty"`
	}
	w.Meta = r.Meta
	switch {
	case r.Error != nil:
		w.Error = r.Error
	case len(r.Result) == 0:
		w.Result = json.RawMessage("{}")
	default:
		w.Result = r.Result
	}
	return json.Marshal(w)
}

// MCPError is an inner MCP error: its Code is an MCP code, never an ACP
// one, and it travels inside a successful mcp/message response. A
// [MCPMessageHandler] returns it either in [MessageMCPResponse].Error or as
// its error.
//
// Unstable: follows schema.unstable.json; may change.
type MCPError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is sent when set; "null" is sent as an explicit null.
	Data json.RawMessage `json:"data,omitempty"`
}

func (e *MCPError) Error() string { return "mcp error " + strconv.Itoa(e.Code) + ": " + e.Message }

// MCPServerACP is an MCP server that lives in the client and is reached over
// the ACP connection ("type": "acp"); declare it only when the agent
// advertises mcpCapabilities.acp, and serve it with ClientOptions.MCP.
//
// Declaring it in a session/new, session/load, session/resume or
// session/fork request is what lets the agent reach it: the client records
// ServerID as the request is sent (the agent may send mcp/message before it
// answers), for the rest of the connection, and refuses mcp/message for any
// other server id (see [MCPHandlers]).
//
// Unstable: follows schema.unstable.json; may change.
type MCPServerACP struct {
	Name string `json:"name"`
	// ServerID is chosen by the client and comes back in mcp/message; it
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
