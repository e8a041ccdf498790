package interop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestInteropMCPOverACP: the TypeScript SDK's own agent-side caller
// (McpOverAcpCaller, experimental in @agentclientprotocol/sdk 2.4.0) reaches
// an MCP server the Go client declared, over the request-scoped mcp/message:
// a result and the progress notification the Go handler sent for the
// request, an inner MCP error it reads as {error}, a request it withdraws with
// $/cancel_request (the Go handler's context ends, the SDK sees -32800), and
// a server the client never declared (an outer -32602, before any handler).
//
// The Go client writes the notification before the response (mcp_test.go in
// the root package proves the order on the wire), but the SDK dispatches
// notifications asynchronously: read in the same chunk as the response, the
// notification can reach McpOverAcpCaller after the request settled, and the
// caller drops it ("notifications after the request settles are dropped").
// So the agent reports the notifications its connection received, naming
// the request, rather than those the caller routed.
func TestInteropMCPOverACP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	metas := make(chan json.RawMessage, 4)
	causes := make(chan error, 1)
	var c *acp.Client
	handler := func(ctx context.Context, req *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error) {
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil || req.Method != "tools/call" {
			return nil, &schema.MCPError{Code: -32602, Message: "bad call"}
		}
		metas <- p.Meta
		switch p.Name {
		case "echo":
			if err := c.NotifyMCP(ctx, &schema.MessageMCPNotification{
				ServerID: req.ServerID, RequestID: req.RequestID,
				Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"p","progress":1}`),
			}); err != nil {
				return nil, err
			}
			return &schema.MessageMCPResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}, nil
		case "block":
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		}
		return nil, &schema.MCPError{Code: -32602, Message: "unknown tool " + p.Name}
	}
	c = connectTS(t, &acp.ClientOptions{MCP: acp.MCPHandlers{Message: handler}}, "TSAGENT_MCP_ACP=1")
	if !c.InitializeResponse().AgentCapabilities.MCPCapabilities.ACP {
		t.Fatalf("the agent does not advertise mcpCapabilities.acp: %+v", c.InitializeResponse().AgentCapabilities.MCPCapabilities)
	}
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), MCPServers: []schema.MCPServer{&schema.MCPServerACP{Name: "tools", ServerID: "go-tools"}}})
	if err != nil {
		t.Fatal(err)
	}
	checkReports(t, "mcp", mustRun(t, ctx, s, "mcp"),
		`mcp:go-tools:echo:{"result":{"content":[{"type":"text","text":"hi"}]}}:notes=this:notifications/progress`,
		`mcp:go-tools:nope:{"error":{"code":-32602,"message":"unknown tool nope"}}`,
		"mcp:cancel:error:-32800",
		"mcp:undeclared:error:-32602",
	)
	if cause := recv(t, causes, "the blocked handler's context to end"); cause == nil || !strings.Contains(cause.Error(), "withdrew") {
		t.Errorf("the blocked handler's ctx cause %v; want the agent's withdrawal", cause)
	}
	// The SDK adds the MCP 2026-07-28 request metadata to each inner
	// request's params; the Go side passes params through untouched.
	if m := recv(t, metas, "the first request's params"); !strings.Contains(string(m), "io.modelcontextprotocol/protocolVersion") {
		t.Errorf("inner _meta %s: the SDK's request metadata did not arrive", m)
	}
}
