package acp

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// startTurnV2 connects a v2 client to a raw agent, opens session s1 and
// starts a turn; it returns the prompt request.
func startTurnV2(t *testing.T, opts *ClientOptions) (*Client, *rawAgent, *Session, *Turn, rawMsg) {
	t.Helper()
	o := ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = 2
	c, a := connectRaw(t, &o, v2Init)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	return c, a, s, turn, a.expect("session/prompt")
}

func state(st string, extra ...any) map[string]any {
	u := map[string]any{"sessionUpdate": "state_update", "state": st, "background": []any{}}
	for i := 0; i+1 < len(extra); i += 2 {
		u[extra[i].(string)] = extra[i+1]
	}
	return u
}

// sync makes sure everything the agent wrote so far was applied: a
// round trip the client answers after the reader passed it.
func syncRaw(t *testing.T, a *rawAgent, id int) {
	t.Helper()
	a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "_sync", "params": map[string]any{}})
	for m := a.next(); string(m.ID) != fmt.Sprint(id); m = a.next() {
	}
}

// Rule: the answer to session/prompt only accepts the prompt; the turn
// runs on until the agent's idle, with that stop reason.
func TestV2PromptAnswerOnlyAccepts(t *testing.T) {
	_, a, _, turn, p := startTurnV2(t, nil)
	a.update("s1", state("running"))
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", chunk("after the answer"))
	syncRaw(t, a, 900)
	select {
	case <-turn.Done():
		t.Fatal("the turn ended at the prompt's answer")
	default:
	}
	if turn.MessageID() != "u1" {
		t.Errorf("MessageID = %q", turn.MessageID())
	}
	a.update("s1", state("idle", "stopReason", "max_tokens"))
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonMaxTokens {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	if st := turn.State(); len(st.Messages) != 1 || st.Messages[0].Text != "after the answer" {
		t.Fatalf("the update after the answer is not the turn's: %+v", st.Messages)
	}
}

// Rule: an idle snapshot before the turn's work was reported running is
// the state of before the prompt, not its end; a repeated idle after the
// end is no new completion (aggregate snapshots) and lands in the session.
func TestV2IdleSnapshotsAreNotCompletions(t *testing.T) {
	_, a, s, turn, p := startTurnV2(t, nil)
	a.update("s1", state("idle"))
	syncRaw(t, a, 900)
	select {
	case <-turn.Done():
		t.Fatal("an idle before running ended the turn")
	default:
	}
	a.update("s1", state("requires_action"))
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", state("idle", "stopReason", "end_turn"))
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	a.update("s1", state("idle", "stopReason", "end_turn"))
	syncRaw(t, a, 901)
	st := s.State()
	if st.Turns != 1 || len(st.Outside) != 1 || st.Outside[0].Update.UpdateKind() != "state_update" {
		t.Fatalf("the repeated idle: turns %d outside %+v", st.Turns, st.Outside)
	}
	if st.Activity == nil || st.Activity.State.State != schema.StateIdle {
		t.Fatalf("Activity %+v", st.Activity)
	}
}

// Rule: a prompt the agent rejects (an error answer) ends the turn with
// the error.
func TestV2RejectedPromptEndsTurn(t *testing.T) {
	_, a, _, turn, p := startTurnV2(t, nil)
	a.replyError(p, -32603, "no", nil)
	if _, err := turn.Wait(); err == nil {
		t.Fatal("no error")
	}
}

// Rule: an idle with stop reason error keeps the agent's error.
func TestV2IdleErrorKept(t *testing.T) {
	_, a, _, turn, _ := startTurnV2(t, nil)
	a.update("s1", state("running"))
	a.update("s1", state("idle", "stopReason", "error", "error", map[string]any{"code": -32603, "message": "boom"}))
	stop, _ := turn.Wait()
	if st := turn.State(); stop != schema.StopReasonError || st.AgentError == nil || st.AgentError.Message != "boom" {
		t.Fatalf("stop %q, state %+v", stop, st.AgentError)
	}
}

// Rule: tool_call_update is an upsert: an unknown id creates the call
// (announced, at the defaults), omitted keeps, null clears, a value
// replaces; tool_call_content_chunk appends.
func TestV2ToolCallUpserts(t *testing.T) {
	_, a, _, turn, _ := startTurnV2(t, nil)
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Edit", "kind": "edit",
		"locations": []any{map[string]any{"path": "/a", "line": 3}}, "rawInput": map[string]any{"x": 1}})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "one"}}})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "two"}}})
	syncRaw(t, a, 900)
	tc := turn.State().ToolCalls[0]
	if tc.Unannounced || tc.Title != "Edit" || tc.Kind != schema.ToolKindEdit || tc.Status != schema.ToolCallStatusPending || len(tc.Content) != 2 || len(tc.Locations) != 1 {
		t.Fatalf("created %+v", tc)
	}
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": nil, "kind": nil, "locations": nil, "status": "completed"})
	syncRaw(t, a, 901)
	tc = turn.State().ToolCalls[0]
	if tc.Title != "" || tc.Kind != schema.ToolKindOther || len(tc.Locations) != 0 || tc.Status != schema.ToolCallStatusCompleted || len(tc.Content) != 2 || string(tc.RawInput) != `{"x":1}` {
		t.Fatalf("after the patch %+v", tc)
	}
}

// Rule: agent_message, user_message and agent_thought upsert whole
// messages by id: content replaces (chunks included), omitted keeps, null
// clears, later chunks append; messageId is required.
func TestV2WholeMessages(t *testing.T) {
	c, a, _, turn, _ := startTurnV2(t, nil)
	diags := make(chan Diagnostic, 8)
	c.opts.OnDiagnostic = func(d Diagnostic) { diags <- d }
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "user_message", "messageId": "u1", "content": text("go")})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": map[string]any{"type": "text", "text": "draft"}})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message", "messageId": "m1", "content": text("Final")})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": map[string]any{"type": "text", "text": "!"}})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message", "messageId": "m1"}) // omitted: kept
	a.update("s1", map[string]any{"sessionUpdate": "agent_thought", "messageId": "t1", "content": text("hmm")})
	a.update("s1", map[string]any{"sessionUpdate": "agent_thought", "messageId": "t1", "content": nil})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message", "content": text("no id")})
	syncRaw(t, a, 900)
	st := turn.State()
	if len(st.Messages) != 1 || st.Messages[0].Text != "Final!" || st.Messages[0].MessageID != "m1" {
		t.Errorf("messages %+v", st.Messages)
	}
	if len(st.UserMessages) != 1 || st.UserMessages[0].Text != "go" {
		t.Errorf("user %+v", st.UserMessages)
	}
	if len(st.Thoughts) != 1 || st.Thoughts[0].Text != "" {
		t.Errorf("thoughts %+v", st.Thoughts)
	}
	if st.Messages[0].Order >= st.Thoughts[0].Order || st.UserMessages[0].Order >= st.Messages[0].Order {
		t.Errorf("orders: user %d message %d thought %d", st.UserMessages[0].Order, st.Messages[0].Order, st.Thoughts[0].Order)
	}
	a.update("s1", state("idle", "stopReason", "end_turn"))
	turn.Wait()
	c.Close()
	close(diags)
	found := false
	for d := range diags {
		found = found || (d.Kind == DiagBadUpdate && strings.Contains(d.Message, "messageId"))
	}
	if !found {
		t.Error("no bad_update diagnostic for an agent_message without messageId")
	}
}

// Rule: agent-owned terminals (terminal_update, terminal_output_chunk) are
// folded for display; background work is in the state snapshot.
func TestV2AgentTerminalsAndBackground(t *testing.T) {
	_, a, s, turn, _ := startTurnV2(t, nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "term1", "command": "make", "cwd": "/w"})
	a.update("s1", map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": "term1", "data": b64("hello ")})
	a.update("s1", state("idle", "stopReason", "end_turn", "background", []any{map[string]any{"type": "terminal", "terminalId": "term1"}}))
	turn.Wait()
	before := s.State()
	a.update("s1", map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": "term1", "data": b64("world")})
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "term1", "exitStatus": map[string]any{"exitCode": -1}})
	a.update("s1", state("idle"))
	syncRaw(t, a, 900)
	st := s.State()
	if len(st.Terminals) != 1 {
		t.Fatalf("terminals %+v", st.Terminals)
	}
	term := st.Terminals[0]
	if term.Command != "make" || term.Cwd != "/w" || string(term.Output) != "hello world" || term.Exit == nil || *term.Exit.ExitCode != -1 {
		t.Fatalf("terminal %+v", term)
	}
	if string(before.Terminals[0].Output) != "hello " || before.Terminals[0].Exit != nil {
		t.Fatalf("an earlier snapshot changed: %+v", before.Terminals[0])
	}
	if len(before.Activity.Background) != 1 || before.Activity.Background[0].Work.TerminalID != "term1" {
		t.Fatalf("background %+v", before.Activity)
	}
	if len(st.Activity.Background) != 0 || st.Turns != 1 {
		t.Fatalf("after: %+v", st.Activity)
	}
}

// Rule: Cancel in v2 sends session/cancel; a pending permission request
// the agent withdraws ($/cancel_request) has its handler's context
// cancelled; the turn ends at the agent's idle, cancelled.
func TestV2CancelWithdrawsPermission(t *testing.T) {
	asked := make(chan context.Context, 1)
	perm := func(ctx context.Context, req *PermissionRequest) (schema.PermissionOutcome, error) {
		asked <- ctx
		<-ctx.Done()
		return CancelledOutcome(), nil
	}
	_, a, _, turn, p := startTurnV2(t, &ClientOptions{Permission: perm})
	a.update("s1", state("running"))
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Run", "status": "pending"})
	a.update("s1", state("requires_action"))
	a.send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": map[string]any{
		"sessionId": "s1", "title": "Run a long command", "subject": map[string]any{"type": "tool_call", "toolCall": map[string]any{"toolCallId": "c1"}},
		"options": []any{map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"}}}})
	ctx := <-asked
	turn.Cancel()
	a.expect("session/cancel")
	a.send(map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": 0}})
	<-ctx.Done()
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"})
	a.update("s1", state("idle", "stopReason", "cancelled"))
	stop, err := turn.Wait()
	if stop != schema.StopReasonCancelled || err != nil {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	st := turn.State()
	if len(st.ToolCalls) != 1 || st.ToolCalls[0].Title != "Run" {
		t.Fatalf("tool calls %+v", st.ToolCalls)
	}
}

// randomStepV2 is randomStep for a v2 agent: v2's kinds and upserts with
// nulls, state snapshots that do not end the turn.
func randomStepV2(r *rand.Rand) map[string]any {
	id := func(prefix string, n int) string { return fmt.Sprint(prefix, r.IntN(n)) }
	text := func() map[string]any {
		return map[string]any{"type": "text", "text": fmt.Sprint("w", r.IntN(100), " ")}
	}
	orNull := func(v any) any {
		if r.IntN(3) == 0 {
			return nil
		}
		return v
	}
	switch r.IntN(9) {
	case 0, 1:
		return map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": id("m", 3), "content": text()}
	case 2:
		u := map[string]any{"sessionUpdate": []string{"agent_message", "user_message", "agent_thought"}[r.IntN(3)], "messageId": id("m", 3)}
		if r.IntN(3) > 0 {
			u["content"] = orNull([]any{text()})
		}
		return u
	case 3, 4:
		u := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id("tc", 4)}
		for _, k := range []string{"title", "name", "kind", "status"} {
			if r.IntN(2) == 0 {
				v := map[string]any{"title": id("T", 5), "name": id("n", 3), "kind": "edit", "status": "in_progress"}[k]
				u[k] = orNull(v)
			}
		}
		if r.IntN(3) == 0 {
			u["content"] = orNull([]any{map[string]any{"type": "content", "content": text()}})
		}
		if r.IntN(3) == 0 {
			u["rawInput"] = orNull(map[string]any{"n": r.IntN(9)})
		}
		if r.IntN(3) == 0 {
			u["capabilities"] = orNull([]any{map[string]any{"cancel": map[string]any{}}, map[string]any{}, map[string]any{"cancel": 1}}[r.IntN(3)])
		}
		return u
	case 5:
		return map[string]any{"sessionUpdate": "tool_call_content_chunk", "toolCallId": id("tc", 4), "content": map[string]any{"type": "content", "content": text()}}
	case 6:
		return map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": id("term", 2), "data": base64.StdEncoding.EncodeToString([]byte(id("out", 9)))}
	case 7:
		return map[string]any{"sessionUpdate": "terminal_update", "terminalId": id("term", 2), "command": orNull("make")}
	default:
		var bg []any
		for range r.IntN(3) {
			bg = append(bg, []map[string]any{
				{"type": "tool_call", "toolCallId": id("tc", 4)},
				{"type": "terminal", "terminalId": id("term", 2)},
				{"type": "_x"},
			}[r.IntN(3)])
		}
		return state([]string{"running", "requires_action"}[r.IntN(2)], "background", bg)
	}
}

// The feed is the state, in v2 too: for random v2 scripts, folding the
// turn's events reproduces State, and folding the session's reproduces
// the session's.
func TestV2FeedReproducesState(t *testing.T) {
	for seed := range 40 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 22))
			_, a, s, turn, p := startTurnV2(t, nil)
			a.update("s1", state("running"))
			for i := range 20 + r.IntN(60) {
				if i == 3 {
					a.reply(p, map[string]any{"messageId": "u"})
				}
				a.update("s1", randomStepV2(r))
			}
			// Mid-turn too: a listed background tool call's changes in the
			// turn are on the session's feed (background_v2.go).
			syncRaw(t, a, 899)
			if diff := cmp.Diff(s.State(), sessionFoldOf(t, s), ignoreOutside); diff != "" {
				t.Errorf("session events fold differently mid-turn (-State +fold):\n%s", diff)
			}
			a.update("s1", state("idle", "stopReason", "end_turn"))
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			for range r.IntN(10) {
				a.update("s1", randomStepV2(r))
			}
			syncRaw(t, a, 900)
			want := turn.State()
			var replay []Event
			for ev := range turn.Events(context.Background(), 0) {
				replay = append(replay, ev)
			}
			if diff := cmp.Diff(want, foldEvents(t, replay)); diff != "" {
				t.Errorf("turn events fold differently (-State +fold):\n%s", diff)
			}
			ctx, stop := context.WithCancel(context.Background())
			var sf SessionFold
			wantS := s.State()
			for ev := range s.Events(ctx, 0) {
				sf.Apply(ev)
				s.mu.Lock()
				last := s.log.seq
				s.mu.Unlock()
				if sf.Seq() >= last {
					break
				}
			}
			stop()
			gotS := sf.State()
			if diff := cmp.Diff(wantS, gotS, cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Outside" }, cmp.Ignore())); diff != "" {
				t.Errorf("session events fold differently (-State +fold):\n%s", diff)
			}
		})
	}
}
