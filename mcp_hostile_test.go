package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// The agent may reach only the MCP servers the client declared, with one
// active request per (serverId, requestId), and only so many at once: what
// it sends otherwise is refused before the Message handler runs.

// mcpCaps advertises MCP-over-ACP and every session request that carries
// MCP servers, plus session/close.
var mcpCaps = map[string]any{
	"loadSession":         true,
	"mcpCapabilities":     map[string]any{"acp": true},
	"sessionCapabilities": map[string]any{"resume": map[string]any{}, "fork": map[string]any{}, "close": map[string]any{}},
}

// mcpRecorder serves every declared server: Message answers {"ok":true}
// and counts the calls that reached it. A request whose method is "block"
// signals entered and waits for release (ignoring its context, as a
// careless handler does); cancelled gets the ids of those whose context
// ended first.
type mcpRecorder struct {
	messages  atomic.Int64
	entered   chan string
	release   chan struct{}
	cancelled chan string
	diags     chan acp.Diagnostic
}

func newMCPRecorder() *mcpRecorder {
	return &mcpRecorder{
		entered: make(chan string, 128), release: make(chan struct{}), cancelled: make(chan string, 128),
		diags: make(chan acp.Diagnostic, 256),
	}
}

func (r *mcpRecorder) options(limits acp.Limits) *acp.ClientOptions {
	return &acp.ClientOptions{
		Limits: limits,
		MCP: acp.MCPHandlers{
			Message: func(ctx context.Context, req *schema.MessageMCPRequest) (*schema.MessageMCPResponse, error) {
				r.messages.Add(1)
				if req.Method == "block" {
					r.entered <- req.RequestID
					select {
					case <-ctx.Done():
						r.cancelled <- req.RequestID
						<-r.release
					case <-r.release:
					}
				}
				return &schema.MessageMCPResponse{Result: json.RawMessage(`{"ok":true}`)}, nil
			},
		},
		OnDiagnostic: func(d acp.Diagnostic) { r.diags <- d },
	}
}

// waitDiag waits for the next diagnostic of kind, skipping others.
func (r *mcpRecorder) waitDiag(t *testing.T, kind acp.DiagnosticKind) acp.Diagnostic {
	t.Helper()
	for {
		if d := hostileWait(t, r.diags, "a "+string(kind)+" diagnostic"); d.Kind == kind {
			return d
		}
	}
}

// mcpSetup connects copts's client to an acptest agent that speaks
// MCP-over-ACP and opens a session declaring the servers ids, returning the
// client's and the agent's sides of the session.
func mcpSetup(t *testing.T, copts *acp.ClientOptions, ids ...string) (*acp.Client, *acp.Session, *acptest.Session) {
	t.Helper()
	ss := make(chan *acptest.Session, 1)
	c, _ := acptest.Connect(t, &acptest.Options{
		Capabilities:      mcpCaps,
		DisableTranscript: true,
		OnNewSession:      func(s *acptest.Session) { ss <- s },
	}, copts)
	var servers []schema.MCPServer
	for _, id := range ids {
		servers = append(servers, &schema.MCPServerACP{Name: "server " + id, ServerID: id})
	}
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{MCPServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	return c, s, <-ss
}

// mcpPing sends one inner request and wants it served.
func mcpPing(t *testing.T, a *acptest.Session, serverID, requestID string) {
	t.Helper()
	out, err := a.CallMCP(context.Background(), serverID, requestID, "ping", nil)
	if err != nil || string(out.Result) != `{"ok":true}` {
		t.Fatalf("mcp/message %s/%s = %+v, %v", serverID, requestID, out, err)
	}
}

// mcpBlock starts an inner request whose handler waits for r.release, and
// waits until it runs.
func mcpBlock(t *testing.T, r *mcpRecorder, a *acptest.Session, serverID, requestID string) *acptest.Request {
	t.Helper()
	req, err := a.Start(schema.MethodMCPMessage, acptest.MCPMessage(serverID, requestID, "block", nil))
	if err != nil {
		t.Fatal(err)
	}
	if id := hostileWait(t, r.entered, "Message to run"); id != requestID {
		t.Fatalf("Message ran for %q, want %q", id, requestID)
	}
	return req
}

// wantRPCError checks that err is the client's error reply with code and a
// message containing each of words.
func wantRPCError(t *testing.T, what string, err error, code int, words ...string) *acptest.Error {
	t.Helper()
	var e *acptest.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
		return e
	}
	for _, w := range words {
		if !strings.Contains(e.Message, w) {
			t.Errorf("%s: message %q does not say %q", what, e.Message, w)
		}
	}
	return e
}

// An mcp/message for a serverId the client never declared is answered
// -32602 and reported; Message does not run for it.
func TestMCPMessageNeedsADeclaredServer(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	for _, id := range []string{"srv-2", "", "SRV-1", strings.Repeat("x", 10000)} {
		_, err := a.CallMCP(context.Background(), id, "1", "tools/list", nil)
		wantRPCError(t, "mcp/message to an undeclared server", err, acptest.CodeInvalidParams, "serverId", "declared")
		d := r.waitDiag(t, acp.DiagUnknownMCPServer)
		if len(d.Message) > 512 {
			t.Errorf("diagnostic of %d bytes: the agent's id is not cut short", len(d.Message))
		}
	}
	if n := r.messages.Load(); n != 0 {
		t.Fatalf("Message ran %d times for undeclared servers", n)
	}
	mcpPing(t, a, "srv-1", "1")
}

// Malformed mcp/message params (no serverId or requestId, params that are
// not an object) are refused -32602 without reaching Message, and the
// connection goes on.
func TestMCPMalformedMessageRefused(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	for _, p := range []any{
		map[string]any{"requestId": "1", "method": "ping"},
		map[string]any{"serverId": "srv-1", "method": "ping"},
		map[string]any{"serverId": "srv-1", "requestId": 1, "method": "ping"},
		map[string]any{"serverId": "srv-1", "requestId": "1"},
		map[string]any{"serverId": "srv-1", "requestId": "1", "method": "ping", "params": []int{1}},
		map[string]any{"serverId": "srv-1", "requestId": "1", "method": "ping", "params": "x"},
		[]int{1},
	} {
		_, err := a.Call(context.Background(), schema.MethodMCPMessage, p)
		wantRPCError(t, fmt.Sprintf("mcp/message %v", p), err, acptest.CodeInvalidParams)
	}
	if n := r.messages.Load(); n != 0 {
		t.Fatalf("Message ran %d times for malformed params", n)
	}
	// null params are "none", as the schema says.
	out, err := a.Call(context.Background(), schema.MethodMCPMessage, map[string]any{"serverId": "srv-1", "requestId": "1", "method": "ping", "params": nil})
	if err != nil || string(out) != `{"result":{"ok":true}}` {
		t.Errorf("null params: %s, %v", out, err)
	}
}

// Every request that carries MCP servers declares them, before it is sent:
// the agent may send mcp/message while it handles the request, before it
// answers.
func TestMCPEverySessionRequestDeclares(t *testing.T) {
	for _, tc := range []struct {
		method  string
		viaCall bool // sent with Client.Call and the typed request
	}{
		{schema.MethodSessionNew, false}, {schema.MethodSessionLoad, false}, {schema.MethodSessionResume, false}, {schema.MethodSessionFork, false},
		{schema.MethodSessionNew, true}, {schema.MethodSessionLoad, true}, {schema.MethodSessionResume, true}, {schema.MethodSessionFork, true},
	} {
		method := tc.method
		name := method
		if tc.viaCall {
			name += "/Call"
		}
		t.Run(name, func(t *testing.T) {
			r := newMCPRecorder()
			server := "srv-" + strings.TrimPrefix(method, "session/")
			type outcome struct{ declared, other error }
			got := make(chan outcome, 1)
			c, _ := acptest.Connect(t, &acptest.Options{
				Capabilities: mcpCaps,
				Methods: map[string]acptest.MethodFunc{
					method: func(ctx context.Context, conn *acptest.Conn, _ json.RawMessage) (any, error) {
						var o outcome
						_, o.declared = conn.CallMCP(ctx, server, "1", "ping", nil)
						_, o.other = conn.CallMCP(ctx, "srv-never", "1", "ping", nil)
						got <- o
						return map[string]any{"sessionId": "s-1"}, nil
					},
				},
			}, r.options(acp.Limits{}))
			ctx := context.Background()
			servers := []schema.MCPServer{&schema.MCPServerACP{Name: "tools", ServerID: server}, &schema.MCPServerStdio{Name: "srv-never", Command: "/bin/true"}}
			var err error
			switch {
			case tc.viaCall:
				// Pointers and values both declare.
				params := map[string]any{
					schema.MethodSessionNew:    &schema.NewSessionRequest{MCPServers: servers},
					schema.MethodSessionLoad:   schema.LoadSessionRequest{SessionID: "s-1", MCPServers: servers},
					schema.MethodSessionResume: &schema.ResumeSessionRequest{SessionID: "s-1", MCPServers: servers},
					schema.MethodSessionFork:   schema.ForkSessionRequest{SessionID: "s-0", MCPServers: servers},
				}[method]
				err = c.Call(ctx, method, params, nil)
			case method == schema.MethodSessionNew:
				_, err = c.NewSession(ctx, &schema.NewSessionRequest{MCPServers: servers})
			case method == schema.MethodSessionLoad:
				_, err = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "s-1", MCPServers: servers})
			case method == schema.MethodSessionResume:
				_, err = c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: "s-1", MCPServers: servers})
			case method == schema.MethodSessionFork:
				_, err = c.ForkSession(ctx, &schema.ForkSessionRequest{SessionID: "s-0", MCPServers: servers})
			}
			if err != nil {
				t.Fatal(err)
			}
			o := <-got
			if o.declared != nil {
				t.Errorf("mcp/message to the server %s declared: %v", method, o.declared)
			}
			wantRPCError(t, "mcp/message to a server declared with another transport", o.other, acptest.CodeInvalidParams)
			if n := r.messages.Load(); n != 1 {
				t.Errorf("Message ran %d times, want 1", n)
			}
		})
	}
}

// A requestId names one active inner request per server (notifications and
// cancellation refer to it): a second mcp/message with the same pair while
// the first runs is refused -32602 and reported, the same id on another
// server is a request of its own, and once the first ends the id is free.
func TestMCPDuplicateActiveRequestRefused(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1", "srv-2")
	first := mcpBlock(t, r, a, "srv-1", "r1")
	_, err := a.CallMCP(context.Background(), "srv-1", "r1", "ping", nil)
	wantRPCError(t, "a duplicate active request", err, acptest.CodeInvalidParams, "r1", "already active")
	r.waitDiag(t, acp.DiagDuplicateMCPRequest)
	if n := r.messages.Load(); n != 1 {
		t.Errorf("Message ran %d times, want 1 (the duplicate must not run)", n)
	}
	mcpPing(t, a, "srv-2", "r1")
	close(r.release)
	if _, err := first.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	mcpPing(t, a, "srv-1", "r1")
}

// Declarations belong to the ACP connection, not to the session that made
// them (mcp/message names no session): closing the session leaves the
// server reachable.
func TestMCPDeclarationsOutliveTheirSession(t *testing.T) {
	r := newMCPRecorder()
	_, s, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mcpPing(t, a, "srv-1", "after-close")
}

// At most Limits.MaxMCPRequests inner requests are active at once (64 by
// default); over it mcp/message is refused with CodeMCPLimitExceeded, an
// error naming the limit and a limit_exceeded diagnostic, and Message does
// not run. A request that ends frees its slot.
func TestMCPMaxRequests(t *testing.T) {
	refused := func(t *testing.T, r *mcpRecorder, a *acptest.Session, max int) {
		t.Helper()
		_, err := a.CallMCP(context.Background(), "srv-1", "over", "ping", nil)
		e := wantRPCError(t, "mcp/message over the limit", err, schema.CodeMCPLimitExceeded, schema.ErrLimitExceeded.Error(), "Limits.MaxMCPRequests")
		if e != nil && string(e.Data) != fmt.Sprintf(`{"limit":"MaxMCPRequests","value":%d}`, max) {
			t.Errorf("error data %s", e.Data)
		}
		if d := r.waitDiag(t, acp.DiagLimitExceeded); !strings.Contains(d.Message, "MaxMCPRequests") {
			t.Errorf("diagnostic %q does not name the limit", d.Message)
		}
	}
	for _, tc := range []struct {
		name   string
		limits acp.Limits
		max    int
	}{{"default", acp.Limits{}, 64}, {"set", acp.Limits{MaxMCPRequests: 2}, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newMCPRecorder()
			_, _, a := mcpSetup(t, r.options(tc.limits), "srv-1", "srv-2")
			var blocked []*acptest.Request
			for i := range tc.max {
				// Across servers: the limit is the connection's.
				blocked = append(blocked, mcpBlock(t, r, a, []string{"srv-1", "srv-2"}[i%2], fmt.Sprint("b", i)))
			}
			refused(t, r, a, tc.max)
			if n := r.messages.Load(); n != int64(tc.max) {
				t.Errorf("Message ran %d times, want %d", n, tc.max)
			}
			close(r.release)
			for _, b := range blocked {
				if _, err := b.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			mcpPing(t, a, "srv-1", "after")
		})
	}
}

// Withdrawing an inner request ($/cancel_request of the outer mcp/message,
// the binding's cancellation) cancels the handler's context and answers the
// agent at once, but the request keeps its slot, and its id stays active,
// until the handler returns.
func TestMCPWithdrawnRequestKeepsItsSlot(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{MaxMCPRequests: 1}), "srv-1")
	req := mcpBlock(t, r, a, "srv-1", "r1")
	if err := req.Cancel(); err != nil {
		t.Fatal(err)
	}
	if id := hostileWait(t, r.cancelled, "the handler's context to end"); id != "r1" {
		t.Errorf("cancelled %q", id)
	}
	hostileWait(t, req.Done(), "the withdrawn request's answer")
	if _, err := req.Result(); err == nil {
		t.Error("the withdrawn request got a result")
	}
	// Message still runs: the slot is taken.
	_, err := a.CallMCP(context.Background(), "srv-1", "r2", "ping", nil)
	wantRPCError(t, "a request while the withdrawn one's handler runs", err, schema.CodeMCPLimitExceeded, "MaxMCPRequests")
	close(r.release)
	// The handler's return frees it; poll by round trips, never by time.
	for {
		out, err := a.CallMCP(context.Background(), "srv-1", "r2", "ping", nil)
		if err == nil {
			if string(out.Result) != `{"ok":true}` {
				t.Fatalf("result %s", out.Result)
			}
			break
		}
		wantRPCError(t, "a request until the handler returns", err, schema.CodeMCPLimitExceeded)
	}
	mcpPing(t, a, "srv-1", "r1") // and the withdrawn id is free again
}
