package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// mcpEcho serves one tool server, "srv-1": tools/call "echo" sends a
// progress notification for the request and answers with its arguments;
// "nothing" answers a JSON null; an unknown tool is an inner MCP error
// returned as the error, "refuse" one returned in the response; "broken"
// fails the binding with an outer ACP error, "crash" with a plain error.
func mcpEcho(c **acp.Client) acp.MCPHandlers {
	return acp.MCPHandlers{
		Message: func(ctx context.Context, req *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error) {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if req.Method != "tools/call" || json.Unmarshal(req.Params, &p) != nil {
				return nil, &schema.MCPError{Code: -32601, Message: "no method " + req.Method}
			}
			switch p.Name {
			case "echo":
				if err := (*c).NotifyMCP(ctx, &schema.MessageMCPNotification{
					ServerID: req.ServerID, RequestID: req.RequestID,
					Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`),
				}); err != nil {
					return nil, err
				}
				return &schema.MessageMCPResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(p.Arguments) + `}]}`)}, nil
			case "nothing":
				return &schema.MessageMCPResponse{Result: json.RawMessage("null")}, nil
			case "refuse":
				return &schema.MessageMCPResponse{Error: &schema.MCPError{Code: -32002, Message: "refused", Data: json.RawMessage("null")}}, nil
			case "broken":
				return nil, &schema.Error{Code: -33002, Message: "backend down"}
			case "crash":
				return nil, errors.New("disk on fire")
			}
			return nil, fmt.Errorf("wrapped: %w", &schema.MCPError{Code: -32002, Message: "unknown tool " + p.Name, Data: json.RawMessage(`{"tool":"` + p.Name + `"}`)})
		},
	}
}

// The agent reaches a server the client declared with the "acp" transport
// (schema 1.24.1's request-scoped mcp/message): the declaration arrives
// typed, each inner request reaches Message with its serverId and
// requestId, results (null included) and inner MCP errors come back as the
// schema's outcome carriers, outer ACP errors stay outer, and a
// notification the handler sends for the request reaches the agent before
// the response.
func TestMCPOverACP(t *testing.T) {
	type call struct {
		raw json.RawMessage
		err error
	}
	got := make(chan map[string]call, 1)
	notes := make(chan json.RawMessage, 4)
	declared := make(chan any, 1)
	var client *acp.Client
	c, _ := acptest.Connect(t, &acptest.Options{
		Capabilities: map[string]any{"mcpCapabilities": map[string]any{"acp": true}},
		OnNewSession: func(s *acptest.Session) {
			var p struct {
				MCPServers []any `json:"mcpServers"`
			}
			_ = json.Unmarshal(s.Params(), &p)
			declared <- p.MCPServers
		},
		OnNotification: func(_ *acptest.Conn, method string, p json.RawMessage) {
			if method == schema.MethodMCPMessage {
				notes <- p
			}
		},
		OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
			r := map[string]call{}
			for i, tool := range []string{"echo", "nothing", "refuse", "nope", "broken", "crash"} {
				raw, err := tn.Call(context.Background(), schema.MethodMCPMessage, acptest.MCPMessage("srv-1", fmt.Sprint("r", i), "tools/call", map[string]any{"name": tool, "arguments": "hi"}))
				r[tool] = call{raw: raw, err: err}
				if tool == "echo" {
					// The progress notification was read before this response.
					select {
					case n := <-notes:
						notes <- n
					default:
						r["order"] = call{err: errors.New("the response arrived before the notification")}
					}
				}
			}
			got <- r
			return "", nil
		},
	}, &acp.ClientOptions{MCP: mcpEcho(&client)})
	client = c

	if !c.InitializeResponse().AgentCapabilities.MCPCapabilities.ACP {
		t.Fatalf("MCPCapabilities = %+v, want acp", c.InitializeResponse().AgentCapabilities.MCPCapabilities)
	}
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w", MCPServers: []schema.MCPServer{&schema.MCPServerACP{Name: "tools", ServerID: "srv-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("use the tools"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if got, want := <-declared, []any{map[string]any{"type": "acp", "name": "tools", "serverId": "srv-1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("declared servers = %v, want %v", got, want)
	}
	if e := r["order"].err; e != nil {
		t.Error(e)
	}
	for tool, want := range map[string]string{
		"echo":    `{"result":{"content":[{"type":"text","text":"hi"}]}}`,
		"nothing": `{"result":null}`,
		"refuse":  `{"error":{"code":-32002,"message":"refused","data":null}}`,
		"nope":    `{"error":{"code":-32002,"message":"unknown tool nope","data":{"tool":"nope"}}}`,
	} {
		if r[tool].err != nil || string(r[tool].raw) != want {
			t.Errorf("%s: %s, %v; want %s", tool, r[tool].raw, r[tool].err, want)
		}
	}
	var e *acptest.Error
	if err := r["broken"].err; !errors.As(err, &e) || e.Code != -33002 || e.Message != "backend down" {
		t.Errorf("broken: %v, want the outer -33002 as the handler gave it", err)
	}
	if err := r["crash"].err; !errors.As(err, &e) || e.Code != acptest.CodeInternalError {
		t.Errorf("crash: %v, want an outer -32603", err)
	}
	if n := <-notes; string(n) != `{"serverId":"srv-1","requestId":"r0","method":"notifications/progress","params":{"progress":1}}` {
		t.Errorf("notification %s", n)
	}
}

// Without a Message handler mcp/message is answered -32601 (even for a
// declared server), and the agent's mcp/message notifications, which the
// schema does not define in that direction, are reported as unknown.
func TestMCPUnsetIsMethodNotFound(t *testing.T) {
	done := make(chan error, 1)
	diags := make(chan acp.Diagnostic, 16)
	c, _ := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
			_ = tn.Notify(schema.MethodMCPMessage, map[string]any{"serverId": "s", "requestId": "1", "method": "notifications/progress"})
			_, err := tn.CallMCP(context.Background(), "s", "1", "ping", nil)
			done <- err
			return "", nil
		},
	}, &acp.ClientOptions{OnDiagnostic: func(d acp.Diagnostic) { diags <- d }})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{MCPServers: []schema.MCPServer{&schema.MCPServerACP{Name: "s", ServerID: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	var e *acptest.Error
	if err := <-done; !errors.As(err, &e) || e.Code != acptest.CodeMethodNotFound {
		t.Errorf("mcp/message without a handler: %v, want -32601", err)
	}
	if d := hostileWait(t, diags, "the unknown notification"); d.Kind != acp.DiagUnknownNotification {
		t.Errorf("diagnostic %+v, want unknown_notification", d)
	}
}

// The client advertises nothing for MCP-over-ACP: the agent's
// mcpCapabilities.acp alone says whether such servers may be declared.
func TestMCPAdvertisesNothing(t *testing.T) {
	caps := func(o *acp.ClientOptions) json.RawMessage {
		got := make(chan json.RawMessage, 1)
		c, _ := acptest.Connect(t, &acptest.Options{
			Methods: map[string]acptest.MethodFunc{
				schema.MethodSessionNew: func(_ context.Context, conn *acptest.Conn, _ json.RawMessage) (any, error) {
					got <- conn.ClientCapabilities()
					return map[string]any{"sessionId": "s"}, nil
				},
			},
		}, o)
		if _, err := c.NewSession(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return <-got
	}
	var none *acp.Client
	unset := caps(&acp.ClientOptions{})
	set := caps(&acp.ClientOptions{MCP: mcpEcho(&none)})
	if string(set) != string(unset) {
		t.Errorf("capabilities with MCP handlers %s, without %s", set, unset)
	}
}

// An "acp" server declaration decodes as *MCPServerACP (it was kept raw as
// an unknown type before) and encodes back the same.
func TestMCPServerACPRoundTrip(t *testing.T) {
	in := `{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools","serverId":"srv-1","_meta":{"k":1}}]}`
	var req schema.NewSessionRequest
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	s, ok := req.MCPServers[0].(*schema.MCPServerACP)
	if !ok || s.Name != "tools" || s.ServerID != "srv-1" || string(s.Meta) != `{"k":1}` {
		t.Fatalf("decoded %#v", req.MCPServers[0])
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal([]byte(in), &a)
	_ = json.Unmarshal(out, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("re-encoded %s, want %s", out, in)
	}
	// Like any malformed server, one without serverId fails the request
	// (the list is strict since schema 1.25.0) rather than being passed on
	// half-filled.
	req = schema.NewSessionRequest{}
	if err := json.Unmarshal([]byte(`{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools"}]}`), &req); err == nil || len(req.MCPServers) != 0 {
		t.Errorf("an acp server without serverId: %v, %#v", err, req.MCPServers)
	}
}

// MessageMCPResponse carries exactly one outcome, as MessageMcpResponse
// requires: the error wins over a result, an empty result is {}, null and
// other JSON values stay as they are, and an MCPError's data keeps an
// explicit null apart from none.
func TestMCPResponseEncoding(t *testing.T) {
	for _, tc := range []struct {
		in   schema.MessageMCPResponse
		want string
	}{
		{schema.MessageMCPResponse{}, `{"result":{}}`},
		{schema.MessageMCPResponse{Result: json.RawMessage("null")}, `{"result":null}`},
		{schema.MessageMCPResponse{Result: json.RawMessage(`[1,2]`), Meta: json.RawMessage(`{"k":1}`)}, `{"result":[1,2],"_meta":{"k":1}}`},
		{schema.MessageMCPResponse{Result: json.RawMessage(`{}`), Error: &schema.MCPError{Code: 1, Message: "m"}}, `{"error":{"code":1,"message":"m"}}`},
		{schema.MessageMCPResponse{Error: &schema.MCPError{Code: -1, Message: "", Data: json.RawMessage("null")}}, `{"error":{"code":-1,"message":"","data":null}}`},
	} {
		b, err := json.Marshal(tc.in)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v = %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
	if s := (&schema.MCPError{Code: -32002, Message: "unknown tool"}).Error(); s != "mcp error -32002: unknown tool" {
		t.Errorf("Error() = %q", s)
	}
}

// NotifyMCP sends only for a request whose handler still runs: after it
// returned, or for a request that never arrived, it fails with
// ErrMCPRequestNotActive and the agent receives nothing.
func TestMCPNotifyNeedsAnActiveRequest(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	var client *acp.Client
	done := make(chan error, 1)
	c, _ := acptest.Connect(t, &acptest.Options{
		OnNotification: func(_ *acptest.Conn, method string, p json.RawMessage) {
			mu.Lock()
			notes = append(notes, method+" "+string(p))
			mu.Unlock()
		},
		OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
			_, err := tn.CallMCP(context.Background(), "srv-1", "r1", "tools/list", nil)
			done <- err
			return "", nil
		},
	}, &acp.ClientOptions{MCP: acp.MCPHandlers{Message: func(context.Context, *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error) {
		return nil, nil
	}}})
	client = c
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{MCPServers: []schema.MCPServer{&schema.MCPServerACP{Name: "s", ServerID: "srv-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, n := range []*schema.MessageMCPNotification{
		{ServerID: "srv-1", RequestID: "r1", Method: "notifications/progress"}, // answered
		{ServerID: "srv-1", RequestID: "r2", Method: "notifications/progress"}, // never sent
		{ServerID: "other", RequestID: "r1", Method: "notifications/progress"},
	} {
		if err := client.NotifyMCP(context.Background(), n); !errors.Is(err, acp.ErrMCPRequestNotActive) {
			t.Errorf("NotifyMCP(%+v) = %v, want ErrMCPRequestNotActive", n, err)
		}
	}
	// A round trip after the refused notifications: had one been sent, it
	// would have been read before this answer.
	if _, err := s.Prompt(context.Background(), schema.Text("again")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, n := range notes {
		if len(n) >= len(schema.MethodMCPMessage) && n[:len(schema.MethodMCPMessage)] == schema.MethodMCPMessage {
			t.Errorf("the agent received %s", n)
		}
	}
}

// A client hosts an MCP server and declares it in session/new; the agent
// (here a script) calls a tool on it over the ACP connection.
func ExampleMCPHandlers() {
	agent := acptest.New(&acptest.Options{
		Capabilities: map[string]any{"mcpCapabilities": map[string]any{"acp": true}},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			out, _ := t.CallMCP(context.Background(), "tools-1", "1", "tools/call", map[string]any{"name": "now"})
			t.Say(string(out.Result))
			return "", nil
		},
	})
	fromAgent, toAgent := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &acp.ClientOptions{
		MCP: acp.MCPHandlers{
			Message: func(_ context.Context, req *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error) {
				if req.Method != "tools/call" {
					return nil, &schema.MCPError{Code: -32601, Message: "method not found"}
				}
				return &schema.MessageMCPResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":"noon"}]}`)}, nil
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()
	defer c.Close()

	ctx := context.Background()
	var servers []schema.MCPServer
	if c.InitializeResponse().AgentCapabilities.MCPCapabilities.ACP {
		servers = append(servers, &schema.MCPServerACP{Name: "clock", ServerID: "tools-1"})
	}
	s, _ := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/work", MCPServers: servers})
	turn, _ := s.Prompt(ctx, schema.Text("What time is it?"))
	_, _ = turn.Wait()
	fmt.Println(turn.State().Messages[0].Text)
	// Output: {"content":[{"type":"text","text":"noon"}]}
}
