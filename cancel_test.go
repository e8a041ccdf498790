package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// startTurn creates session s1 and starts a turn, returning the agent's view
// of the prompt request.
func startTurn(t *testing.T, opts *ClientOptions) (*Client, *rawAgent, *Session, *Turn, rawMsg) {
	t.Helper()
	c, a := connectRaw(t, opts, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	return c, a, s, turn, a.expect("session/prompt")
}

func toolCall(id, status string) map[string]any {
	return map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Run " + id, "kind": "execute", "status": status}
}

// Cancel during streaming: session/cancel goes out, updates the agent still
// sends are folded into this turn, unfinished tool calls are marked
// cancelled, finished ones keep their status, and Wait reports cancelled.
func TestCancelDuringStreaming(t *testing.T) {
	_, a, _, turn, p := startTurn(t, nil)
	a.update("s1", chunk("partial "))
	a.update("s1", toolCall("done", "completed"))
	a.update("s1", toolCall("running", "in_progress"))
	a.update("s1", toolCall("failed", "failed"))
	waitUpdates(t, turn, 4)
	turn.Cancel()
	m := a.expect("session/cancel")
	if m.ID != nil || !strings.Contains(string(m.Params), `"sessionId":"s1"`) {
		t.Fatalf("session/cancel frame %s", m.line)
	}
	st := turn.State()
	if !st.Cancelled || st.ToolCalls[1].Status != schema.ToolCallStatusCancelled {
		t.Fatalf("after Cancel: cancelled=%v tool calls %+v", st.Cancelled, st.ToolCalls)
	}
	// The agent winds down: a last chunk and a final status, then its answer.
	a.update("s1", chunk("stopped"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "running", "status": "in_progress"})
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonCancelled {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	st = turn.State()
	if got := textOf(st); got != "partial stopped" {
		t.Errorf("text %q: updates after the cancel must fold into the turn", got)
	}
	got := map[string]schema.ToolCallStatus{}
	for _, tc := range st.ToolCalls {
		got[tc.ToolCallID] = tc.Status
	}
	want := map[string]schema.ToolCallStatus{"done": schema.ToolCallStatusCompleted, "running": schema.ToolCallStatusCancelled, "failed": schema.ToolCallStatusFailed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if st.AgentStopReason != "" || st.AgentError != nil {
		t.Errorf("agent answered cancelled, state keeps %q %v", st.AgentStopReason, st.AgentError)
	}
}

func waitUpdates(t *testing.T, turn *Turn, n int) {
	t.Helper()
	i := 0
	for range turn.Updates() {
		if i++; i == n {
			return
		}
	}
	t.Fatalf("turn ended after %d of %d updates", i, n)
}

// Cancel while a permission request is pending: the agent gets
// {"outcome":"cancelled"}, the handler's ctx ends, and what the handler
// returns afterwards is never sent.
func TestCancelDuringPermission(t *testing.T) {
	handlerCtx := make(chan context.Context, 1)
	release := make(chan struct{})
	handlerDone := make(chan struct{})
	opts := &ClientOptions{Permission: func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		defer close(handlerDone)
		handlerCtx <- ctx
		<-release
		return SelectedOutcome("allow"), nil // too late: must be dropped
	}}
	_, a, _, turn, p := startTurn(t, opts)
	a.update("s1", toolCall("t1", "pending"))
	a.send(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/request_permission", "params": map[string]any{
		"sessionId": "s1", "toolCall": map[string]any{"toolCallId": "t1"},
		"options": []any{map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"}, map[string]any{"optionId": "deny", "name": "Deny", "kind": "reject_once"}},
	}})
	ctx := <-handlerCtx
	turn.Cancel()
	// Both frames arrive; their order is the writer's, not guaranteed.
	var sawCancel, sawOutcome bool
	for range 2 {
		m := a.next()
		switch {
		case m.Method == "session/cancel":
			sawCancel = true
		case string(m.ID) == "5":
			sawOutcome = true
			if diff := cmp.Diff(`{"outcome":{"outcome":"cancelled"}}`, string(m.Result)); diff != "" {
				t.Errorf("permission reply (-want +got):\n%s", diff)
			}
		default:
			t.Errorf("unexpected %s", m.line)
		}
	}
	if !sawCancel || !sawOutcome {
		t.Fatalf("cancel %v outcome %v", sawCancel, sawOutcome)
	}
	select {
	case <-ctx.Done():
	default:
		t.Error("the handler's ctx is not done")
	}
	close(release)
	<-handlerDone
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	if stop, _ := turn.Wait(); stop != schema.StopReasonCancelled {
		t.Errorf("stop %q", stop)
	}
	// Nothing else was sent: the next frame is the next thing we do.
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such", "params": map[string]any{}})
	if m := a.next(); string(m.ID) != `"probe"` {
		t.Errorf("a late handler answer leaked: %s", m.line)
	}
}

// A permission request that arrives after the cancel is answered cancelled
// at once, without asking the handler.
func TestPermissionAfterCancel(t *testing.T) {
	asked := make(chan struct{}, 1)
	opts := &ClientOptions{Permission: func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
		asked <- struct{}{}
		return SelectedOutcome("allow"), nil
	}}
	_, a, _, turn, p := startTurn(t, opts)
	turn.Cancel()
	a.expect("session/cancel")
	a.send(map[string]any{"jsonrpc": "2.0", "id": 6, "method": "session/request_permission", "params": map[string]any{
		"sessionId": "s1", "toolCall": map[string]any{"toolCallId": "late", "title": "Late"},
		"options": []any{map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"}},
	}})
	if m := a.next(); string(m.Result) != `{"outcome":{"outcome":"cancelled"}}` {
		t.Errorf("reply %s", m.line)
	}
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	turn.Wait()
	if st := turn.State(); len(st.ToolCalls) != 1 || st.ToolCalls[0].Status != schema.ToolCallStatusCancelled {
		t.Errorf("tool calls %+v", st.ToolCalls)
	}
}

// Cancel before the first update, and twice: one session/cancel only.
func TestCancelBeforeFirstUpdateAndTwice(t *testing.T) {
	_, a, _, turn, p := startTurn(t, nil)
	turn.Cancel()
	turn.Cancel()
	a.expect("session/cancel")
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	if stop, err := turn.Wait(); stop != schema.StopReasonCancelled || err != nil {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	turn.Cancel() // after the end: harmless
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such", "params": map[string]any{}})
	if m := a.next(); string(m.ID) != `"probe"` {
		t.Errorf("a second session/cancel was sent: %s", m.line)
	}
}

// Real agents answer a cancelled turn with end_turn or with an error; the
// turn is cancelled either way and the agent's answer is kept.
func TestCancelAnsweredOtherwise(t *testing.T) {
	t.Run("end_turn", func(t *testing.T) {
		_, a, _, turn, p := startTurn(t, nil)
		turn.Cancel()
		a.expect("session/cancel")
		a.reply(p, map[string]any{"stopReason": "end_turn"})
		stop, err := turn.Wait()
		if stop != schema.StopReasonCancelled || err != nil {
			t.Fatalf("Wait = %q, %v", stop, err)
		}
		if st := turn.State(); st.AgentStopReason != schema.StopReasonEndTurn {
			t.Errorf("AgentStopReason %q", st.AgentStopReason)
		}
	})
	t.Run("error", func(t *testing.T) {
		_, a, _, turn, p := startTurn(t, nil)
		turn.Cancel()
		a.expect("session/cancel")
		a.replyError(p, schema.CodeInternalError, "aborted", map[string]any{"why": "AbortError"})
		stop, err := turn.Wait()
		if stop != schema.StopReasonCancelled || err != nil {
			t.Fatalf("Wait = %q, %v", stop, err)
		}
		if st := turn.State(); st.AgentError == nil || st.AgentError.Code != schema.CodeInternalError {
			t.Errorf("AgentError %+v", st.AgentError)
		}
	})
}

// An agent that never answers the cancelled prompt: the turn ends locally
// after the grace period; the late answer and late updates never reach the
// next turn. synctest makes the 10 s grace instant.
func TestCancelGraceExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newDiagRecorder()
		c, a, s, turn, p := startTurn(t, &ClientOptions{OnDiagnostic: rec.record})
		start := time.Now()
		turn.Cancel()
		a.expect("session/cancel")
		stop, err := turn.Wait()
		if stop != schema.StopReasonCancelled || !errors.Is(err, ErrCancelGrace) {
			t.Fatalf("Wait = %q, %v", stop, err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("grace was %v, want the default 10s", d)
		}
		// Next turn; then the old turn's stragglers arrive.
		turn2, err := s.Prompt(context.Background(), schema.Text("next"))
		if err != nil {
			t.Fatal(err)
		}
		p2 := a.expect("session/prompt")
		a.reply(p, map[string]any{"stopReason": "cancelled"}) // late answer to the old prompt
		a.update("s1", chunk("new"))
		a.reply(p2, map[string]any{"stopReason": "end_turn"})
		if stop, err := turn2.Wait(); stop != schema.StopReasonEndTurn || err != nil {
			t.Fatalf("next turn: %q, %v", stop, err)
		}
		if got := textOf(turn2.State()); got != "new" {
			t.Errorf("next turn text %q", got)
		}
		c.Close()
		if !contains(rec.kinds(), "late_response") {
			t.Errorf("late answer not reported: %v", rec.kinds())
		}
	})
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Updates after a cancelled turn ended are kept on the session, marked late.
func TestLateUpdatesAfterCancelledTurn(t *testing.T) {
	_, a, s, turn, p := startTurn(t, nil)
	turn.Cancel()
	a.expect("session/cancel")
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	turn.Wait()
	a.update("s1", chunk("straggler"))
	for range s.Changes(context.Background()) {
		if out := s.State().Outside; len(out) == 1 {
			if !out[0].Late {
				t.Errorf("not marked late: %+v", out[0])
			}
			return
		}
	}
}

// The end of the Prompt context cancels the turn exactly like Cancel; a
// context already done sends nothing.
func TestPromptContext(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Prompt(done, schema.Text("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt with a done ctx: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	turn, err := s.Prompt(ctx, schema.Text("y"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt") // the first frame: nothing went out for "x"
	if !strings.Contains(string(p.Params), `"y"`) {
		t.Fatalf("first prompt on the wire %s", p.line)
	}
	cancel()
	a.expect("session/cancel")
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	if stop, err := turn.Wait(); stop != schema.StopReasonCancelled || err != nil {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
}

func permParams(toolCallID string, kinds ...string) map[string]any {
	var opts []any
	for _, k := range kinds {
		opts = append(opts, map[string]any{"optionId": "opt-" + k, "name": k, "kind": k})
	}
	return map[string]any{"sessionId": "s1", "toolCall": map[string]any{"toolCallId": toolCallID}, "options": opts}
}

func askPermission(t *testing.T, a *rawAgent, id int, params map[string]any) rawMsg {
	t.Helper()
	a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": params})
	for {
		m := a.next()
		if string(m.ID) == jsonInt(id) {
			return m
		}
	}
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

func outcomeOf(t *testing.T, m rawMsg) string {
	t.Helper()
	if m.Error != nil {
		return "error:" + m.Error.Message
	}
	var r schema.RequestPermissionResponse
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.Outcome.Kind == schema.OutcomeCancelled {
		return "cancelled"
	}
	return r.Outcome.OptionID
}

type fsFunc func(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error)

func (f fsFunc) ReadTextFile(ctx context.Context, r *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
	return f(ctx, r)
}

// A permission request that arrives once its turn is cancelled — by
// Turn.Cancel or by the end of the Prompt context, before the agent's
// answer — is answered cancelled at once and never reaches the handler.
// The handler's calls are checked after a later request that must reach
// it: the handler of the cancelled request, had it been started, was
// started long before.
func TestPermissionAfterCancelSkipsHandler(t *testing.T) {
	for _, how := range []string{"Cancel", "prompt context"} {
		t.Run(how, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			opts := &ClientOptions{Permission: func(_ context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
				mu.Lock()
				asked = append(asked, req.ToolCall.ToolCallID)
				mu.Unlock()
				return SelectedOutcome("opt-allow_once"), nil
			}}
			c, a := connectRaw(t, opts, nil)
			s := newSessionRaw(t, c, a)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			turn, err := s.Prompt(ctx, schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			p := a.expect("session/prompt")
			if how == "Cancel" {
				turn.Cancel()
			} else {
				cancel()
			}
			a.expect("session/cancel")
			if got := outcomeOf(t, askPermission(t, a, 6, permParams("late", "allow_once"))); got != "cancelled" {
				t.Errorf("the request after the cancel was answered %q, want cancelled", got)
			}
			a.reply(p, map[string]any{"stopReason": "cancelled"})
			turn.Wait()

			next, err := s.Prompt(context.Background(), schema.Text("again"))
			if err != nil {
				t.Fatal(err)
			}
			p = a.expect("session/prompt")
			if got := outcomeOf(t, askPermission(t, a, 7, permParams("sentinel", "allow_once"))); got != "opt-allow_once" {
				t.Errorf("the request of the next turn was answered %q", got)
			}
			a.reply(p, map[string]any{"stopReason": "end_turn"})
			next.Wait()
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]string{"sentinel"}, asked); diff != "" {
				t.Errorf("permission handler calls (-want +got):\n%s", diff)
			}
		})
	}
}

// The local cancelled mark after Turn.Cancel (see ToolCallStatusCancelled):
// it holds against the agent's later non-final statuses, yields to its
// later completed or failed, marks a tool call announced or reopened after
// the cancel, and every mark is an OriginLocal event of the turn's feed.
func TestCancelMarkYieldsOnlyToFinalStatus(t *testing.T) {
	_, a, _, turn, p := startTurn(t, nil)
	for _, id := range []string{"stays", "fails", "completes", "untouched", "reopened"} {
		a.update("s1", toolCall(id, "in_progress"))
	}
	waitUpdates(t, turn, 5)
	turn.Cancel()
	a.expect("session/cancel")
	status := func(id, st string) {
		a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": st})
	}
	status("stays", "in_progress")
	status("stays", "pending")
	status("fails", "failed")
	status("completes", "completed")
	status("reopened", "completed")
	status("reopened", "in_progress") // reopened after the cancel: marked again
	a.update("s1", toolCall("late", "pending"))
	status("late", "failed")
	a.reply(p, map[string]any{"stopReason": "cancelled"})
	if stop, err := turn.Wait(); stop != schema.StopReasonCancelled || err != nil {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	st := turn.State()
	got := map[string]schema.ToolCallStatus{}
	for _, tc := range st.ToolCalls {
		got[tc.ToolCallID] = tc.Status
	}
	want := map[string]schema.ToolCallStatus{
		"stays":     schema.ToolCallStatusCancelled,
		"fails":     schema.ToolCallStatusFailed,
		"completes": schema.ToolCallStatusCompleted,
		"untouched": schema.ToolCallStatusCancelled,
		"reopened":  schema.ToolCallStatusCancelled,
		"late":      schema.ToolCallStatusFailed,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("final statuses (-want +got):\n%s", diff)
	}
	if !st.Cancelled {
		t.Error("TurnState.Cancelled is false")
	}
	// The marks, in order: the five at the cancel (in the table's order),
	// then "reopened" and "late" when they became unfinished again.
	var marks []string
	for e := range turn.Events(context.Background(), 0) {
		if e.Origin == OriginLocal {
			if e.ToolCall.Status != schema.ToolCallStatusCancelled {
				t.Errorf("a local event set %s to %q", e.ToolCall.ToolCallID, e.ToolCall.Status)
			}
			marks = append(marks, e.ToolCall.ToolCallID)
		}
	}
	wantMarks := []string{"stays", "fails", "completes", "untouched", "reopened", "reopened", "late"}
	if diff := cmp.Diff(wantMarks, marks); diff != "" {
		t.Errorf("local marks (-want +got):\n%s", diff)
	}
}
