package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// diagRecorder collects diagnostics for a test.
type diagRecorder struct {
	mu sync.Mutex
	ds []acp.Diagnostic
}

func (r *diagRecorder) record(d acp.Diagnostic) {
	r.mu.Lock()
	r.ds = append(r.ds, d)
	r.mu.Unlock()
}

// of returns the messages of the diagnostics of kind k.
func (r *diagRecorder) of(k acp.DiagnosticKind) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.ds {
		if d.Kind == k {
			out = append(out, d.Message)
		}
	}
	return out
}

// subagentTurn runs one prompt turn on a new session of a client with
// opts (Subagents set unless opts says otherwise via noSubagents), whose
// agent runs script on the parent's turn, and returns the parent, its
// turn and the client. Diagnostics are flushed (the client is closed) by
// the cleanup; call closeAndDiags to read them.
func subagentTurn(t *testing.T, copts acp.ClientOptions, script func(tu *acptest.Turn) error) (*acp.Client, *acp.Session, *acp.Turn, *diagRecorder) {
	t.Helper()
	rec := &diagRecorder{}
	copts.OnDiagnostic = rec.record
	c, done := connect(&acptest.Options{
		OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
			if err := script(tu); err != nil {
				return "", err
			}
			return schema.StopReasonEndTurn, nil
		},
	}, &copts)
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
	return c, s, turn, rec
}

// raw sends each JSON update on tu's session, or, for "id|json", on the
// session id.
func raw(tu *acptest.Turn, updates ...string) error {
	for _, u := range updates {
		if id, js, ok := strings.Cut(u, "|"); ok && !strings.HasPrefix(u, "{") {
			if err := tu.UpdateAs(id, json.RawMessage(js)); err != nil {
				return err
			}
			continue
		}
		if err := tu.Update(json.RawMessage(u)); err != nil {
			return err
		}
	}
	return nil
}

// checkFolds checks that folding each turn's and session's feed gives its
// state (TurnFold, SessionFold).
func checkFolds(t *testing.T, sessions ...*acp.Session) {
	t.Helper()
	// A done ctx: Events yields what is logged, then stops (a child's
	// turn may still run).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, s := range sessions {
		for _, turn := range s.Turns() {
			var tf acp.TurnFold
			for ev := range turn.Events(ctx, 0) {
				tf.Apply(ev)
			}
			if d := cmp.Diff(turn.State(), tf.State(), rawEq); d != "" {
				t.Errorf("session %s: TurnFold differs from Turn.State (-state +fold):\n%s", s.ID(), d)
			}
		}
		var sf acp.SessionFold
		want := s.State()
		for ev := range s.Events(ctx, 0) {
			sf.Apply(ev)
		}
		if d := cmp.Diff(want.WithoutLog(), sf.State().WithoutLog(), rawEq); d != "" {
			t.Errorf("session %s: SessionFold differs from State (-state +fold):\n%s", s.ID(), d)
		}
	}
}

// The scenario of the issue: a parent announces two children, delegates
// to one in a tool call that links to it, the children get and send
// messages between sessions, one runs a tool call, both end; every
// session and turn folds as its feed says.
func TestSubagentsScenario(t *testing.T) {
	c, parent, turn, rec := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		p := tu.SessionID()
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":"Reader","description":"reads","capabilities":{"cancel":{}},"state":{"state":"running"},"_meta":{"k":1}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B","title":"Writer","state":{"state":"running"}}`,
			`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Delegate","status":"in_progress","content":[{"type":"session","sessionId":"A"}]}`,
			`A|{"sessionUpdate":"session_message","messageId":"m1","senderSessionId":"`+p+`","recipientSessionId":"A","content":[{"type":"text","text":"read x"}]}`,
			`A|{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"reading"}}`,
			`A|{"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read x","kind":"read"}`,
			`A|{"sessionUpdate":"tool_call_update","toolCallId":"r1","status":"completed"}`,
			`B|{"sessionUpdate":"session_message_chunk","messageId":"m2","content":{"type":"text","text":"from "}}`,
			`B|{"sessionUpdate":"session_message","messageId":"m2","senderSessionId":"A","recipientSessionId":"B"}`,
			`B|{"sessionUpdate":"session_message_chunk","messageId":"m2","content":{"type":"text","text":"A"}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"A","description":"done","state":{"state":"idle","stopReason":"end_turn"},"_meta":{"j":2}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B","state":{"state":"idle","stopReason":"max_tokens"}}`,
			`{"sessionUpdate":"session_message","messageId":"m3","senderSessionId":"A","recipientSessionId":"`+p+`","content":[{"type":"text","text":"result"}]}`,
			`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`,
		)
	})
	a, b := c.Session("A"), c.Session("B")
	if a == nil || b == nil {
		t.Fatalf("children A %v, B %v: not registered", a, b)
	}
	if kids := slices.Collect(parent.Children()); !slices.Equal(kids, []*acp.Session{a, b}) {
		t.Errorf("Children = %v", kids)
	}
	if a.Parent() != parent || b.Parent() != parent || parent.Parent() != nil {
		t.Errorf("parents: A %v, B %v, parent %v", a.Parent(), b.Parent(), parent.Parent())
	}
	if st := a.State(); st.ParentSessionID != parent.ID() || st.Cwd != parent.State().Cwd {
		t.Errorf("A's state: parent %q cwd %q", st.ParentSessionID, st.Cwd)
	}

	// What the parent said about its children, patch by patch.
	subs := parent.State().Subagents
	want := []acp.Subagent{
		{SessionID: "A", Title: "Reader", Description: "done", Capabilities: &schema.SubagentSessionCapabilities{Cancel: &schema.Capability{}},
			State: &schema.StateUpdate{State: "idle", StopReason: schema.StopReasonEndTurn}, Meta: json.RawMessage(`{"j":2,"k":1}`)},
		{SessionID: "B", Title: "Writer", State: &schema.StateUpdate{State: "idle", StopReason: schema.StopReasonMaxTokens}},
	}
	if d := cmp.Diff(want, subs, rawEq); d != "" {
		t.Errorf("Subagents (-want +got):\n%s", d)
	}
	if sa, ok := a.Subagent(); !ok || sa.Title != "Reader" {
		t.Errorf("A.Subagent() = %+v, %v", sa, ok)
	}

	// Each child has one turn, the agent's, with its own work.
	for _, tc := range []struct {
		s    *acp.Session
		stop schema.StopReason
	}{{a, schema.StopReasonEndTurn}, {b, schema.StopReasonMaxTokens}} {
		turns := tc.s.Turns()
		if len(turns) != 1 || !turns[0].AgentStarted() {
			t.Fatalf("%s: turns %v", tc.s.ID(), turns)
		}
		if stop, err := turns[0].Wait(); stop != tc.stop || err != nil {
			t.Errorf("%s: turn ended %q, %v; want %q", tc.s.ID(), stop, err, tc.stop)
		}
	}
	if turn.AgentStarted() {
		t.Error("the prompted turn says the agent started it")
	}
	ast := a.Turns()[0].State()
	if len(ast.Messages) != 1 || ast.Messages[0].Text != "reading" || len(ast.ToolCalls) != 1 || ast.ToolCalls[0].Status != schema.ToolCallStatusCompleted {
		t.Errorf("A's turn: %+v", ast)
	}
	if len(ast.SessionMessages) != 1 || ast.SessionMessages[0].Text() != "read x" || ast.SessionMessages[0].SenderSessionID != parent.ID() {
		t.Errorf("A's session messages: %+v", ast.SessionMessages)
	}
	bst := b.Turns()[0].State()
	if len(bst.SessionMessages) != 1 || bst.SessionMessages[0].Text() != "from A" || bst.SessionMessages[0].SenderSessionID != "A" || bst.SessionMessages[0].RecipientSessionID != "B" {
		t.Errorf("B's session messages: %+v", bst.SessionMessages)
	}
	// The parent's turn: the delegating tool call links to A, and A's
	// result arrived as a message between sessions.
	pst := turn.State()
	if len(pst.ToolCalls) != 1 || len(pst.ToolCalls[0].Content) != 1 {
		t.Fatalf("parent tool calls: %+v", pst.ToolCalls)
	}
	if ref, ok := acp.SessionReferenceOf(pst.ToolCalls[0].Content[0]); !ok || ref.SessionID != "A" {
		t.Errorf("tool call content %+v: want a session reference to A", pst.ToolCalls[0].Content[0])
	}
	if len(pst.SessionMessages) != 1 || pst.SessionMessages[0].Text() != "result" {
		t.Errorf("parent session messages: %+v", pst.SessionMessages)
	}
	items := pst.Items()
	if len(items) != 2 || items[1].Kind != acp.ItemSessionMessage || items[1].Order() != 1 {
		t.Errorf("parent items: %+v", items)
	}
	checkFolds(t, parent, a, b)

	// A child takes no mutation from the client.
	ctx := context.Background()
	if _, err := a.Prompt(ctx, schema.Text("hi")); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("Prompt on a child: %v", err)
	}
	if err := b.Cancel(); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("Cancel on a child without cancel: %v", err)
	}
	if err := a.Cancel(); err != nil {
		t.Errorf("Cancel on a child granting cancel, no turn running: %v", err)
	}
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 0 {
		t.Errorf("violations reported: %q", v)
	}
}
