package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// The agent may reach only the MCP servers the client declared, only on
// connections the client's Connect handler opened, and only so many at
// once: what it names otherwise is refused before any MCP handler runs.

// mcpCaps advertises MCP-over-ACP and every session request that carries
// MCP servers, plus session/close.
var mcpCaps = map[string]any{
	"loadSession":         true,
	"mcpCapabilities":     map[string]any{"acp": true},
	"sessionCapabilities": map[string]any{"resume": map[string]any{}, "fork": map[string]any{}, "close": map[string]any{}},
}

// mcpRecorder serves every declared server: Connect returns
// "<serverId>/<n>", Message answers {"ok":true}, and each handler counts
// the calls that reached it. Notified connection ids go to notes.
type mcpRecorder struct {
	connects, messages, disconnects atomic.Int64
	n                               atomic.Int64
	notes                           chan string
	diags                           chan acp.Diagnostic
}

func newMCPRecorder() *mcpRecorder {
	return &mcpRecorder{notes: make(chan string, 64), diags: make(chan acp.Diagnostic, 256)}
}

func (r *mcpRecorder) options(limits acp.Limits) *acp.ClientOptions {
	return &acp.ClientOptions{
		Limits: limits,
		MCP: acp.MCPHandlers{
			Connect: func(_ context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
				r.connects.Add(1)
				return &acp.ConnectMCPResponse{ConnectionID: fmt.Sprintf("%s/%d", req.ServerID, r.n.Add(1))}, nil
			},
			Message: func(context.Context, *acp.MessageMCPRequest) (*acp.MessageMCPResponse, error) {
				r.messages.Add(1)
				return &acp.MessageMCPResponse{Result: json.RawMessage(`{"ok":true}`)}, nil
			},
			Disconnect: func(context.Context, *acp.DisconnectMCPRequest) (*acp.DisconnectMCPResponse, error) {
				r.disconnects.Add(1)
				return nil, nil
			},
			Notify: func(n *acp.MessageMCPNotification) { r.notes <- n.ConnectionID },
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
	var servers []acp.MCPServer
	for _, id := range ids {
		servers = append(servers, &acp.MCPServerACP{Name: "server " + id, ServerID: id})
	}
	s, err := c.NewSession(context.Background(), &acp.NewSessionRequest{MCPServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	return c, s, <-ss
}

// mcpOpen opens a connection to serverID from the agent's side.
func mcpOpen(t *testing.T, a *acptest.Session, serverID string) string {
	t.Helper()
	res, err := a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": serverID})
	if err != nil {
		t.Fatalf("mcp/connect %s: %v", serverID, err)
	}
	var r acp.ConnectMCPResponse
	if err := json.Unmarshal(res, &r); err != nil || r.ConnectionID == "" {
		t.Fatalf("mcp/connect %s = %s, %v", serverID, res, err)
	}
	return r.ConnectionID
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

// An mcp/connect for a serverId the client never declared is answered
// -32602 and reported; Connect does not run for it.
func TestMCPConnectNeedsADeclaredServer(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	ctx := context.Background()
	for _, id := range []string{"srv-2", "", "SRV-1", strings.Repeat("x", 10000)} {
		_, err := a.Call(ctx, acp.MethodMCPConnect, map[string]any{"serverId": id})
		wantRPCError(t, "mcp/connect to an undeclared server", err, acptest.CodeInvalidParams, "serverId", "declared")
		d := r.waitDiag(t, acp.DiagUnknownMCPServer)
		if len(d.Message) > 512 {
			t.Errorf("diagnostic of %d bytes: the agent's id is not cut short", len(d.Message))
		}
	}
	if n := r.connects.Load(); n != 0 {
		t.Fatalf("Connect ran %d times for undeclared servers", n)
	}
	if id := mcpOpen(t, a, "srv-1"); id != "srv-1/1" {
		t.Errorf("connection %q", id)
	}
}

// Every request that carries MCP servers declares them, before it is sent:
// the agent may connect while it handles the request, before it answers.
func TestMCPEverySessionRequestDeclares(t *testing.T) {
	for _, tc := range []struct {
		method  string
		viaCall bool // sent with Client.Call and the typed request
	}{
		{acp.MethodSessionNew, false}, {acp.MethodSessionLoad, false}, {acp.MethodSessionResume, false}, {acp.MethodSessionFork, false},
		{acp.MethodSessionNew, true}, {acp.MethodSessionLoad, true}, {acp.MethodSessionResume, true}, {acp.MethodSessionFork, true},
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
						_, o.declared = conn.Call(ctx, acp.MethodMCPConnect, map[string]any{"serverId": server})
						_, o.other = conn.Call(ctx, acp.MethodMCPConnect, map[string]any{"serverId": "srv-never"})
						got <- o
						return map[string]any{"sessionId": "s-1"}, nil
					},
				},
			}, r.options(acp.Limits{}))
			ctx := context.Background()
			servers := []acp.MCPServer{&acp.MCPServerACP{Name: "tools", ServerID: server}, &acp.MCPServerStdio{Name: "srv-never", Command: "/bin/true"}}
			var err error
			switch {
			case tc.viaCall:
				// Pointers and values both declare.
				params := map[string]any{
					acp.MethodSessionNew:    &acp.NewSessionRequest{MCPServers: servers},
					acp.MethodSessionLoad:   acp.LoadSessionRequest{SessionID: "s-1", MCPServers: servers},
					acp.MethodSessionResume: &acp.ResumeSessionRequest{SessionID: "s-1", MCPServers: servers},
					acp.MethodSessionFork:   acp.ForkSessionRequest{SessionID: "s-0", MCPServers: servers},
				}[method]
				err = c.Call(ctx, method, params, nil)
			case method == acp.MethodSessionNew:
				_, err = c.NewSession(ctx, &acp.NewSessionRequest{MCPServers: servers})
			case method == acp.MethodSessionLoad:
				_, err = c.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: "s-1", MCPServers: servers})
			case method == acp.MethodSessionResume:
				_, err = c.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: "s-1", MCPServers: servers})
			case method == acp.MethodSessionFork:
				_, err = c.ForkSession(ctx, &acp.ForkSessionRequest{SessionID: "s-0", MCPServers: servers})
			}
			if err != nil {
				t.Fatal(err)
			}
			o := <-got
			if o.declared != nil {
				t.Errorf("mcp/connect to the server %s declared: %v", method, o.declared)
			}
			wantRPCError(t, "mcp/connect to a server declared with another transport", o.other, acptest.CodeInvalidParams)
			if n := r.connects.Load(); n != 1 {
				t.Errorf("Connect ran %d times, want 1", n)
			}
		})
	}
}

// mcp/message (request and notification) and mcp/disconnect reach their
// handlers only for a connection Connect opened and no disconnect closed.
func TestMCPUnknownConnectionRefused(t *testing.T) {
	r := newMCPRecorder()
	_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	ctx := context.Background()
	message := func(id string) error {
		_, err := a.Call(ctx, acp.MethodMCPMessage, map[string]any{"connectionId": id, "method": "tools/list"})
		return err
	}
	disconnect := func(id string) error {
		_, err := a.Call(ctx, acp.MethodMCPDisconnect, map[string]any{"connectionId": id})
		return err
	}
	notify := func(id string) {
		if err := a.Notify(acp.MethodMCPMessage, map[string]any{"connectionId": id, "method": "notifications/initialized"}); err != nil {
			t.Fatal(err)
		}
	}

	// Never opened: a guess at the id Connect will return.
	wantRPCError(t, "mcp/message before any connect", message("srv-1/1"), acptest.CodeInvalidParams, "srv-1/1", "no open MCP connection")
	r.waitDiag(t, acp.DiagUnknownMCPConnection)
	wantRPCError(t, "mcp/disconnect before any connect", disconnect("srv-1/1"), acptest.CodeInvalidParams, "no open MCP connection")
	r.waitDiag(t, acp.DiagUnknownMCPConnection)
	notify("srv-1/1")
	r.waitDiag(t, acp.DiagUnknownMCPConnection)

	id := mcpOpen(t, a, "srv-1")
	if err := message(id); err != nil {
		t.Fatalf("mcp/message on an open connection: %v", err)
	}
	notify(id)
	if got := hostileWait(t, r.notes, "the notification on the open connection"); got != id {
		t.Errorf("notified on %q, want %q", got, id)
	}
	if err := disconnect(id); err != nil {
		t.Fatalf("mcp/disconnect: %v", err)
	}

	// Closed: the id is forgotten.
	wantRPCError(t, "mcp/message after disconnect", message(id), acptest.CodeInvalidParams)
	r.waitDiag(t, acp.DiagUnknownMCPConnection)
	wantRPCError(t, "a second mcp/disconnect", disconnect(id), acptest.CodeInvalidParams)
	r.waitDiag(t, acp.DiagUnknownMCPConnection)
	notify(id)
	r.waitDiag(t, acp.DiagUnknownMCPConnection)

	if m, d := r.messages.Load(), r.disconnects.Load(); m != 1 || d != 1 {
		t.Errorf("Message ran %d times, Disconnect %d; want once each", m, d)
	}
	// Notify runs on the callback goroutine in wire order with the
	// diagnostics: had a refused notification reached it, it would be
	// queued before the last diagnostic.
	select {
	case got := <-r.notes:
		t.Errorf("a refused notification reached Notify (on %q)", got)
	default:
	}
}

// A failed Disconnect leaves the connection open: the agent may go on
// using it, or retry.
func TestMCPFailedDisconnectKeepsConnection(t *testing.T) {
	r := newMCPRecorder()
	opts := r.options(acp.Limits{})
	var fail atomic.Bool
	fail.Store(true)
	opts.MCP.Disconnect = func(context.Context, *acp.DisconnectMCPRequest) (*acp.DisconnectMCPResponse, error) {
		if fail.Swap(false) {
			return nil, &acp.Error{Code: -32001, Message: "busy"}
		}
		return nil, nil
	}
	_, _, a := mcpSetup(t, opts, "srv-1")
	ctx := context.Background()
	id := mcpOpen(t, a, "srv-1")
	_, err := a.Call(ctx, acp.MethodMCPDisconnect, map[string]any{"connectionId": id})
	wantRPCError(t, "the failed mcp/disconnect", err, -32001, "busy")
	if _, err := a.Call(ctx, acp.MethodMCPMessage, map[string]any{"connectionId": id, "method": "ping"}); err != nil {
		t.Errorf("mcp/message after a failed disconnect: %v", err)
	}
	if _, err := a.Call(ctx, acp.MethodMCPDisconnect, map[string]any{"connectionId": id}); err != nil {
		t.Errorf("mcp/disconnect retried: %v", err)
	}
}

// MCP connections belong to the ACP connection, not to the session that
// declared their server (mcp/connect names no session): closing the session
// leaves them open and the server reachable.
func TestMCPConnectionsOutliveTheirSession(t *testing.T) {
	r := newMCPRecorder()
	_, s, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
	id := mcpOpen(t, a, "srv-1")
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Call(context.Background(), acp.MethodMCPMessage, map[string]any{"connectionId": id, "method": "ping"}); err != nil {
		t.Errorf("mcp/message after the session closed: %v", err)
	}
	mcpOpen(t, a, "srv-1")
}

// At most Limits.MaxMCPConnections connections are open (or being opened)
// at once; over it mcp/connect is refused with an error naming the limit
// and a limit_exceeded diagnostic, and Connect does not run. A successful
// disconnect, or a failed Connect, frees the slot.
func TestMCPMaxConnections(t *testing.T) {
	refused := func(t *testing.T, r *mcpRecorder, a *acptest.Session, max int) {
		t.Helper()
		_, err := a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": "srv-1"})
		e := wantRPCError(t, "mcp/connect over the limit", err, acptest.CodeInternalError, acp.ErrLimitExceeded.Error(), "Limits.MaxMCPConnections")
		if e != nil && string(e.Data) != fmt.Sprintf(`{"limit":"MaxMCPConnections","value":%d}`, max) {
			t.Errorf("error data %s", e.Data)
		}
		if d := r.waitDiag(t, acp.DiagLimitExceeded); !strings.Contains(d.Message, "MaxMCPConnections") {
			t.Errorf("diagnostic %q does not name the limit", d.Message)
		}
	}

	t.Run("default", func(t *testing.T) {
		r := newMCPRecorder()
		_, _, a := mcpSetup(t, r.options(acp.Limits{}), "srv-1")
		for range 64 {
			mcpOpen(t, a, "srv-1")
		}
		refused(t, r, a, 64)
		if n := r.connects.Load(); n != 64 {
			t.Errorf("Connect ran %d times, want 64", n)
		}
	})

	t.Run("disconnect frees a slot", func(t *testing.T) {
		r := newMCPRecorder()
		_, _, a := mcpSetup(t, r.options(acp.Limits{MaxMCPConnections: 2}), "srv-1")
		first := mcpOpen(t, a, "srv-1")
		mcpOpen(t, a, "srv-1")
		refused(t, r, a, 2)
		if _, err := a.Call(context.Background(), acp.MethodMCPDisconnect, map[string]any{"connectionId": first}); err != nil {
			t.Fatal(err)
		}
		mcpOpen(t, a, "srv-1")
		refused(t, r, a, 2)
		if n := r.connects.Load(); n != 3 {
			t.Errorf("Connect ran %d times, want 3", n)
		}
	})

	t.Run("connects being served count", func(t *testing.T) {
		r := newMCPRecorder()
		opts := r.options(acp.Limits{MaxMCPConnections: 1})
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int64
		serve := opts.MCP.Connect
		opts.MCP.Connect = func(ctx context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
			if calls.Add(1) == 1 { // only the first waits, so a wrongly admitted second one fails the test rather than hangs it
				close(entered)
				<-release
			}
			return serve(ctx, req)
		}
		_, _, a := mcpSetup(t, opts, "srv-1")
		first := make(chan error, 1)
		go func() {
			_, err := a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": "srv-1"})
			first <- err
		}()
		hostileWait(t, entered, "the first Connect")
		refused(t, r, a, 1)
		close(release)
		if err := hostileWait(t, first, "the first mcp/connect"); err != nil {
			t.Fatal(err)
		}
		refused(t, r, a, 1)
	})

	t.Run("failed connect frees its slot", func(t *testing.T) {
		r := newMCPRecorder()
		opts := r.options(acp.Limits{MaxMCPConnections: 1})
		serve := opts.MCP.Connect
		opts.MCP.Connect = func(ctx context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
			if req.ServerID == "srv-down" {
				return nil, &acp.Error{Code: -32001, Message: "down"}
			}
			return serve(ctx, req)
		}
		_, _, a := mcpSetup(t, opts, "srv-1", "srv-down")
		for range 3 {
			_, err := a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": "srv-down"})
			wantRPCError(t, "mcp/connect to a failing server", err, -32001, "down")
		}
		mcpOpen(t, a, "srv-1")
	})
}

// A withdrawn mcp/connect keeps its slot while its Connect still runs
// (runHandler answers the agent at once, the handler goes on), and a
// connection Connect opens after the agent withdrew the request is
// disconnected, since the agent never learns its id.
func TestMCPWithdrawnConnectKeepsItsSlot(t *testing.T) {
	entered, release := make(chan string, 4), make(chan struct{})
	disconnected := make(chan string, 4)
	var calls atomic.Int64
	copts := &acp.ClientOptions{
		Limits: acp.Limits{MaxMCPConnections: 1},
		MCP: acp.MCPHandlers{
			Connect: func(_ context.Context, req *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
				if calls.Add(1) == 1 {
					entered <- req.ServerID
					<-release // ignores its context, as a careless handler does
				}
				return &acp.ConnectMCPResponse{ConnectionID: fmt.Sprint("conn-", calls.Load())}, nil
			},
			Disconnect: func(_ context.Context, req *acp.DisconnectMCPRequest) (*acp.DisconnectMCPResponse, error) {
				disconnected <- req.ConnectionID
				return nil, nil
			},
		},
	}
	_, _, a := mcpSetup(t, copts, "s")
	r, err := a.Start(acp.MethodMCPConnect, map[string]any{"serverId": "s"})
	if err != nil {
		t.Fatal(err)
	}
	hostileWait(t, entered, "Connect to run")
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	hostileWait(t, r.Done(), "the withdrawn connect's answer")

	// The first Connect still runs: its slot is taken.
	_, err = a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": "s"})
	wantRPCError(t, "a second connect while the first Connect runs", err, -32603, "MaxMCPConnections")

	close(release)
	if id := hostileWait(t, disconnected, "the abandoned connection's Disconnect"); id != "conn-1" {
		t.Errorf("Disconnect(%q), want conn-1", id)
	}
	// Disconnected, it frees the slot: a connect now reaches Connect.
	if id := mcpOpen(t, a, "s"); id != "conn-2" {
		t.Errorf("connection %q, want conn-2", id)
	}
}

// A withdrawn mcp/disconnect leaves the connection closing while its
// Disconnect runs, and Disconnect's own success forgets it: no message
// reaches a connection being disconnected, and its slot is freed when
// Disconnect succeeds.
func TestMCPWithdrawnDisconnectStillCloses(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var messages atomic.Int64
	copts := &acp.ClientOptions{
		Limits: acp.Limits{MaxMCPConnections: 1},
		MCP: acp.MCPHandlers{
			Connect: func(context.Context, *acp.ConnectMCPRequest) (*acp.ConnectMCPResponse, error) {
				return &acp.ConnectMCPResponse{ConnectionID: "conn-1"}, nil
			},
			Message: func(context.Context, *acp.MessageMCPRequest) (*acp.MessageMCPResponse, error) {
				messages.Add(1)
				return &acp.MessageMCPResponse{Result: json.RawMessage(`{}`)}, nil
			},
			Disconnect: func(context.Context, *acp.DisconnectMCPRequest) (*acp.DisconnectMCPResponse, error) {
				entered <- struct{}{}
				<-release
				return nil, nil
			},
		},
	}
	_, _, a := mcpSetup(t, copts, "s")
	id := mcpOpen(t, a, "s")
	r, err := a.Start(acp.MethodMCPDisconnect, map[string]any{"connectionId": id})
	if err != nil {
		t.Fatal(err)
	}
	hostileWait(t, entered, "Disconnect to run")
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	hostileWait(t, r.Done(), "the withdrawn disconnect's answer")
	_, err = a.Call(context.Background(), acp.MethodMCPMessage, map[string]any{"connectionId": id, "method": "tools/list"})
	wantRPCError(t, "a message while Disconnect runs", err, -32602, "no open MCP connection")
	if n := messages.Load(); n != 0 {
		t.Errorf("%d messages reached Message", n)
	}

	// Disconnect succeeds after the agent withdrew it: the connection is
	// forgotten and its slot freed, so a connect gets through (each try is a
	// round trip; the limit answers until Disconnect has returned).
	close(release)
	deadline := time.Now().Add(hostileSafety)
	for {
		_, err := a.Call(context.Background(), acp.MethodMCPConnect, map[string]any{"serverId": "s"})
		if err == nil {
			break
		}
		wantRPCError(t, "a connect while the slot is held", err, -32603, "MaxMCPConnections")
		if time.Now().After(deadline) {
			t.Fatal("the slot of a connection whose Disconnect succeeded was never freed")
		}
	}
}
