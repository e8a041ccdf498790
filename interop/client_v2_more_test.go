package interop

// The v1 interop scenarios of client_test.go against the TypeScript SDK's
// v2 agent (agent_v2.mjs), where v2 allows them, with the same client
// calls: what changes is said where it does. Not here, because v2 has no
// such thing: TestInteropFS and TestInteropTerminal (no client fs or
// terminal methods; the v2 agent's own terminal is
// TestInteropV2BackgroundTerminal), the session modes of
// TestInteropModesAndConfig (SetMode is ErrNotSupported) and the fs half
// of TestInteropCancelRequest.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// TestInteropV2PermissionAnswers: every answer of TestInteropPermission —
// each option kind, the ready policies, cancelled, an option the agent did
// not offer — reaches the v2 agent as it should; the handler sees the
// request's subject as the folded tool call, with the four options.
func TestInteropV2PermissionAnswers(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var mu sync.Mutex
	var policy acp.PermissionHandler
	seen := make(chan *acp.PermissionRequest, 1)
	c := connectTSV2(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			seen <- req
			mu.Lock()
			p := policy
			mu.Unlock()
			return p(ctx, req)
		},
	})
	s := v2Session(t, c)
	selectID := func(id string) acp.PermissionHandler {
		return func(context.Context, *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			return acp.SelectedOutcome(id), nil
		}
	}
	cases := []struct {
		name   string
		policy acp.PermissionHandler
		report string
		stop   schema.StopReason
		status schema.ToolCallStatus
	}{
		{"allow_once", selectID("allow-once"), "outcome:selected:allow-once", schema.StopReasonEndTurn, schema.ToolCallStatusCompleted},
		{"allow_always", selectID("allow-always"), "outcome:selected:allow-always", schema.StopReasonEndTurn, schema.ToolCallStatusCompleted},
		{"reject_once", selectID("reject-once"), "outcome:selected:reject-once", schema.StopReasonEndTurn, schema.ToolCallStatusFailed},
		{"reject_always", selectID("reject-always"), "outcome:selected:reject-always", schema.StopReasonEndTurn, schema.ToolCallStatusFailed},
		{"AllowAll policy", acp.AllowAll, "outcome:selected:allow-once", schema.StopReasonEndTurn, schema.ToolCallStatusCompleted},
		{"RejectAll policy", acp.RejectAll, "outcome:selected:reject-once", schema.StopReasonEndTurn, schema.ToolCallStatusFailed},
		{"CancelAll policy", acp.CancelAll, "outcome:cancelled", schema.StopReasonCancelled, schema.ToolCallStatusFailed},
		// Never a silent allow: an option that was not offered is an
		// error reply; the v2 agent then marks its call failed (the v1
		// agent left it pending).
		{"unoffered option", selectID("allow-forever"), "outcome:error:-32603", schema.StopReasonEndTurn, schema.ToolCallStatusFailed},
	}
	for i, tc := range cases {
		mu.Lock()
		policy = tc.policy
		mu.Unlock()
		_, st, stop, err := run(t, ctx, s, "permission")
		if err != nil || stop != tc.stop {
			t.Errorf("%s: stop %q, err %v; want %q", tc.name, stop, err, tc.stop)
		}
		checkReports(t, tc.name, reports(st), tc.report)
		id := fmt.Sprintf("t%d-perm", i+1)
		if len(st.ToolCalls) != 1 || st.ToolCalls[0].ToolCallID != id || st.ToolCalls[0].Status != tc.status {
			t.Errorf("%s: tool calls %+v; want %s %s", tc.name, st.ToolCalls, id, tc.status)
		}
		if st.Cancelled {
			t.Errorf("%s: the turn is marked cancelled locally; only the agent said so", tc.name)
		}
		req := recv(t, seen, "the permission request")
		if req.Session != s || req.SessionID != s.ID() {
			t.Errorf("%s: request for session %q, want %q", tc.name, req.SessionID, s.ID())
		}
		// The subject names the call by id only; the handler sees it as
		// folded from the tool_call_update before.
		got := req.ToolCall
		if got.ToolCallID != id || got.Title != "Write /tmp/acp-interop/b.txt" || got.Kind != schema.ToolKindEdit ||
			len(got.Locations) != 1 || got.Locations[0].Path != "/tmp/acp-interop/b.txt" ||
			string(got.RawInput) != `{"path":"/tmp/acp-interop/b.txt","content":"b"}` {
			t.Errorf("%s: the handler's ToolCall %+v", tc.name, got)
		}
		if diff := cmp.Diff(tsPermissionOptions, req.Options); diff != "" {
			t.Errorf("%s: options (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestInteropV2CancelBoth: TestInteropCancel's two ways — Turn.Cancel and
// ending the Prompt ctx — while the permission request is pending: the
// handler's ctx ends, its late allow is dropped, the turn ends cancelled
// with the agent's idle, and the session takes the next prompt. The v2
// agent withdraws its request itself ($/cancel_request), so it reports
// the -32800 it got, or the cancelled answer when ours came first.
func TestInteropV2CancelBoth(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	asked := make(chan struct{}, 1)
	causes := make(chan error, 1)
	c := connectTSV2(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			asked <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return acp.SelectedOutcome("allow-once"), nil // too late: must be dropped
		},
	})
	s := v2Session(t, c)
	for _, via := range []string{"Turn.Cancel", "Prompt ctx"} {
		promptCtx, cancelPrompt := context.WithCancel(ctx)
		turn, err := s.Prompt(promptCtx, schema.Text("cancel"))
		if err != nil {
			t.Fatal(err)
		}
		recv(t, asked, "the permission request")
		if via == "Turn.Cancel" {
			turn.Cancel()
		} else {
			cancelPrompt()
		}
		if cause := recv(t, causes, "the handler's ctx to end"); cause == nil {
			t.Errorf("%s: the handler's ctx ended without a cause", via)
		}
		stop, err := turn.Wait()
		cancelPrompt()
		if err != nil || stop != schema.StopReasonCancelled {
			t.Fatalf("%s: Wait: %q, %v; want cancelled", via, stop, err)
		}
		st := turn.State()
		r := reports(st)
		if len(r) != 2 || (r[0] != "permission:error:-32800" && r[0] != "permission:cancelled") || r[1] != "session/cancel:received" {
			t.Errorf("%s: reports %q; want the withdrawn or cancelled permission, then session/cancel:received", via, r)
		}
		if !st.Cancelled || len(st.ToolCalls) != 1 || st.ToolCalls[0].Status != schema.ToolCallStatusFailed {
			t.Errorf("%s: cancelled %v, tool calls %+v; want the agent's failed", via, st.Cancelled, st.ToolCalls)
		}
		checkReports(t, via+": prompt after the cancel", mustRun(t, ctx, s, "again"), "echo:again")
	}
}

// TestInteropV2CloseCancelsTurn: Session.Close while the turn waits for a
// permission answer ends the turn cancelled and answers the request, as
// in v1 (TestInteropCloseCancelsTurn).
func TestInteropV2CloseCancelsTurn(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	asked := make(chan struct{}, 1)
	c := connectTSV2(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			asked <- struct{}{}
			<-ctx.Done()
			return acp.SelectedOutcome("allow-once"), nil
		},
	})
	s := v2Session(t, c)
	turn, err := s.Prompt(ctx, schema.Text("cancel"))
	if err != nil {
		t.Fatal(err)
	}
	recv(t, asked, "the permission request")
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonCancelled || !turn.State().Cancelled {
		t.Fatalf("Wait: %q, %v, cancelled %v; want cancelled", stop, err, turn.State().Cancelled)
	}
	if _, err := s.Prompt(ctx, schema.Text("after close")); !errors.Is(err, acp.ErrSessionClosed) {
		t.Errorf("prompt to the closed session: %v; want ErrSessionClosed", err)
	}
}

// TestInteropV2Auth: TestInteropAuth in v2. The auth method is v2's
// {type, methodId}; session/new and LoadSession (session/resume) fail
// with -32000 before Authenticate, which is auth/login in v2; Logout
// (auth/logout) takes it back.
func TestInteropV2Auth(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTSV2(t, nil, "TSAGENT_REQUIRE_AUTH=1")
	init := c.InitializeResponse()
	wantMethods := []schema.AuthMethod{&schema.AgentAuthMethod{ID: "token", Name: "Token"}}
	if diff := cmp.Diff(wantMethods, init.AuthMethods); diff != "" {
		t.Errorf("auth methods (-want +got):\n%s", diff)
	}
	if init.AgentInfo == nil || init.AgentInfo.Name != "acp-interop-tsagent-v2" {
		t.Errorf("agent info %+v", init.AgentInfo)
	}
	newSession := func() (*acp.Session, error) {
		return c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	}
	var e *schema.Error
	if _, err := newSession(); !errors.Is(err, schema.ErrAuthRequired) || !errors.As(err, &e) || e.Code != schema.CodeAuthRequired {
		t.Fatalf("NewSession before Authenticate: %v; want ErrAuthRequired (-32000)", err)
	}
	if _, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-1", Cwd: "/tmp/acp-interop"}); !errors.Is(err, schema.ErrAuthRequired) {
		t.Errorf("LoadSession before Authenticate: %v; want ErrAuthRequired", err)
	}
	if s := c.Session("sess-1"); s != nil {
		t.Errorf("a failed load left session %q registered", s.ID())
	}
	if _, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: "password"}); !errors.As(err, &e) || e.Code != schema.CodeInvalidParams {
		t.Errorf("Authenticate(password): %v; want the agent's -32602", err)
	}
	if _, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: "token"}); err != nil {
		t.Fatalf("Authenticate(token): %v", err)
	}
	s, err := newSession()
	if err != nil {
		t.Fatalf("NewSession after Authenticate: %v", err)
	}
	checkReports(t, "prompt after Authenticate", mustRun(t, ctx, s, "hello"), "echo:hello")
	if _, err := c.Logout(ctx, nil); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	if _, err := newSession(); !errors.Is(err, schema.ErrAuthRequired) {
		t.Errorf("NewSession after Logout: %v; want ErrAuthRequired", err)
	}
}

// TestInteropV2ListLoadResumeCloseDelete: TestInteropLoadResumeListClose
// in v2: ListSessions follows the cursor; LoadSession (session/resume
// from the start) folds the replay into History before it returns;
// ResumeSession (no replayFrom) replays nothing; Close and DeleteSession
// reach the agent.
func TestInteropV2ListLoadResumeCloseDelete(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTSV2(t, nil)
	list := func(req *schema.ListSessionsRequest) (pages [][]string) {
		t.Helper()
		for page, err := range c.ListSessions(ctx, req) {
			if err != nil {
				t.Fatalf("ListSessions: %v", err)
			}
			var ids []string
			for _, si := range page.Sessions {
				ids = append(ids, si.SessionID)
			}
			pages = append(pages, ids)
		}
		return pages
	}
	if diff := cmp.Diff([][]string{{"sess-1", "sess-2"}, {"sess-3"}}, list(nil)); diff != "" {
		t.Errorf("ListSessions pages (-want +got):\n%s", diff)
	}
	if pages := list(&schema.ListSessionsRequest{Cwd: "/elsewhere"}); !cmp.Equal([][]string{nil}, pages) {
		t.Errorf("ListSessions(cwd /elsewhere) pages %q; want one empty page", pages)
	}

	loaded, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-2", Cwd: "/tmp/acp-interop"})
	if err != nil {
		t.Fatalf("LoadSession: %v", err)
	}
	h := loaded.State().History
	if u, m := h.UserMessages, h.Messages; len(u) != 1 || u[0].Text != "hello from history" || len(m) != 1 || m[0].Text != "hi from history" {
		t.Errorf("History after load: users %+v, agent %+v", u, m)
	}
	checkReports(t, "prompt after load", mustRun(t, ctx, loaded, "after load"), "echo:after load")
	if h2 := loaded.State().History; len(h2.Messages) != 1 {
		t.Errorf("History after a turn: %+v; want the replay only", h2.Messages)
	}

	resumed, err := c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: "sess-3", Cwd: "/tmp/acp-interop"})
	if err != nil {
		t.Fatalf("ResumeSession: %v", err)
	}
	if h := resumed.State().History; len(h.Messages) != 0 || len(h.UserMessages) != 0 {
		t.Errorf("resumed without replayFrom, History %+v; want nothing replayed", h)
	}
	checkReports(t, "prompt after resume", mustRun(t, ctx, resumed, "after resume"), "echo:after resume")
	if err := resumed.Close(ctx); err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	if _, err := resumed.Prompt(ctx, schema.Text("after close")); !errors.Is(err, acp.ErrSessionClosed) {
		t.Errorf("prompt to the closed session: %v; want ErrSessionClosed", err)
	}
	if _, err := c.DeleteSession(ctx, &schema.DeleteSessionRequest{SessionID: "sess-1"}); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	if pages := list(nil); !cmp.Equal([][]string{{"sess-2", "sess-3"}}, pages) {
		t.Errorf("ListSessions after delete: %q; want one page sess-2, sess-3", pages)
	}
}

// TestInteropV2Config: the config half of TestInteropModesAndConfig (v2
// has no session modes: SetMode is ErrNotSupported and sends nothing).
func TestInteropV2Config(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := v2Session(t, connectTSV2(t, nil))
	if diff := cmp.Diff(tsModelOption("a"), s.State().ConfigOptions); diff != "" {
		t.Errorf("config options from session/new (-want +got):\n%s", diff)
	}
	if err := s.SetMode(ctx, "code"); !errors.Is(err, acp.ErrNotSupported) {
		t.Errorf("SetMode in v2: %v; want ErrNotSupported", err)
	}
	opts, err := s.SetConfigOption(ctx, "model", "b")
	if err != nil {
		t.Fatalf("SetConfigOption(model, b): %v", err)
	}
	if diff := cmp.Diff(tsModelOption("b"), opts); diff != "" {
		t.Errorf("SetConfigOption result (-want +got):\n%s", diff)
	}
	var e *schema.Error
	for _, bad := range [][2]string{{"model", "c"}, {"temperature", "a"}} {
		if _, err := s.SetConfigOption(ctx, bad[0], bad[1]); err == nil || errors.As(err, &e) {
			t.Errorf("SetConfigOption(%s, %s): %v; want a local error", bad[0], bad[1], err)
		}
	}
	if _, err := s.SetConfigBool(ctx, "model", true); err == nil || errors.As(err, &e) {
		t.Errorf("SetConfigBool(model): %v; want a local error", err)
	}
	// The agent kept "b": its config_option_update in the next turn says so.
	mustRun(t, ctx, s, "updates")
	if diff := cmp.Diff(tsModelOption("b"), s.State().ConfigOptions); diff != "" {
		t.Errorf("config options after the agent's update (-want +got):\n%s", diff)
	}
}

// TestInteropV2Extension: TestInteropExtension in v2: the agent's
// _acp/note and _acp/echo reach ExtNotification and ExtMethod, Call
// reaches its _acp/ping, an unknown one is its -32601, Notify works.
func TestInteropV2Extension(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	type note struct {
		method string
		params json.RawMessage
	}
	notes := make(chan note, 4)
	c := connectTSV2(t, &acp.ClientOptions{
		ExtMethod: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "_acp/echo" {
				return nil, &schema.Error{Code: schema.CodeMethodNotFound, Message: "no " + method}
			}
			return map[string]any{"method": method, "params": params}, nil
		},
		ExtNotification: func(method string, params json.RawMessage) {
			notes <- note{method, params}
		},
	})
	s := v2Session(t, c)
	got := mustRun(t, ctx, s, "ext")
	if len(got) != 1 || !strings.HasPrefix(got[0], "echo:{") {
		t.Fatalf("ext reports %q; want one echo:<json>", got)
	}
	var echoed any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[0], "echo:")), &echoed); err != nil {
		t.Fatal(err)
	}
	wantEcho := map[string]any{"method": "_acp/echo", "params": map[string]any{"sessionId": s.ID(), "text": "ping"}}
	if diff := cmp.Diff(wantEcho, echoed); diff != "" {
		t.Errorf("what the agent got from _acp/echo (-want +got):\n%s", diff)
	}
	n := recv(t, notes, "the _acp/note notification")
	var np any
	json.Unmarshal(n.params, &np)
	if n.method != "_acp/note" || !cmp.Equal(map[string]any{"sessionId": s.ID(), "note": "hello"}, np) {
		t.Errorf("notification %s %v", n.method, np)
	}
	var pong struct {
		Pong   bool           `json:"pong"`
		Params map[string]any `json:"params"`
	}
	if err := c.Call(ctx, "_acp/ping", map[string]int{"n": 1}, &pong); err != nil {
		t.Fatalf("Call(_acp/ping): %v", err)
	}
	if !pong.Pong || pong.Params["n"] != 1.0 {
		t.Errorf("_acp/ping result %+v", pong)
	}
	if err := c.Call(ctx, "_acp/nope", nil, nil); !errors.Is(err, schema.ErrMethodNotFound) {
		t.Errorf("Call(_acp/nope): %v; want ErrMethodNotFound", err)
	}
	if err := c.Notify(ctx, "_acp/hello", map[string]string{"hi": "there"}); err != nil {
		t.Errorf("Notify: %v", err)
	}
	checkReports(t, "prompt after Notify", mustRun(t, ctx, s, "still there"), "echo:still there")
}

// TestInteropV2CancelRequest: the extension half of
// TestInteropCancelRequest in v2 (there is no fs request to withdraw):
// the agent withdraws its _acp/slow with $/cancel_request, our handler's
// ctx ends with the withdrawal as cause, and the agent gets -32800.
func TestInteropV2CancelRequest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	entered := make(chan struct{}, 1)
	causes := make(chan error, 1)
	c := connectTSV2(t, &acp.ClientOptions{
		ExtMethod: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "_acp/slow" {
				return nil, &schema.Error{Code: schema.CodeMethodNotFound, Message: "no " + method}
			}
			entered <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return map[string]bool{"late": true}, nil
		},
	})
	s := v2Session(t, c)
	checkReports(t, "cancel_request", mustRun(t, ctx, s, "cancel_request"), "cancel_request:error:-32800")
	recv(t, entered, "the handler to be called")
	if cause := recv(t, causes, "the handler's ctx to end"); cause == nil || !strings.Contains(cause.Error(), "withdrew") {
		t.Errorf("the handler's ctx cause %v; want the agent's withdrawal", cause)
	}
}

// TestInteropV2Error: TestInteropError in v2. A failure after the prompt
// was accepted is the idle stop reason "error" with the agent's error,
// not a failed prompt: Wait returns StopReasonError and no error, the
// turn keeps the agent's error (code, message, data) and what it
// streamed; the session takes the next prompt. (A prompt the agent
// refuses before accepting it is TestInteropV2Reject.)
func TestInteropV2Error(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s := v2Session(t, connectTSV2(t, nil))
	_, st, stop, err := run(t, ctx, s, "error")
	if err != nil || stop != schema.StopReasonError {
		t.Fatalf("Wait: %q, %v; want stop reason error", stop, err)
	}
	e := st.AgentError
	if e == nil || e.Code != schema.CodeInternalError || !strings.Contains(e.Message, "tsagent was asked to fail") {
		t.Fatalf("agent error %+v; want -32603 from the agent", e)
	}
	var data any
	if err := json.Unmarshal(e.Data, &data); err != nil || !cmp.Equal(map[string]any{"scenario": "error"}, data) {
		t.Errorf("error data %s (%v)", e.Data, err)
	}
	if len(st.Messages) != 1 || st.Messages[0].Text != "about to fail" {
		t.Errorf("messages of the failed turn %+v", st.Messages)
	}
	checkReports(t, "prompt after the error", mustRun(t, ctx, s, "next"), "echo:next")
	if got := s.State().Turns; got != 2 {
		t.Errorf("%d turns, want 2", got)
	}
}
