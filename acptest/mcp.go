package acptest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/schema"
)

// MCPOutcome is the inner MCP outcome of an mcp/message the agent sent: the
// result (any JSON value, "null" included) or the inner MCP error, exactly
// one of them. Unstable: MCP-over-ACP follows schema.unstable.json.
type MCPOutcome struct {
	Result json.RawMessage
	Error  *schema.MCPError
}

// CallMCP sends one inner MCP request to the client's declared server
// serverID as mcp/message (request-scoped, schema 1.24.1) and waits for its
// outcome. An outer ACP error (the binding refused or failed the request)
// is returned as *Error; an inner MCP error is in MCPOutcome.Error. To
// cancel it, use [Conn.Start] with [MCPMessage] and [Request.Cancel].
func (c *Conn) CallMCP(ctx context.Context, serverID, requestID, method string, params any) (MCPOutcome, error) {
	res, err := c.Call(ctx, schema.MethodMCPMessage, MCPMessage(serverID, requestID, method, params))
	if err != nil {
		return MCPOutcome{}, err
	}
	return ParseMCPOutcome(res)
}

// MCPMessage is the params of an mcp/message request (nil params omitted).
func MCPMessage(serverID, requestID, method string, params any) map[string]any {
	m := map[string]any{"serverId": serverID, "requestId": requestID, "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

// ParseMCPOutcome reads an mcp/message result as the schema's
// MessageMcpResponse: "result" (required, even if null) wins over "error";
// a result with neither is an error.
func ParseMCPOutcome(res json.RawMessage) (MCPOutcome, error) {
	var w struct {
		Result *json.RawMessage `json:"result"`
		Error  *schema.MCPError `json:"error"`
	}
	if err := json.Unmarshal(res, &w); err != nil {
		return MCPOutcome{}, fmt.Errorf("acptest: mcp/message result %s: %w", res, err)
	}
	switch {
	case w.Result != nil:
		return MCPOutcome{Result: *w.Result}, nil
	case w.Error != nil:
		return MCPOutcome{Error: w.Error}, nil
	}
	// A JSON null result decodes as a nil *json.RawMessage: tell it apart
	// from an absent key.
	var keys map[string]json.RawMessage
	if json.Unmarshal(res, &keys) == nil {
		if r, ok := keys["result"]; ok {
			return MCPOutcome{Result: r}, nil
		}
	}
	return MCPOutcome{}, fmt.Errorf("acptest: mcp/message result %s carries neither result nor error", res)
}
