package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Rule (ACP v2, SubagentUpdate): child sessions are baseline v2, with no
// client capability: a v2 client without ClientOptions.Subagents
// registers the children its agent announces, applies their restrictions,
// folds the subagent_update patches (v2's null cwd and
// additionalDirectories clear), and runs each child's agent-started turn
// by the child's own state_update (running starts it, idle ends it) or by
// the parent's mirrored state, idempotently. acptest scripts the v2 agent.
func TestSubagentsV2NoCapability(t *testing.T) {
	c, parent, rec := subagentTurnV2(t, func(tu *acptest.Turn) error {
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":"Reader","cwd":"/elsewhere","additionalDirectories":["/more"],"_meta":{"k":1,"m":3}}`,
			`A|{"sessionUpdate":"state_update","state":"running","background":[]}`,
			`A|{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"reading"}}`,
			`A|{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read x","kind":"read"}`,
			`{"sessionUpdate":"subagent_update","sessionId":"A","state":{"state":"running"}}`,
			`A|{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","background":[{"type":"subagent","sessionId":"A1"}]}`,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":null,"cwd":null,"additionalDirectories":null,"state":{"state":"idle","stopReason":"end_turn"},"_meta":{"k":null,"j":2}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B","capabilities":{"cancel":{}},"state":{"state":"running"}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B","state":{"state":"idle","stopReason":"max_tokens"}}`,
		)
	})
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("negotiated %d", c.InitializeResponse().ProtocolVersion)
	}
	a, b := c.Session("A"), c.Session("B")
	if a == nil || b == nil || a.Parent() != parent || b.Parent() != parent {
		t.Fatalf("children A %v, B %v: not registered under the parent", a, b)
	}
	want := []acp.Subagent{
		{SessionID: "A", State: &schema.StateUpdate{State: "idle", StopReason: schema.StopReasonEndTurn}, Meta: json.RawMessage(`{"j":2,"k":null,"m":3}`)},
		{SessionID: "B", Capabilities: &schema.SubagentSessionCapabilities{Cancel: &schema.Capability{}}, State: &schema.StateUpdate{State: "idle", StopReason: schema.StopReasonMaxTokens}},
	}
	if d := cmp.Diff(want, parent.State().Subagents, rawEq); d != "" {
		t.Errorf("Subagents (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		s    *acp.Session
		stop schema.StopReason
	}{{a, schema.StopReasonEndTurn}, {b, schema.StopReasonMaxTokens}} {
		turns := tc.s.Turns()
		if len(turns) != 1 || !turns[0].AgentStarted() {
			t.Fatalf("%s: turns %v (want one agent-started turn: duplicate states are idempotent)", tc.s.ID(), turns)
		}
		if stop, err := turns[0].Wait(); stop != tc.stop || err != nil {
			t.Errorf("%s: turn ended %q, %v; want %q", tc.s.ID(), stop, err, tc.stop)
		}
	}
	ast := a.Turns()[0].State()
	if len(ast.Messages) != 1 || ast.Messages[0].Text != "reading" || len(ast.ToolCalls) != 1 || ast.ToolCalls[0].Title != "Read x" {
		t.Errorf("A's turn: %+v", ast)
	}
	if act := a.State().Activity; act == nil || len(act.Background) != 1 || act.Background[0].Work.SessionID != "A1" {
		t.Errorf("A's activity %+v: want the background subagent A1", act)
	}
	checkFolds(t, parent, a, b)
	ctx := context.Background()
	if _, err := a.Prompt(ctx, schema.Text("hi")); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("Prompt on a child: %v", err)
	}
	if err := a.Cancel(); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("Cancel on a child without cancel: %v", err)
	}
	if err := b.Cancel(); err != nil {
		t.Errorf("Cancel on a child granting cancel: %v", err)
	}
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 0 {
		t.Errorf("violations reported: %q", v)
	}
}

// subagentTurnV2 is subagentTurn with a v2 acptest agent and a v2 client
// that does not set ClientOptions.Subagents.
func subagentTurnV2(t *testing.T, script func(tu *acptest.Turn) error) (*acp.Client, *acp.Session, *diagRecorder) {
	t.Helper()
	rec := &diagRecorder{}
	c, done := connect(&acptest.Options{Version: 2, OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
		return schema.StopReasonEndTurn, script(tu)
	}}, &acp.ClientOptions{ProtocolVersion: 2, OnDiagnostic: rec.record})
	t.Cleanup(done)
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	return c, s, rec
}

// Rule (schema v2 SubagentUpdate: the parent's state mirrors the child's
// own state_update): a v2 child's own state_update is copied into its
// parent's Subagents entry by the client, without waiting for the agent
// to mirror it, as a local event on the parent's feed (SessionFold folds
// it alike); a later report of either kind replaces it.
func TestSubagentsV2ChildStateMirrored(t *testing.T) {
	_, parent, _ := subagentTurnV2(t, func(tu *acptest.Turn) error {
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":"Reader"}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B"}`,
			`A|{"sessionUpdate":"state_update","state":"running","background":[]}`,
			`B|{"sessionUpdate":"state_update","state":"running","background":[]}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B","state":{"state":"requires_action"}}`,
			`A|{"sessionUpdate":"state_update","state":"idle","stopReason":"max_tokens","background":[{"type":"tool_call","toolCallId":"w1"}]}`,
		)
	})
	subs := parent.State().Subagents
	if len(subs) != 2 {
		t.Fatalf("subagents %+v", subs)
	}
	want := &schema.StateUpdate{State: "idle", StopReason: schema.StopReasonMaxTokens, Background: []schema.BackgroundWork{{Type: "tool_call", ToolCallID: "w1"}}}
	if d := cmp.Diff(want, subs[0].State, rawEq); d != "" || subs[0].Title != "Reader" {
		t.Errorf("A's mirrored state (-want +got):\n%s", d)
	}
	if st := subs[1].State; st == nil || st.State != schema.StateRequiresAction {
		t.Errorf("B: the parent's own report after the child's did not replace it: %+v", st)
	}
	mirrored := 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for ev := range parent.Events(ctx, 0) {
		if u, ok := ev.Update.(*schema.SubagentUpdate); ok && ev.Origin == acp.OriginLocal && u.State.Present {
			mirrored++
		}
	}
	if mirrored != 3 {
		t.Errorf("%d mirrored states on the parent's feed, want 3", mirrored)
	}
	checkFolds(t, parent)
}
