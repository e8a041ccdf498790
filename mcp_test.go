package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// mcpClientHandlers serve one tool server, "srv-1", whose tools/call echoes
// its arguments and fails for an unknown tool; notifications go to notes.
func mcpClientHandlers(notes chan<- *acp.MessageMCPNotification) acp.MCPHandlers {
	return acp.MCPHandlers{
		Connect: func(_ context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
			if req.ServerID != "srv-1" {
				return nil, &acp.Error{Code: acp.CodeInvalidParams, Message: "no server " + req.ServerID}
			}
			return &acp.ConnectMCPResponse{ConnectionID: "conn-1"}, nil
		},
		Message: func(_ context.Context, req *acp.MessageMCPRequest) (*acp.MessageMCPResponse, error) {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if req.ConnectionID != "conn-1" || req.Method != "tools/call" || json.Unmarshal(req.Params, &p) != nil {
				return nil, &acp.Error{Code: acp.CodeInvalidParams, Message: fmt.Sprintf("bad message %+v", req)}
			}
			if p.Name != "echo" {
				return nil, &acp.Error{Code: -32002, Message: "unknown tool " + p.Name}
			}
			return &acp.MessageMCPResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(p.Arguments) + `}]}`)}, nil
		},
		Disconnect: func(_ context.Context, req *acp.DisconnectMCPRequest) (*acp.DisconnectMCPResponse, error) {
			if req.ConnectionID != "conn-1" {
				return nil, &acp.Error{Code: acp.CodeInvalidParams, Message: "no connection " + req.ConnectionID}
			}
			return nil, nil
		},
		Notify: func(n *acp.MessageMCPNotification) { notes <- n },
	}
}

// The agent reaches a server the client declared with the "acp" transport:
// the declaration arrives typed, mcp/connect, mcp/message and mcp/disconnect
// reach the handlers and their answers (results and MCP errors) reach the
// agent, and the agent's MCP notifications arrive in wire order.
func TestMCPOverACP(t *testing.T) {
	notes := make(chan *acp.MessageMCPNotification, 2)
	type result struct {
		connect json.RawMessage
		message json.RawMessage
		unknown error
		discon  json.RawMessage
		err     error
	}
	got := make(chan result, 1)
	declared := make(chan any, 1)
	c, _ := acptest.Connect(t, &acptest.Options{
		Capabilities: map[string]any{"mcpCapabilities": map[string]any{"acp": true}},
		OnNewSession: func(s *acptest.Session) {
			var p struct {
				MCPServers []any `json:"mcpServers"`
			}
			_ = json.Unmarshal(s.Params(), &p)
			declared <- p.MCPServers
		},
		OnPrompt: func(tn *acptest.Turn) (acp.StopReason, error) {
			ctx := context.Background()
			var r result
			r.connect, r.err = tn.Call(ctx, acp.MethodMCPConnect, map[string]any{"serverId": "srv-1"})
			if r.err == nil {
				r.message, r.err = tn.Call(ctx, acp.MethodMCPMessage, map[string]any{
					"connectionId": "conn-1", "method": "tools/call",
					"params": map[string]any{"name": "echo", "arguments": "hi"},
				})
			}
			if r.err == nil {
				_, r.unknown = tn.Call(ctx, acp.MethodMCPMessage, map[string]any{
					"connectionId": "conn-1", "method": "tools/call", "params": map[string]any{"name": "nope"},
				})
				_ = tn.Notify(acp.MethodMCPMessage, map[string]any{"connectionId": "conn-1", "method": "notifications/initialized"})
				_ = tn.Notify(acp.MethodMCPMessage, map[string]any{"connectionId": "conn-1", "method": "notifications/cancelled", "params": map[string]any{"requestId": 7}})
				r.discon, r.err = tn.Call(ctx, acp.MethodMCPDisconnect, map[string]any{"connectionId": "conn-1"})
			}
			got <- r
			return "", nil
		},
	}, &acp.ClientOptions{MCP: mcpClientHandlers(notes)})

	if !c.AgentCapabilities().MCPCapabilities.ACP {
		t.Fatalf("MCPCapabilities = %+v, want acp", c.AgentCapabilities().MCPCapabilities)
	}
	ctx := context.Background()
	s, err := c.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/w", MCPServers: []acp.MCPServer{&acp.MCPServerACP{Name: "tools", ServerID: "srv-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, acp.Text("use the tools"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got, want := <-declared, []any{map[string]any{"type": "acp", "name": "tools", "serverId": "srv-1"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("declared servers = %v, want %v", got, want)
	}
	if string(r.connect) != `{"connectionId":"conn-1"}` {
		t.Errorf("mcp/connect = %s", r.connect)
	}
	if string(r.message) != `{"content":[{"type":"text","text":"hi"}]}` {
		t.Errorf("mcp/message = %s", r.message)
	}
	var e *acptest.Error
	if !errors.As(r.unknown, &e) || e.Code != -32002 || e.Message != "unknown tool nope" {
		t.Errorf("mcp/message for an unknown tool: %v, want the handler's -32002", r.unknown)
	}
	if string(r.discon) != `{}` {
		t.Errorf("mcp/disconnect = %s", r.discon)
	}
	// Delivered on the callback goroutine, so not ordered with the
	// requests' replies, but in wire order among themselves.
	for i, want := range []string{"notifications/initialized", "notifications/cancelled"} {
		if n := <-notes; n.ConnectionID != "conn-1" || n.Method != want {
			t.Errorf("notification %d = %+v, want %s on conn-1", i, n, want)
		}
	}
}

// Without handlers the mcp/* requests are answered -32601, each unset
// handler on its own, and MCP notifications are dropped without a
// diagnostic of the unknown kind.
func TestMCPUnsetIsMethodNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		mcp  acp.MCPHandlers
		want map[string]bool // method → served
	}{
		{"unset", acp.MCPHandlers{}, map[string]bool{}},
		{"connect only", acp.MCPHandlers{Connect: func(context.Context, *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
			return &acp.ConnectMCPResponse{ConnectionID: "c"}, nil
		}}, map[string]bool{acp.MethodMCPConnect: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var diags []acp.Diagnostic
			done := make(chan map[string]error, 1)
			c, _ := acptest.Connect(t, &acptest.Options{
				OnPrompt: func(tn *acptest.Turn) (acp.StopReason, error) {
					errs := map[string]error{}
					_ = tn.Notify(acp.MethodMCPMessage, map[string]any{"connectionId": "c", "method": "notifications/initialized"})
					for _, m := range []string{acp.MethodMCPConnect, acp.MethodMCPMessage, acp.MethodMCPDisconnect} {
						_, errs[m] = tn.Call(context.Background(), m, map[string]any{"serverId": "s", "connectionId": "c", "method": "ping"})
					}
					done <- errs
					return "", nil
				},
			}, &acp.ClientOptions{MCP: tc.mcp, OnDiagnostic: func(d acp.Diagnostic) {
				mu.Lock()
				diags = append(diags, d)
				mu.Unlock()
			}})
			// "s" is declared, so what is checked is the unset handler
			// (with Connect unset, even an undeclared server gets -32601).
			s, err := c.NewSession(context.Background(), &acp.NewSessionRequest{MCPServers: []acp.MCPServer{&acp.MCPServerACP{Name: "s", ServerID: "s"}}})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(context.Background(), acp.Text("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			for m, err := range <-done {
				var e *acptest.Error
				notFound := errors.As(err, &e) && e.Code == acptest.CodeMethodNotFound
				if tc.want[m] == notFound {
					t.Errorf("%s: %v; served = %v", m, err, tc.want[m])
				}
			}
			c.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, d := range diags {
				if d.Kind == acp.DiagUnknownNotification {
					t.Errorf("diagnostic %+v for an mcp/message notification", d)
				}
			}
		})
	}
}

// The client advertises nothing for MCP-over-ACP: the agent's
// mcpCapabilities.acp alone says whether such servers may be declared.
func TestMCPAdvertisesNothing(t *testing.T) {
	caps := func(o *acp.ClientOptions) json.RawMessage {
		got := make(chan json.RawMessage, 1)
		c, _ := acptest.Connect(t, &acptest.Options{
			Methods: map[string]acptest.MethodFunc{
				acp.MethodSessionNew: func(_ context.Context, conn *acptest.Conn, _ json.RawMessage) (any, error) {
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
	unset := caps(&acp.ClientOptions{})
	set := caps(&acp.ClientOptions{MCP: mcpClientHandlers(nil)})
	if string(set) != string(unset) {
		t.Errorf("capabilities with MCP handlers %s, without %s", set, unset)
	}
}

// An "acp" server declaration decodes as *MCPServerACP (it was kept raw as
// an unknown type before) and encodes back the same.
func TestMCPServerACPRoundTrip(t *testing.T) {
	in := `{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools","serverId":"srv-1","_meta":{"k":1}}]}`
	var req acp.NewSessionRequest
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	s, ok := req.MCPServers[0].(*acp.MCPServerACP)
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
	req = acp.NewSessionRequest{}
	if err := json.Unmarshal([]byte(`{"cwd":"/w","mcpServers":[{"type":"acp","name":"tools"}]}`), &req); err == nil || len(req.MCPServers) != 0 {
		t.Errorf("an acp server without serverId: %v, %#v", err, req.MCPServers)
	}
}

// A blocked MCP.Notify and a flood of mcp/message notifications: at most
// MaxQueuedEvents wait, the rest are dropped, and a limit_exceeded
// diagnostic says so once the queue drains.
func TestHostileMCPNotificationFlood(t *testing.T) {
	const limit, flood = 10, 500
	release := make(chan struct{})
	report := make(chan acp.Diagnostic, 1)
	var delivered atomic.Int64
	var once sync.Once
	_, _, a := mcpSetup(t, &acp.ClientOptions{
		Limits: acp.Limits{MaxQueuedEvents: limit},
		MCP: acp.MCPHandlers{
			Connect: func(context.Context, *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
				return &acp.ConnectMCPResponse{ConnectionID: "c"}, nil
			},
			Notify: func(*acp.MessageMCPNotification) {
				<-release
				delivered.Add(1)
			},
		},
		OnDiagnostic: func(d acp.Diagnostic) {
			if d.Kind == acp.DiagLimitExceeded {
				once.Do(func() { report <- d })
			}
		},
	}, "srv")
	// Notifications on a connection that is not open are dropped before
	// they are queued: the flood is on an open one.
	if id := mcpOpen(t, a, "srv"); id != "c" {
		t.Fatalf("connection %q", id)
	}
	for i := range flood {
		if err := a.Notify(acp.MethodMCPMessage, map[string]any{"connectionId": "c", "method": "notifications/progress", "params": map[string]any{"progress": i}}); err != nil {
			t.Fatal(err)
		}
	}
	probe(t, a)
	close(release)
	d := hostileWait(t, report, "the dropped-callbacks diagnostic")
	if n := delivered.Load(); n > limit+1 {
		t.Errorf("%d notifications delivered with a queue of %d", n, limit)
	}
	if !strings.Contains(d.Message, acp.ErrLimitExceeded.Error()) || !strings.Contains(d.Message, "MaxQueuedEvents") || !strings.Contains(d.Message, "mcp/message notifications") {
		t.Errorf("report %q does not say what was dropped and why", d.Message)
	}
}

// The server's own MCP messages reach the agent through Client.Call and
// Client.Notify in the shape the schema gives mcp/message.
func TestMCPMessageToAgent(t *testing.T) {
	got := make(chan json.RawMessage, 2)
	c, _ := acptest.Connect(t, &acptest.Options{
		Methods: map[string]acptest.MethodFunc{
			acp.MethodMCPMessage: func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				got <- p
				return json.RawMessage(`{"model":"m","content":{"type":"text","text":"ok"}}`), nil
			},
		},
		OnNotification: func(_ *acptest.Conn, method string, p json.RawMessage) {
			if method == acp.MethodMCPMessage {
				got <- p
			}
		},
	}, nil)
	ctx := context.Background()
	var res json.RawMessage
	err := c.Call(ctx, acp.MethodMCPMessage, &acp.MessageMCPRequest{ConnectionID: "conn-1", Method: "sampling/createMessage", Params: json.RawMessage(`{"maxTokens":5}`)}, &res)
	if err != nil || string(res) != `{"model":"m","content":{"type":"text","text":"ok"}}` {
		t.Fatalf("Call = %s, %v", res, err)
	}
	if p := <-got; string(p) != `{"connectionId":"conn-1","method":"sampling/createMessage","params":{"maxTokens":5}}` {
		t.Errorf("request params %s", p)
	}
	if err := c.Notify(ctx, acp.MethodMCPMessage, &acp.MessageMCPNotification{ConnectionID: "conn-1", Method: "notifications/tools/list_changed"}); err != nil {
		t.Fatal(err)
	}
	if p := <-got; string(p) != `{"connectionId":"conn-1","method":"notifications/tools/list_changed"}` {
		t.Errorf("notification params %s", p)
	}
}

// A client hosts an MCP server and declares it in session/new; the agent
// (here a script) connects to it over the ACP connection and calls a tool.
func ExampleMCPHandlers() {
	agent := acptest.New(&acptest.Options{
		Capabilities: map[string]any{"mcpCapabilities": map[string]any{"acp": true}},
		OnPrompt: func(t *acptest.Turn) (acp.StopReason, error) {
			ctx := context.Background()
			res, _ := t.Call(ctx, acp.MethodMCPConnect, map[string]any{"serverId": "tools-1"})
			var conn acp.ConnectMCPResponse
			_ = json.Unmarshal(res, &conn)
			res, _ = t.Call(ctx, acp.MethodMCPMessage, map[string]any{"connectionId": conn.ConnectionID, "method": "tools/call", "params": map[string]any{"name": "now"}})
			t.Say(string(res))
			return "", nil
		},
	})
	fromAgent, toAgent := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &acp.ClientOptions{
		MCP: acp.MCPHandlers{
			Connect: func(_ context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
				return &acp.ConnectMCPResponse{ConnectionID: req.ServerID + "/1"}, nil
			},
			Message: func(_ context.Context, req *acp.MessageMCPRequest) (*acp.MessageMCPResponse, error) {
				return &acp.MessageMCPResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":"noon"}]}`)}, nil
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
	var servers []acp.MCPServer
	if c.AgentCapabilities().MCPCapabilities.ACP {
		servers = append(servers, &acp.MCPServerACP{Name: "clock", ServerID: "tools-1"})
	}
	s, _ := c.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/work", MCPServers: servers})
	turn, _ := s.Prompt(ctx, acp.Text("What time is it?"))
	_, _ = turn.Wait()
	fmt.Println(turn.State().Messages[0].Text)
	// Output: {"content":[{"type":"text","text":"noon"}]}
}
