package interop

// The Go client (package acp) against the TypeScript-SDK agent in tsagent/:
// one test per client-side feature. Each asserts what our client folds or
// returns, and what the agent reports back about what it received (its
// reports are agent_message_chunks with message ids "t<turn>-r<n>").

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
	"github.com/google/go-cmp/cmp"
)

// testTimeout bounds each test; every scenario takes well under a second.
const testTimeout = 20 * time.Second

// connectTS starts `node agent.mjs` through acp.CommandTransport and performs
// the handshake. env is added to the agent's environment. The client is
// closed when the test ends; the agent's stderr tail is logged on failure.
func connectTS(t *testing.T, opts *acp.ClientOptions, env ...string) *acp.Client {
	t.Helper()
	node := needTool(t, "node")
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript agent's dependencies failed: %v", npmErr)
	}
	cmd := exec.Command(node, "agent.mjs")
	cmd.Dir = tsagentDir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		t.Fatalf("acp.Connect to the TypeScript agent: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("tsagent stderr tail:\n%s", c.StderrTail())
		}
	})
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func newSession(t *testing.T, ctx context.Context, c *acp.Client, cwd string) *acp.Session {
	t.Helper()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: cwd})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	return s
}

// run prompts text, waits for the turn and returns it with its final state.
func run(t *testing.T, ctx context.Context, s *acp.Session, text string) (*acp.Turn, acp.TurnState, schema.StopReason, error) {
	t.Helper()
	turn, err := s.Prompt(ctx, schema.Text(text))
	if err != nil {
		t.Fatalf("Prompt(%q): %v", text, err)
	}
	stop, err := turn.Wait()
	return turn, turn.State(), stop, err
}

// mustRun is run for a turn that must end with end_turn; it returns the
// agent's reports.
func mustRun(t *testing.T, ctx context.Context, s *acp.Session, text string) []string {
	t.Helper()
	_, st, stop, err := run(t, ctx, s, text)
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("prompt %q: stop %q, err %v; want end_turn", text, stop, err)
	}
	return reports(st)
}

var reportID = regexp.MustCompile(`^t\d+-r\d+$`)

// reports returns the texts of the agent's report messages, in order.
func reports(st acp.TurnState) []string {
	var out []string
	for _, m := range st.Messages {
		if reportID.MatchString(m.MessageID) {
			out = append(out, m.Text)
		}
	}
	return out
}

func checkReports(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: agent reports (-want +got):\n%s", what, diff)
	}
}

func ptr[T any](v T) *T { return &v }

// recv waits for a value from ch, failing the test after testTimeout.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// The agent's fixed session data (agent.mjs: MODES, MODEL_VALUES).
var (
	tsModes = []schema.SessionMode{
		{ID: "ask", Name: "Ask", Description: "Ask before changing files"},
		{ID: "code", Name: "Code", Description: "Change files freely"},
	}
	tsModelOption = func(current string) []schema.SessionConfigOption {
		return []schema.SessionConfigOption{&schema.SelectConfigOption{
			ID: "model", Name: "Model", Description: "Which model answers", Category: schema.ConfigCategoryModel,
			CurrentValue: current,
			Options: []schema.SelectOption{
				{Value: "a", Name: "Model A", Description: "The first model"},
				{Value: "b", Name: "Model B", Description: "The second model"},
			},
		}}
	}
	tsPermissionOptions = []schema.PermissionOption{
		{OptionID: "allow-once", Name: "Allow once", Kind: schema.PermissionAllowOnce},
		{OptionID: "allow-always", Name: "Allow always", Kind: schema.PermissionAllowAlways},
		{OptionID: "reject-once", Name: "Reject once", Kind: schema.PermissionRejectOnce},
		{OptionID: "reject-always", Name: "Reject always", Kind: schema.PermissionRejectAlways},
	}
)

// ---------------------------------------------------------------------------

// TestInteropUpdates: every stable update kind the TS SDK sends folds into
// Turn.State (messages joined by messageId even across other kinds, thought,
// user echo, tool call patched with diff+terminal+content, plan) and
// Session.State (commands, mode, config options, session info, usage, plan);
// Turn.Updates, ranged while the turn runs, yields them all in wire order.
func TestInteropUpdates(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, nil)
	cwd := t.TempDir()
	s := newSession(t, ctx, c, cwd)

	turn, err := s.Prompt(ctx, schema.Text("updates"))
	if err != nil {
		t.Fatal(err)
	}
	followed := make(chan []string, 1)
	go func() {
		var kinds []string
		for u := range turn.Updates() {
			kinds = append(kinds, u.UpdateKind())
		}
		followed <- kinds
	}()
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait: %q, %v; want end_turn", stop, err)
	}

	wantKinds := []string{
		"user_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_thought_chunk",
		"tool_call", "tool_call_update", "plan", "available_commands_update", "current_mode_update",
		"config_option_update", "session_info_update", "usage_update", "agent_message_chunk",
	}
	if diff := cmp.Diff(wantKinds, recv(t, followed, "Turn.Updates to end")); diff != "" {
		t.Errorf("kinds yielded by Turn.Updates (-want +got):\n%s", diff)
	}

	var replayed []string
	for u := range turn.Updates() {
		replayed = append(replayed, u.UpdateKind())
	}
	if diff := cmp.Diff(wantKinds, replayed); diff != "" {
		t.Errorf("kinds replayed by Turn.Updates after the end (-want +got):\n%s", diff)
	}

	plan := []schema.PlanEntry{
		{Content: "Read the file", Priority: schema.PlanEntryPriorityHigh, Status: schema.PlanEntryStatusCompleted},
		{Content: "Edit the file", Priority: schema.PlanEntryPriorityMedium, Status: schema.PlanEntryStatusInProgress},
		{Content: "Run the tests", Priority: schema.PlanEntryPriorityLow, Status: schema.PlanEntryStatusPending},
	}
	wantTurn := acp.TurnState{
		StopReason:   schema.StopReasonEndTurn,
		UserMessages: []acp.Message{{MessageID: "t1-u1", Text: "updates"}},
		// "!" came last, after ten updates of other kinds: folded by messageId.
		// Order: the user's chunk came first, then the message, the thought,
		// the tool call.
		Messages: []acp.Message{{MessageID: "t1-m1", Text: "Hello, world!", Order: 1}},
		Thoughts: []acp.Message{{MessageID: "t1-th1", Text: "thinking", Order: 2}},
		ToolCalls: []acp.ToolCallState{{
			Order:      3,
			ToolCallID: "call-1",
			Title:      "Edit /tmp/acp-interop/a.txt",
			Kind:       schema.ToolKindEdit,
			Status:     schema.ToolCallStatusCompleted,
			Content: []schema.ToolCallContent{
				&schema.DiffContent{Path: "/tmp/acp-interop/a.txt", OldText: ptr("old\n"), NewText: "new\n"},
				&schema.TerminalContent{TerminalID: "term-1"},
				&schema.ToolContent{Content: schema.Text("edited")},
			},
			Locations: []schema.ToolCallLocation{{Path: "/tmp/acp-interop/a.txt", Line: ptr[uint32](1)}},
			RawInput:  json.RawMessage(`{"path":"/tmp/acp-interop/a.txt"}`),
			RawOutput: json.RawMessage(`{"ok":true}`),
		}},
		Plan: plan,
	}
	if diff := cmp.Diff(wantTurn, turn.State()); diff != "" {
		t.Errorf("TurnState (-want +got):\n%s", diff)
	}

	wantSession := acp.SessionState{
		SessionID:     s.ID(),
		Cwd:           cwd,
		Modes:         &schema.SessionModeState{CurrentModeID: "code", AvailableModes: tsModes},
		ConfigOptions: tsModelOption("a"),
		Commands: []schema.AvailableCommand{
			{Name: "web", Description: "Search the web", Input: &schema.AvailableCommandInput{Hint: "query to search for"}},
			{Name: "test", Description: "Run the tests"},
		},
		Title:     "Interop session",
		UpdatedAt: "2026-02-03T04:05:06Z",
		Usage:     &schema.UsageUpdate{Used: 1234, Size: 200000, Cost: &schema.Cost{Amount: 0.5, Currency: "USD"}},
		Plan:      plan,
		Turns:     1,
	}
	ss := s.State()
	if diff := cmp.Diff(wantSession, ss); diff != "" {
		t.Errorf("SessionState (-want +got):\n%s", diff)
	}
	if len(ss.Outside) != 0 {
		t.Errorf("updates kept outside the turn: %v", ss.Outside)
	}
}

// TestInteropPermission: the handler sees the request with the tool call as
// folded so far (the tool_call's locations and rawInput, which the
// request's toolCall lacks) and the four offered options; every answer —
// each option kind, the ready policies, cancelled, and an option the agent
// did not offer — reaches the TS side as it should.
func TestInteropPermission(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)

	var mu sync.Mutex
	var policy acp.PermissionHandler
	seen := make(chan *acp.PermissionRequest, 1)
	c := connectTS(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			seen <- req
			mu.Lock()
			p := policy
			mu.Unlock()
			return p(ctx, req)
		},
	})
	s := newSession(t, ctx, c, t.TempDir())

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
		// Never a silent allow: an option that was not offered is an error reply.
		{"unoffered option", selectID("allow-forever"), "outcome:error:-32603", schema.StopReasonEndTurn, schema.ToolCallStatusPending},
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
		if len(st.ToolCalls) != 1 || st.ToolCalls[0].Status != tc.status {
			t.Errorf("%s: tool calls %+v; want perm-1 %s", tc.name, st.ToolCalls, tc.status)
		}
		if st.Cancelled {
			t.Errorf("%s: the turn is marked cancelled locally; only the agent said so", tc.name)
		}

		req := recv(t, seen, "the permission request")
		if req.Session != s || req.SessionID != s.ID() {
			t.Errorf("%s: request for session %p %q, want %p %q", tc.name, req.Session, req.SessionID, s, s.ID())
		}
		wantTC := acp.ToolCallState{
			ToolCallID: "perm-1",
			Title:      "Write /tmp/acp-interop/b.txt",
			Kind:       schema.ToolKindEdit,
			Status:     schema.ToolCallStatusPending,
			Locations:  []schema.ToolCallLocation{{Path: "/tmp/acp-interop/b.txt"}},
			RawInput:   json.RawMessage(`{"path":"/tmp/acp-interop/b.txt","content":"b"}`),
		}
		if diff := cmp.Diff(wantTC, req.ToolCall); diff != "" {
			t.Errorf("%s: the handler's ToolCall (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tsPermissionOptions, req.Options); diff != "" {
			t.Errorf("%s: options (-want +got):\n%s", tc.name, diff)
		}
		if o := req.Option(schema.PermissionRejectAlways); o == nil || o.OptionID != "reject-always" {
			t.Errorf("%s: Option(reject_always) = %+v", tc.name, o)
		}
		if got := len(s.Turns()); got != i+1 {
			t.Errorf("%s: %d turns, want %d", tc.name, got, i+1)
		}
	}
}

// TestInteropCancel: cancelling a turn while its permission request is
// pending — by Turn.Cancel, or by ending the Prompt ctx — marks the tool call
// cancelled locally, cancels the handler's ctx, and the TS side sees
// session/cancel and the {"outcome":"cancelled"} answer (the handler's later
// "allow" is dropped); the turn ends cancelled and the session takes the
// next prompt.
func TestInteropCancel(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	asked := make(chan *acp.PermissionRequest, 1)
	handlerCause := make(chan error, 1)
	c := connectTS(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			asked <- req
			<-ctx.Done()
			handlerCause <- context.Cause(ctx)
			return acp.SelectedOutcome("allow-once"), nil // too late: must be dropped
		},
	})
	s := newSession(t, ctx, c, t.TempDir())

	for i, via := range []string{"Turn.Cancel", "Prompt ctx"} {
		promptCtx, cancelPrompt := context.WithCancel(ctx)
		turn, err := s.Prompt(promptCtx, schema.Text("cancel"))
		if err != nil {
			t.Fatal(err)
		}
		req := recv(t, asked, "the permission request")

		// The request's toolCall is only {"toolCallId":"cancel-1"}; the
		// handler sees the folded tool call.
		wantTC := acp.ToolCallState{ToolCallID: "cancel-1", Title: "Run a long command", Kind: schema.ToolKindExecute, Status: schema.ToolCallStatusPending, Order: 1}
		if diff := cmp.Diff(wantTC, req.ToolCall); diff != "" {
			t.Errorf("%s: the handler's ToolCall (-want +got):\n%s", via, diff)
		}
		wantMsg := []acp.Message{{MessageID: fmt.Sprintf("t%d-w1", 2*i+1), Text: "working"}}
		if diff := cmp.Diff(wantMsg, turn.State().Messages); diff != "" {
			t.Errorf("%s: messages before the cancel (-want +got):\n%s", via, diff)
		}

		// The tool call is marked cancelled locally; only the agent's own
		// final status (it sends "failed" once it has the cancelled answer)
		// may replace that, so a snapshot shows "cancelled" unless it already
		// holds that update.
		checkMarked := func(when string) {
			t.Helper()
			// The state and the updates folded into it, at one point.
			st, seq := turn.Snapshot()
			want := schema.ToolCallStatusCancelled
			for ev := range turn.Events(context.Background(), 0) {
				if ev.Seq > seq {
					break
				}
				if tu, ok := ev.Update.(*schema.ToolCallUpdate); ok && ev.Origin == acp.OriginAgent && tu.ToolCallID == "cancel-1" && tu.Status != nil && *tu.Status == schema.ToolCallStatusFailed {
					want = schema.ToolCallStatusFailed
				}
			}
			if !st.Cancelled || len(st.ToolCalls) != 1 || st.ToolCalls[0].Status != want {
				t.Errorf("%s: %s: cancelled %v, tool calls %+v; want cancel-1 %s", via, when, st.Cancelled, st.ToolCalls, want)
			}
		}
		if via == "Turn.Cancel" {
			turn.Cancel()
			checkMarked("right after Cancel")
		} else {
			cancelPrompt()
		}
		if cause := recv(t, handlerCause, "the handler's ctx to end"); cause == nil {
			t.Errorf("%s: the handler's ctx ended without a cause", via)
		}
		checkMarked("once the handler is cancelled")

		stop, err := turn.Wait()
		cancelPrompt()
		if err != nil || stop != schema.StopReasonCancelled {
			t.Fatalf("%s: Wait: %q, %v; want cancelled, nil", via, stop, err)
		}
		st := turn.State()
		checkReports(t, via, reports(st), "permission:cancelled", "session/cancel:received")
		if st.StopReason != schema.StopReasonCancelled || !st.Cancelled || st.AgentStopReason != "" || st.AgentError != nil {
			t.Errorf("%s: final state: stop %q cancelled %v agentStop %q agentErr %v; want cancelled as answered by the agent",
				via, st.StopReason, st.Cancelled, st.AgentStopReason, st.AgentError)
		}
		// After the cancel the agent reported its own final status, which a
		// final status from the agent may do (only non-final ones are ignored).
		if len(st.ToolCalls) != 1 || st.ToolCalls[0].Status != schema.ToolCallStatusFailed {
			t.Errorf("%s: final tool calls %+v; want cancel-1 failed (the agent's final word)", via, st.ToolCalls)
		}

		checkReports(t, via+": prompt after the cancel", mustRun(t, ctx, s, "again"), "echo:again")
	}
}

// TestInteropCloseCancelsTurn: Session.Close while a turn waits for a
// permission answer cancels the turn locally, as session/close does on the
// agent's side: the pending request is answered {"outcome":"cancelled"} at
// once (not left to the agent's own $/cancel_request, which the TS agent
// sends only 3 s later and many agents never send), and the turn ends
// cancelled.
func TestInteropCloseCancelsTurn(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	asked := make(chan struct{}, 1)
	c := connectTS(t, &acp.ClientOptions{
		Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
			asked <- struct{}{}
			<-ctx.Done()
			return acp.SelectedOutcome("allow-once"), nil
		},
	})
	s := newSession(t, ctx, c, t.TempDir())
	turn, err := s.Prompt(ctx, schema.Text("cancel"))
	if err != nil {
		t.Fatal(err)
	}
	recv(t, asked, "the permission request")
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonCancelled {
		t.Fatalf("Wait: %q, %v; want cancelled", stop, err)
	}
	st := turn.State()
	checkReports(t, "close during a turn", reports(st), "permission:cancelled", "session/cancel:received")
	if !st.Cancelled {
		t.Errorf("the turn is not marked cancelled after Session.Close")
	}
}

// TestInteropFS: workspace.FS rooted at a temp dir serves the TS SDK's
// fs/read_text_file with line/limit and fs/write_text_file; a missing file is
// -32002 and a path outside the root -32602 on the TS side; capabilities
// follow the handlers set (read-only, none).
func TestInteropFS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	in := filepath.Join(root, "in.txt")
	secret := filepath.Join(outside, "secret.txt")
	for _, p := range []string{in, secret} {
		if err := os.WriteFile(p, []byte("one\ntwo\nthree\nfour\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readFile := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%v", err)
		}
		return string(b)
	}

	t.Run("read and write", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t) // its own deadline: parallel subtests start after the parent returns
		c := connectTS(t, &acp.ClientOptions{FS: (&workspace.FS{Roots: []string{root}}).Handlers()})
		s := newSession(t, ctx, c, root)
		checkReports(t, "fs in.txt", mustRun(t, ctx, s, "fs "+in), `read:ok:"two\nthree\n"`, "write:ok")
		if got := readFile(in + ".out"); got != "copied:two\nthree\n" {
			t.Errorf("in.txt.out = %q", got)
		}
		missing := filepath.Join(root, "missing.txt")
		checkReports(t, "fs missing.txt", mustRun(t, ctx, s, "fs "+missing), "read:error:-32002", "write:ok")
		if got := readFile(missing + ".out"); got != "copied:" {
			t.Errorf("missing.txt.out = %q", got)
		}
		checkReports(t, "fs outside the root", mustRun(t, ctx, s, "fs "+secret), "read:error:-32602", "write:error:-32602")
		if _, err := os.Stat(secret + ".out"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a write outside the root happened: %v", err)
		}
	})

	t.Run("session roots", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t) // its own deadline: parallel subtests start after the parent returns
		// The zero workspace.FS confines the agent to the session's cwd;
		// without a write handler only fs.readTextFile is advertised.
		fsys := &workspace.FS{}
		c := connectTS(t, &acp.ClientOptions{FS: acp.FileSystemHandlers{ReadTextFile: fsys.ReadTextFile}})
		if caps := c.InitializeResponse().AgentCapabilities; caps.LoadSession != true {
			t.Errorf("agent capabilities %+v", caps)
		}
		s := newSession(t, ctx, c, root)
		checkReports(t, "read-only fs", mustRun(t, ctx, s, "fs "+in), `read:ok:"two\nthree\n"`, "write:unsupported")
		checkReports(t, "read-only fs outside the cwd", mustRun(t, ctx, s, "fs "+secret), "read:error:-32602", "write:unsupported")
	})

	t.Run("no fs", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t) // its own deadline: parallel subtests start after the parent returns
		c := connectTS(t, nil)
		s := newSession(t, ctx, c, root)
		checkReports(t, "no fs", mustRun(t, ctx, s, "fs "+in), "read:unsupported", "write:unsupported")
		checkReports(t, "no terminal", mustRun(t, ctx, s, "terminal"), "terminal:unsupported")
	})
}

// TestInteropTerminal: workspace.Terminals runs the TS side's
// sh -c "echo hi; exit 3": the agent sees exit 3, output "hi\n", not
// truncated, and its release frees the terminal locally; the tool call
// embedding the terminal folds with its id.
func TestInteropTerminal(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var mu sync.Mutex
	output := map[string]string{}
	m := &workspace.Terminals{OnOutput: func(id string, chunk []byte) {
		mu.Lock()
		output[id] += string(chunk)
		mu.Unlock()
	}}
	c := connectTS(t, &acp.ClientOptions{Terminal: m.Handlers()})
	s := newSession(t, ctx, c, t.TempDir())
	_, st, stop, err := run(t, ctx, s, "terminal")
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("terminal: stop %q, err %v", stop, err)
	}
	checkReports(t, "terminal", reports(st), "exit:3", `output:"hi\n"`, "truncated:false", "released")

	if len(st.ToolCalls) != 1 || len(st.ToolCalls[0].Content) != 1 {
		t.Fatalf("tool calls %+v; want term-call-1 with one terminal", st.ToolCalls)
	}
	tc := st.ToolCalls[0]
	term, ok := tc.Content[0].(*schema.TerminalContent)
	if !ok || term.TerminalID == "" {
		t.Fatalf("tool call content %#v; want a terminal", tc.Content[0])
	}
	want := acp.ToolCallState{
		ToolCallID: "term-call-1",
		Title:      `sh -c "echo hi; exit 3"`,
		Kind:       schema.ToolKindExecute,
		Status:     schema.ToolCallStatusFailed,
		Content:    []schema.ToolCallContent{&schema.TerminalContent{TerminalID: term.TerminalID}},
	}
	if diff := cmp.Diff(want, tc); diff != "" {
		t.Errorf("tool call (-want +got):\n%s", diff)
	}
	mu.Lock()
	got := output[term.TerminalID]
	mu.Unlock()
	if got != "hi\n" {
		t.Errorf("OnOutput saw %q for %s, want %q", got, term.TerminalID, "hi\n")
	}
	// The agent released it: the id is gone.
	_, err = m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: s.ID(), TerminalID: term.TerminalID})
	if !errors.Is(err, schema.ErrResourceNotFound) {
		t.Errorf("TerminalOutput after the agent's release: %v; want ErrResourceNotFound", err)
	}
}

// TestInteropAuth: with TSAGENT_REQUIRE_AUTH=1 session/new and session/load
// fail with -32000 (errors.Is ErrAuthRequired) and leave nothing registered;
// an unknown method is the agent's -32602; after Authenticate("token")
// sessions work.
func TestInteropAuth(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, nil, "TSAGENT_REQUIRE_AUTH=1")

	init := c.InitializeResponse()
	wantMethods := []schema.AuthMethod{&schema.AgentAuthMethod{ID: "token", Name: "Token", Description: "Authenticate with a token (always accepted)"}}
	if diff := cmp.Diff(wantMethods, init.AuthMethods); diff != "" {
		t.Errorf("auth methods (-want +got):\n%s", diff)
	}
	if init.AgentInfo == nil || init.AgentInfo.Name != "acp-interop-tsagent" {
		t.Errorf("agent info %+v", init.AgentInfo)
	}

	_, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	var e *schema.Error
	if !errors.Is(err, schema.ErrAuthRequired) || !errors.As(err, &e) || e.Code != schema.CodeAuthRequired {
		t.Fatalf("NewSession before authenticate: %v; want ErrAuthRequired (-32000)", err)
	}
	_, err = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-1", Cwd: "/tmp/acp-interop"})
	if !errors.Is(err, schema.ErrAuthRequired) {
		t.Errorf("LoadSession before authenticate: %v; want ErrAuthRequired", err)
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
	s := newSession(t, ctx, c, t.TempDir())
	checkReports(t, "prompt after authenticate", mustRun(t, ctx, s, "hello"), "echo:hello")
}

// TestInteropLoadResumeListClose: ListSessions follows the TS side's opaque
// cursor (2 pages, 3 sessions); LoadSession folds the replay into History
// (marked Replay) before it returns, kept apart from later turns;
// ResumeSession replays nothing; Session.Close and DeleteSession reach the
// agent (a prompt to the closed session is -32002, the deleted one is no
// longer listed).
func TestInteropLoadResumeListClose(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, nil)

	list := func(req *schema.ListSessionsRequest) (pages [][]string, sessions []schema.SessionInfo) {
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
			sessions = append(sessions, page.Sessions...)
		}
		return pages, sessions
	}
	pages, sessions := list(nil)
	if diff := cmp.Diff([][]string{{"sess-1", "sess-2"}, {"sess-3"}}, pages); diff != "" {
		t.Errorf("ListSessions pages (-want +got):\n%s", diff)
	}
	wantInfo := []schema.SessionInfo{
		{SessionID: "sess-1", Cwd: "/tmp/acp-interop", Title: ptr("First session"), UpdatedAt: ptr("2026-01-01T10:00:00Z")},
		{SessionID: "sess-2", Cwd: "/tmp/acp-interop", Title: ptr("Second session"), UpdatedAt: ptr("2026-01-02T10:00:00Z")},
		{SessionID: "sess-3", Cwd: "/tmp/acp-interop", Title: ptr("Third session"), UpdatedAt: ptr("2026-01-03T10:00:00Z")},
	}
	if diff := cmp.Diff(wantInfo, sessions); diff != "" {
		t.Errorf("listed sessions (-want +got):\n%s", diff)
	}
	if pages, _ := list(&schema.ListSessionsRequest{Cwd: "/elsewhere"}); !cmp.Equal([][]string{nil}, pages) {
		t.Errorf("ListSessions(cwd /elsewhere) pages %q; want one empty page", pages)
	}

	// Load: the replay is in History before LoadSession returns.
	loaded, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-2", Cwd: "/tmp/acp-interop"})
	if err != nil {
		t.Fatalf("LoadSession: %v", err)
	}
	if c.Session("sess-2") != loaded {
		t.Errorf("Client.Session(sess-2) is not the loaded session")
	}
	wantHistory := acp.TurnState{
		UserMessages: []acp.Message{{MessageID: "h-u1", Text: "hello from history"}},
		Messages:     []acp.Message{{MessageID: "h-a1", Text: "hi from history", Order: 1}},
	}
	ls := loaded.State()
	if diff := cmp.Diff(wantHistory, ls.History); diff != "" {
		t.Errorf("History after load (-want +got):\n%s", diff)
	}
	if len(ls.Outside) != 2 || !ls.Outside[0].Replay || !ls.Outside[1].Replay || ls.Outside[0].Late || ls.Outside[1].Late {
		t.Errorf("Outside after load: %+v; want 2 replayed updates", ls.Outside)
	}
	if ls.Modes == nil || ls.Modes.CurrentModeID != "ask" || ls.Turns != 0 || ls.Cwd != "/tmp/acp-interop" {
		t.Errorf("loaded state: modes %+v turns %d cwd %q", ls.Modes, ls.Turns, ls.Cwd)
	}
	if diff := cmp.Diff(tsModelOption("a"), ls.ConfigOptions); diff != "" {
		t.Errorf("loaded config options (-want +got):\n%s", diff)
	}
	_, st, stop, err := run(t, ctx, loaded, "after load")
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("prompt after load: %q %v", stop, err)
	}
	if diff := cmp.Diff([]acp.Message{{MessageID: "t1-r1", Text: "echo:after load"}}, st.Messages); diff != "" {
		t.Errorf("the turn after load holds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantHistory, loaded.State().History); diff != "" {
		t.Errorf("History after a turn (-want +got):\n%s", diff)
	}

	// Resume: no replay.
	resumed, err := c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: "sess-3", Cwd: "/tmp/acp-interop"})
	if err != nil {
		t.Fatalf("ResumeSession: %v", err)
	}
	rs := resumed.State()
	if len(rs.Outside) != 0 || len(rs.History.Messages) != 0 || rs.Modes == nil || rs.Modes.CurrentModeID != "ask" {
		t.Errorf("resumed state: outside %v history %+v modes %+v", rs.Outside, rs.History, rs.Modes)
	}
	checkReports(t, "prompt after resume", mustRun(t, ctx, resumed, "after resume"), "echo:after resume")

	// Close: the agent forgets the session, and so does the client: a
	// later prompt fails locally.
	if err := resumed.Close(ctx); err != nil {
		t.Fatalf("Session.Close: %v", err)
	}
	if _, err := resumed.Prompt(ctx, schema.Text("after close")); !errors.Is(err, acp.ErrSessionClosed) {
		t.Errorf("prompt to the closed session: %v; want ErrSessionClosed", err)
	}

	// Delete: no longer listed.
	if _, err := c.DeleteSession(ctx, &schema.DeleteSessionRequest{SessionID: "sess-1"}); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	if pages, _ := list(nil); !cmp.Equal([][]string{{"sess-2", "sess-3"}}, pages) {
		t.Errorf("ListSessions after delete: %q; want one page sess-2, sess-3", pages)
	}
}

// TestInteropModesAndConfig: SetMode and SetConfigOption reach the TS side
// and update Session.State (set_mode's current_mode_update lands outside any
// turn); unknown modes, options and values fail locally with the valid
// choices; the agent's next config_option_update carries the value set.
func TestInteropModesAndConfig(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, nil)
	s := newSession(t, ctx, c, t.TempDir())

	st := s.State()
	if diff := cmp.Diff(&schema.SessionModeState{CurrentModeID: "ask", AvailableModes: tsModes}, st.Modes); diff != "" {
		t.Errorf("modes from session/new (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tsModelOption("a"), st.ConfigOptions); diff != "" {
		t.Errorf("config options from session/new (-want +got):\n%s", diff)
	}

	if err := s.SetMode(ctx, "code"); err != nil {
		t.Fatalf("SetMode(code): %v", err)
	}
	st = s.State()
	if st.Modes.CurrentModeID != "code" {
		t.Errorf("mode after SetMode: %q", st.Modes.CurrentModeID)
	}
	// The agent's current_mode_update came before its answer.
	if len(st.Outside) != 1 {
		t.Fatalf("outside updates %+v; want the current_mode_update", st.Outside)
	}
	if u, ok := st.Outside[0].Update.(*schema.CurrentModeUpdate); !ok || u.CurrentModeID != "code" || st.Outside[0].Late || st.Outside[0].Replay {
		t.Errorf("outside update %+v", st.Outside[0])
	}

	var e *schema.Error
	if err := s.SetMode(ctx, "yolo"); err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), "ask, code") {
		t.Errorf("SetMode(yolo): %v; want a local error naming the valid modes", err)
	}
	if got := s.State().Modes.CurrentModeID; got != "code" {
		t.Errorf("a failed SetMode changed the mode to %q", got)
	}

	opts, err := s.SetConfigOption(ctx, "model", "b")
	if err != nil {
		t.Fatalf("SetConfigOption(model, b): %v", err)
	}
	if diff := cmp.Diff(tsModelOption("b"), opts); diff != "" {
		t.Errorf("SetConfigOption result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tsModelOption("b"), s.State().ConfigOptions); diff != "" {
		t.Errorf("config options after SetConfigOption (-want +got):\n%s", diff)
	}
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

// TestInteropExtension: ExtMethod answers the TS side's _acp/echo (the agent
// reports the result), ExtNotification receives _acp/note, Call reaches
// the agent's _acp/ping, and an unknown method, with or without "_", is the
// agent's -32601.
func TestInteropExtension(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	type note struct {
		method string
		params json.RawMessage
	}
	notes := make(chan note, 4)
	c := connectTS(t, &acp.ClientOptions{
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
	s := newSession(t, ctx, c, t.TempDir())
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
	if n.method != "_acp/note" {
		t.Errorf("notification %q, want _acp/note", n.method)
	}
	if diff := cmp.Diff(map[string]any{"sessionId": s.ID(), "note": "hello"}, np); diff != "" {
		t.Errorf("notification params (-want +got):\n%s", diff)
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
	if err := c.Call(ctx, "acp/ping", nil, nil); !errors.Is(err, schema.ErrMethodNotFound) {
		t.Errorf("Call(acp/ping): %v; want the agent's ErrMethodNotFound", err)
	}
	if err := c.Notify(ctx, "_acp/hello", map[string]string{"hi": "there"}); err != nil {
		t.Errorf("Notify(_acp/hello): %v", err)
	}
	// The connection is still fine after the notification.
	checkReports(t, "prompt after NotifyExt", mustRun(t, ctx, s, "still there"), "echo:still there")
}

// blockingFS serves reads only when its ctx ends, reporting the cause.
type blockingFS struct {
	entered chan struct{}
	causes  chan error
}

func (b *blockingFS) ReadTextFile(ctx context.Context, req *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	b.entered <- struct{}{}
	<-ctx.Done()
	b.causes <- context.Cause(ctx)
	return &schema.ReadTextFileResponse{Content: "too late"}, nil
}

// TestInteropCancelRequest: the TS side withdraws its own pending request
// with $/cancel_request (an extension request, and fs/read_text_file): our
// handler's ctx is cancelled with the withdrawal as cause, and the agent
// gets -32800 although the handler answers later.
func TestInteropCancelRequest(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	extEntered := make(chan struct{}, 1)
	extCauses := make(chan error, 1)
	fsys := &blockingFS{entered: make(chan struct{}, 1), causes: make(chan error, 1)}
	c := connectTS(t, &acp.ClientOptions{
		FS: acp.FileSystemHandlers{ReadTextFile: fsys.ReadTextFile},
		ExtMethod: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "_acp/slow" {
				return nil, &schema.Error{Code: schema.CodeMethodNotFound, Message: "no " + method}
			}
			extEntered <- struct{}{}
			<-ctx.Done()
			extCauses <- context.Cause(ctx)
			return map[string]bool{"late": true}, nil
		},
	})
	s := newSession(t, ctx, c, t.TempDir())

	for _, tc := range []struct {
		prompt  string
		entered chan struct{}
		causes  chan error
	}{
		{"cancel_request", extEntered, extCauses},
		{"cancel_request fs " + filepath.Join(t.TempDir(), "x.txt"), fsys.entered, fsys.causes},
	} {
		checkReports(t, tc.prompt, mustRun(t, ctx, s, tc.prompt), "cancel_request:error:-32800")
		recv(t, tc.entered, tc.prompt+": the handler to be called")
		cause := recv(t, tc.causes, tc.prompt+": the handler's ctx to end")
		if cause == nil || !strings.Contains(cause.Error(), "withdrew") {
			t.Errorf("%s: the handler's ctx cause %v; want the agent's withdrawal", tc.prompt, cause)
		}
	}
}

// TestInteropError: a prompt the TS side fails surfaces from Turn.Wait as an
// *schema.Error with the code, message and data it sent; what the agent streamed
// before is folded; the session takes the next prompt.
func TestInteropError(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, nil)
	s := newSession(t, ctx, c, t.TempDir())
	turn, st, stop, err := run(t, ctx, s, "error")
	var e *schema.Error
	if !errors.As(err, &e) {
		t.Fatalf("Wait: %q, %v; want an *schema.Error", stop, err)
	}
	if e.Code != schema.CodeInternalError || !strings.Contains(e.Message, "tsagent was asked to fail") {
		t.Errorf("error %d %q; want -32603 from the agent", e.Code, e.Message)
	}
	var data any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Errorf("error data %q: %v", e.Data, err)
	}
	if diff := cmp.Diff(map[string]any{"scenario": "error"}, data); diff != "" {
		t.Errorf("error data (-want +got):\n%s", diff)
	}
	if stop != "" || st.StopReason != "" {
		t.Errorf("stop reason %q / %q for a failed turn; want none", stop, st.StopReason)
	}
	if turn.Err() != err {
		t.Errorf("Turn.Err() = %v, want %v", turn.Err(), err)
	}
	if diff := cmp.Diff([]acp.Message{{MessageID: "t1-e1", Text: "about to fail"}}, st.Messages); diff != "" {
		t.Errorf("messages of the failed turn (-want +got):\n%s", diff)
	}
	checkReports(t, "prompt after the error", mustRun(t, ctx, s, "next"), "echo:next")
	if got := s.State().Turns; got != 2 {
		t.Errorf("%d turns, want 2", got)
	}
}
