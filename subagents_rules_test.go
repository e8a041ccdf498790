package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
	"github.com/google/go-cmp/cmp"
)

// Without ClientOptions.Subagents the agent must not send the subagent
// kinds: each is reported as a protocol violation and folded nowhere.
func TestSubagentKindsWithoutCapability(t *testing.T) {
	c, parent, turn, rec := subagentTurn(t, acp.ClientOptions{}, func(tu *acptest.Turn) error {
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":"T","state":{"state":"running"}}`,
			`{"sessionUpdate":"session_message","messageId":"m","content":[{"type":"text","text":"x"}]}`,
			`{"sessionUpdate":"session_message_chunk","messageId":"m","content":{"type":"text","text":"y"}}`,
			`{"sessionUpdate":"tool_call","toolCallId":"t","title":"Delegate","content":[{"type":"session","sessionId":"A"}]}`,
		)
	})
	if c.Session("A") != nil || len(parent.State().Subagents) != 0 || len(slicesOf(parent.Children())) != 0 {
		t.Errorf("a child was kept: %+v", parent.State().Subagents)
	}
	st := turn.State()
	if len(st.SessionMessages) != 0 {
		t.Errorf("session messages folded: %+v", st.SessionMessages)
	}
	if len(st.ToolCalls) != 1 || len(st.ToolCalls[0].Content) != 1 {
		t.Fatalf("the tool call and its content must stay: %+v", st.ToolCalls)
	}
	c.Close() // delivers the diagnostics
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 4 {
		t.Errorf("violations = %q, want 4 (three kinds, and the session content)", v)
	}
	var updates []string
	for u := range turn.Updates() {
		updates = append(updates, u.UpdateKind())
	}
	if want := []string{"tool_call"}; !cmp.Equal(updates, want) {
		t.Errorf("turn updates %v, want %v: the violations are not the turn's", updates, want)
	}
}

func slicesOf(seq func(func(*acp.Session) bool)) []*acp.Session {
	var out []*acp.Session
	for s := range seq {
		out = append(out, s)
	}
	return out
}

// subagent_update patches: absent keeps, null clears, a value replaces;
// _meta patches by top-level key. A cleared state leaves the child's turn
// running (it is not idle); cleared capabilities withdraw cancel.
func TestSubagentPatchRules(t *testing.T) {
	c, parent, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","title":"T","description":"D","capabilities":{"cancel":{}},"state":{"state":"running"},"_meta":{"a":1,"b":2}}`,
			`{"sessionUpdate":"subagent_update","sessionId":"A","description":null,"capabilities":null,"state":null,"_meta":{"b":3}}`,
		)
	})
	a := c.Session("A")
	want := acp.Subagent{SessionID: "A", Title: "T", Meta: json.RawMessage(`{"a":1,"b":3}`)}
	if d := cmp.Diff([]acp.Subagent{want}, parent.State().Subagents, rawEq); d != "" {
		t.Errorf("Subagents (-want +got):\n%s", d)
	}
	turn := a.CurrentTurn()
	if turn == nil || !turn.AgentStarted() {
		t.Fatalf("a cleared state ended the child's turn: %v", turn)
	}
	if err := a.Cancel(); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("Cancel after capabilities were cleared: %v", err)
	}
	checkFolds(t, parent, a)
}

// session_message upserts by messageId: ids absent keep, null clears, a
// value replaces; content absent keeps, [] clears, a list replaces; a chunk
// appends.
func TestSessionMessagePatchRules(t *testing.T) {
	_, parent, turn, rec := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		p := tu.SessionID()
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A"}`,
			`{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"A","recipientSessionId":"`+p+`","senderMessageId":"a1","content":[{"type":"text","text":"one"}]}`,
			`{"sessionUpdate":"session_message_chunk","messageId":"m","content":{"type":"text","text":" two"}}`,
			`{"sessionUpdate":"session_message","messageId":"m","senderMessageId":null}`,
			`{"sessionUpdate":"session_message","messageId":"n","content":[{"type":"text","text":"x"}]}`,
			`{"sessionUpdate":"session_message","messageId":"n","content":[]}`,
			`{"sessionUpdate":"session_message","messageId":"k","content":[{"type":"text","text":"old"}]}`,
			`{"sessionUpdate":"session_message","messageId":"k","content":[{"type":"text","text":"new"}],"_meta":{"z":1}}`,
		)
	})
	got := turn.State().SessionMessages
	if len(got) != 3 {
		t.Fatalf("session messages: %+v", got)
	}
	m, n, k := got[0], got[1], got[2]
	if m.Text() != "one two" || m.SenderSessionID != "A" || m.RecipientSessionID != parent.ID() || m.SenderMessageID != "" {
		t.Errorf("m = %+v", m)
	}
	if len(n.Content) != 0 {
		t.Errorf("n kept content after []: %+v", n.Content)
	}
	if k.Text() != "new" || string(k.Meta) != `{"z":1}` {
		t.Errorf("k = %+v", k)
	}
	if m.Order != 0 || n.Order != 1 || k.Order != 2 {
		t.Errorf("orders %d %d %d", m.Order, n.Order, k.Order)
	}
	checkFolds(t, parent)
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

// A child's turn is cancelled with session/cancel only when the child
// grants cancel; it then ends cancelled at the idle state the parent
// reports. A child that does not grant it gets nothing on the wire.
func TestSubagentCancel(t *testing.T) {
	var (
		mu      sync.Mutex
		parent  *acptest.Session
		cancels []string
	)
	c, done := connect(&acptest.Options{
		OnNewSession: func(s *acptest.Session) {
			mu.Lock()
			parent = s
			mu.Unlock()
		},
		OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
			return schema.StopReasonEndTurn, raw(tu,
				`{"sessionUpdate":"subagent_update","sessionId":"A","capabilities":{"cancel":{}},"state":{"state":"running"}}`,
				`{"sessionUpdate":"subagent_update","sessionId":"B","state":{"state":"running"}}`,
			)
		},
		OnCancel: func(conn *acptest.Conn, sessionID string) {
			mu.Lock()
			cancels = append(cancels, sessionID)
			ps := parent
			mu.Unlock()
			if sessionID == "A" {
				ps.Update(json.RawMessage(`{"sessionUpdate":"subagent_update","sessionId":"A","state":{"state":"idle","stopReason":"cancelled"}}`))
			}
		},
	}, &acp.ClientOptions{Subagents: true})
	defer done()
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Wait()
	a, b := c.Session("A"), c.Session("B")
	bt := b.CurrentTurn()
	bt.Cancel() // not granted: nothing sent, nothing marked
	if err := b.Cancel(); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("B.Cancel: %v", err)
	}
	at := a.CurrentTurn()
	if err := a.Cancel(); err != nil {
		t.Fatal(err)
	}
	if stop, err := at.Wait(); stop != schema.StopReasonCancelled || err != nil {
		t.Errorf("A's turn ended %q, %v", stop, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !cmp.Equal(cancels, []string{"A"}) {
		t.Errorf("session/cancel sent for %v, want only A", cancels)
	}
	if bt.State().Cancelled {
		t.Error("B's turn is marked cancelled")
	}
}

// The mutations the schema reserves to a child's agent fail locally.
func TestSubagentRestricted(t *testing.T) {
	c, _, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		return raw(tu, `{"sessionUpdate":"subagent_update","sessionId":"A"}`)
	})
	a := c.Session("A")
	ctx := context.Background()
	_, errPrompt := a.Prompt(ctx, schema.Text("x"))
	errMode := a.SetMode(ctx, "code")
	_, errConfig := a.SetConfigOption(ctx, "model", "x")
	_, errLoad := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "A", Cwd: t.TempDir()})
	for name, err := range map[string]error{"prompt": errPrompt, "set_mode": errMode, "set_config_option": errConfig, "load": errLoad} {
		if !errors.Is(err, acp.ErrSubagentRestricted) {
			t.Errorf("%s on a child: %v, want ErrSubagentRestricted", name, err)
		}
	}
	if c.Session("A") != a {
		t.Error("the failed load replaced the child")
	}
}

// A child announced with any cwd is confined to its parent's roots: the
// client granted the agent only those.
func TestSubagentRootsConfined(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	var inErr, outErr error
	var inText json.RawMessage
	c, done := connect(&acptest.Options{
		OnPrompt: func(tu *acptest.Turn) (schema.StopReason, error) {
			if err := raw(tu, `{"sessionUpdate":"subagent_update","sessionId":"A","cwd":"/"}`); err != nil {
				return "", err
			}
			inText, inErr = tu.Call(tu.Context(), schema.MethodFSReadTextFile, map[string]any{"sessionId": "A", "path": filepath.Join(dir, "in.txt")})
			_, outErr = tu.Call(tu.Context(), schema.MethodFSReadTextFile, map[string]any{"sessionId": "A", "path": outside})
			return schema.StopReasonEndTurn, nil
		},
	}, &acp.ClientOptions{Subagents: true, FS: (&workspace.FS{}).Handlers()})
	defer done()
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Wait()
	if inErr != nil || !strings.Contains(string(inText), "inside") {
		t.Errorf("reading in the parent's root for the child: %s, %v", inText, inErr)
	}
	if outErr == nil {
		t.Error("the child read a file outside its parent's roots")
	}
	if got := c.Session("A").State().Cwd; got != "/" {
		t.Errorf("the child's reported cwd = %q, want the agent's /", got)
	}
}

// A child's running turn ends with the connection: no idle can come.
func TestSubagentTurnEndsWithConnection(t *testing.T) {
	c, _, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		return raw(tu, `{"sessionUpdate":"subagent_update","sessionId":"A","state":{"state":"requires_action"}}`)
	})
	at := c.Session("A").CurrentTurn()
	if at == nil {
		t.Fatal("requires_action started no turn")
	}
	c.Close()
	if _, err := at.Wait(); !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("child turn after Close: %v, want ErrConnClosed", err)
	}
}

// Limits.MaxSubagentSessions bounds the children kept; past it an
// announcement is dropped and reported; releasing a child frees a slot.
func TestSubagentLimit(t *testing.T) {
	var parent *acptest.Session
	c, done := connect(&acptest.Options{
		OnNewSession: func(s *acptest.Session) { parent = s },
	}, &acp.ClientOptions{Subagents: true, Limits: acp.Limits{MaxSubagentSessions: 2}, OnDiagnostic: func(acp.Diagnostic) {}})
	defer done()
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"A", "B", "C"} {
		parent.Update(acptest.SubagentUpdate(id, nil))
	}
	// A call is a barrier: every update written before its answer is
	// folded (whatever it answers).
	c.Call(ctx, "session/list", map[string]any{}, nil)
	if c.Session("C") != nil || len(s.State().Subagents) != 2 {
		t.Fatalf("over the limit: C %v, subagents %+v", c.Session("C"), s.State().Subagents)
	}
	c.Session("A").Release()
	parent.Update(acptest.SubagentUpdate("D", nil))
	c.Call(ctx, "session/list", map[string]any{}, nil)
	if c.Session("D") == nil {
		t.Error("a released child did not free its slot")
	}
}

// The subagent kinds encode with their kind and decode to equal values
// (nulls included: they clear).
func TestSubagentKindsRoundTrip(t *testing.T) {
	for _, js := range []string{
		`{"sessionUpdate":"subagent_update","sessionId":"A","title":"T","description":null,"capabilities":{"cancel":{}},"state":{"state":"idle","stopReason":"end_turn"},"cwd":"/w","_meta":{"k":1}}`,
		`{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"A","recipientSessionId":null,"content":[{"type":"text","text":"x"}]}`,
		`{"sessionUpdate":"session_message_chunk","messageId":"m","content":{"type":"text","text":"y"}}`,
	} {
		var n1, n2 schema.SessionNotification
		if err := json.Unmarshal([]byte(`{"sessionId":"s","update":`+js+`}`), &n1); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(n1.Update)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`{"sessionId":"s","update":`+string(b)+`}`), &n2); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if d := cmp.Diff(n1.Update, n2.Update, rawEq); d != "" {
			t.Errorf("%s round trip (-first +second):\n%s", js, d)
		}
		if !strings.Contains(string(b), "null") && strings.Contains(js, "null") {
			t.Errorf("%s lost its null: %s", js, b)
		}
	}
}

// A released child leaves its parent's children and its parent's
// Subagents, by an EventSubagentReleased on the parent's feed (the
// client's event, not an update: no agent sends it), which SessionFold
// folds alike, in process and through JSON.
func TestSubagentReleasedLeavesParent(t *testing.T) {
	c, parent, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		return raw(tu, `{"sessionUpdate":"subagent_update","sessionId":"A","title":"reader"}`, `{"sessionUpdate":"subagent_update","sessionId":"B"}`)
	})
	c.Session("A").Release()
	kids := slicesOf(parent.Children())
	if len(kids) != 1 || kids[0].ID() != "B" || c.Session("A") != nil || acp.ChildrenKept(parent) != 1 {
		t.Errorf("children after releasing A: %v", kids)
	}
	if subs := parent.State().Subagents; len(subs) != 1 || subs[0].SessionID != "B" {
		t.Errorf("the parent's record after releasing A: %+v", subs)
	}
	var released *acp.Subagent
	var sf, sfJSON acp.SessionFold
	ctx, stop := context.WithCancel(context.Background())
	stop() // a done ctx: what is logged, then the end
	for ev := range parent.Events(ctx, 0) {
		sf.Apply(ev)
		if ev.Kind == acp.EventSubagentReleased {
			released = ev.Subagent
			if ev.Update != nil || ev.Origin != "" {
				t.Errorf("EventSubagentReleased carries an update: %+v", ev)
			}
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			var back acp.Event
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			ev = back
		}
		sfJSON.Apply(ev)
	}
	if released == nil || released.SessionID != "A" || released.Title != "reader" {
		t.Fatalf("no EventSubagentReleased for A: %+v", released)
	}
	if d := cmp.Diff(sf.State().Subagents, sfJSON.State().Subagents); d != "" {
		t.Errorf("SessionFold through JSON (-in process +JSON):\n%s", d)
	}
	if d := cmp.Diff(parent.State().WithoutLog(), sf.State().WithoutLog()); d != "" {
		t.Errorf("SessionFold (-State +fold):\n%s", d)
	}
}
