package acp_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Updates for a child that arrive before its announcement break the rule
// that the announcement comes first: they are reported and dropped, not
// folded into the child announced later. A message naming a session never
// announced is reported (and folded: it is the enclosing session's).
func TestHostileSubagentNeverAnnounced(t *testing.T) {
	c, parent, turn, rec := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		return raw(tu,
			`ghost|{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"early"}}`,
			`ghost|{"sessionUpdate":"tool_call","toolCallId":"x","title":"early"}`,
			`{"sessionUpdate":"subagent_update","sessionId":"ghost","state":{"state":"running"}}`,
			`ghost|{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"late"}}`,
			`{"sessionUpdate":"session_message","messageId":"m","senderSessionId":"nobody","content":[{"type":"text","text":"hi"}]}`,
			`{"sessionUpdate":"tool_call","toolCallId":"t","title":"Wait","content":[{"type":"session","sessionId":"nobody"}]}`,
			`nobody|{"sessionUpdate":"subagent_update","sessionId":"orphan"}`,
		)
	})
	g := c.Session("ghost")
	if g == nil {
		t.Fatal("ghost not announced")
	}
	st := g.CurrentTurn().State()
	if len(st.Messages) != 1 || st.Messages[0].Text != "late" || len(st.ToolCalls) != 0 {
		t.Errorf("ghost's turn has what came before its announcement: %+v", st)
	}
	if h := g.State().History; len(h.Messages) != 0 || len(h.ToolCalls) != 0 {
		t.Errorf("ghost's history has what came before its announcement: %+v", h)
	}
	if len(turn.State().SessionMessages) != 1 {
		t.Error("the message naming an unknown sender was not folded")
	}
	if c.Session("orphan") != nil {
		t.Error("a subagent_update on an unknown session announced a child")
	}
	c.Close()
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 4 {
		t.Errorf("violations %q, want 4 (early updates, unknown sender, unknown session content, unknown parent)", v)
	}
	_ = parent
}

// A flood of announcements keeps Limits.MaxSubagentSessions children and a
// handful of diagnostics, not one per line.
func TestHostileSubagentFlood(t *testing.T) {
	const n = 5000
	c, parent, _, rec := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		for i := range n {
			if err := tu.Update(acptest.SubagentUpdate(fmt.Sprint("c", i), map[string]any{"title": "x", "state": map[string]any{"state": "running"}})); err != nil {
				return err
			}
		}
		return nil
	})
	if got := len(parent.State().Subagents); got != 64 {
		t.Errorf("%d children folded, want the default limit 64", got)
	}
	if got := len(slices.Collect(parent.Children())); got != 64 {
		t.Errorf("%d children kept", got)
	}
	if c.Session(fmt.Sprint("c", 64)) != nil {
		t.Error("the 65th child was kept")
	}
	c.Close()
	if got := len(rec.of(acp.DiagLimitExceeded)); got == 0 || got > 16 {
		t.Errorf("%d limit diagnostics for %d dropped announcements, want a few", got, n-64)
	}
}

// The schema lets a child announce children of its own (on its own
// session, their immediate parent); a child never moves to another parent,
// and no session becomes its own ancestor.
func TestHostileSubagentNesting(t *testing.T) {
	c, parent, _, rec := subagentTurn(t, acp.ClientOptions{Subagents: true}, func(tu *acptest.Turn) error {
		p := tu.SessionID()
		return raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A"}`,
			`{"sessionUpdate":"subagent_update","sessionId":"B"}`,
			`A|{"sessionUpdate":"subagent_update","sessionId":"G","title":"grandchild"}`,
			`B|{"sessionUpdate":"subagent_update","sessionId":"A","title":"stolen"}`,
			`G|{"sessionUpdate":"subagent_update","sessionId":"`+p+`"}`,
			`A|{"sessionUpdate":"subagent_update","sessionId":"A"}`,
		)
	})
	a, b, g := c.Session("A"), c.Session("B"), c.Session("G")
	if g == nil || g.Parent() != a || a.Parent() != parent {
		t.Fatalf("nesting: G %v parent %v; A's parent %v", g, g.Parent(), a.Parent())
	}
	if kids := slices.Collect(a.Children()); len(kids) != 1 || kids[0] != g {
		t.Errorf("A's children %v", kids)
	}
	if len(b.State().Subagents) != 0 || len(slices.Collect(b.Children())) != 0 {
		t.Errorf("B took A: %+v", b.State().Subagents)
	}
	if len(g.State().Subagents) != 0 || parent.Parent() != nil {
		t.Error("the parent became its grandchild's child")
	}
	if len(a.State().Subagents) != 1 {
		t.Errorf("A's subagents %+v", a.State().Subagents)
	}
	if _, err := g.Prompt(t.Context(), schema.Text("x")); !errors.Is(err, acp.ErrSubagentRestricted) {
		t.Errorf("prompting a grandchild: %v", err)
	}
	c.Close()
	if v := rec.of(acp.DiagProtocolViolation); len(v) != 3 {
		t.Errorf("violations %q, want 3 (re-parent, cycle, self)", v)
	}
}

// Limits.MaxSubagentBytes bounds what the children under one session keep
// together: past it their updates that grow state are dropped and
// reported, the parent's own are folded still, state-replacing kinds
// still apply, and a released child gives its bytes back.
func TestHostileSubagentBytes(t *testing.T) {
	chunk := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 200) + `"}}`
	c, parent, turn, rec := subagentTurn(t, acp.ClientOptions{Subagents: true, Limits: acp.Limits{MaxSubagentBytes: 8 << 10}}, func(tu *acptest.Turn) error {
		if err := raw(tu,
			`{"sessionUpdate":"subagent_update","sessionId":"A","state":{"state":"running"}}`,
			`A|{"sessionUpdate":"subagent_update","sessionId":"G","state":{"state":"running"}}`,
		); err != nil {
			return err
		}
		for range 200 {
			if err := raw(tu, "A|"+chunk, "G|"+chunk, chunk); err != nil {
				return err
			}
		}
		return raw(tu, `G|{"sessionUpdate":"session_info_update","title":"still applied"}`)
	})
	a, g := c.Session("A"), c.Session("G")
	kept := len(a.CurrentTurn().State().Messages[0].Text) + len(g.CurrentTurn().State().Messages[0].Text)
	if kept == 0 || kept > 8<<10 {
		t.Errorf("the children kept %d bytes of text under an 8 KiB budget", kept)
	}
	if got := len(turn.State().Messages[0].Text); got != 200*200 {
		t.Errorf("the parent kept %d bytes of its own text, want all %d", got, 200*200)
	}
	if g.State().Title != "still applied" {
		t.Error("a state-replacing update was dropped past the budget")
	}
	a.Release() // not granted cancel: its turn runs on, its slot and bytes stay until it ends
	g.Release()
	_ = parent
	c.Close()
	if d := rec.of(acp.DiagLimitExceeded); len(d) == 0 || len(d) > 12 || !strings.Contains(d[0], "MaxSubagentBytes") {
		t.Errorf("limit diagnostics %q", d)
	}
}

// A released child gives back what it was charged against its tree: a
// child announced after it folds again.
func TestSubagentBytesReleased(t *testing.T) {
	chunk := `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 200) + `"}}`
	script := func(id string) []string {
		out := []string{`{"sessionUpdate":"subagent_update","sessionId":"` + id + `"}`}
		for range 60 {
			out = append(out, id+"|"+chunk)
		}
		return out
	}
	c, parent, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true, Limits: acp.Limits{MaxSubagentBytes: 8 << 10}}, func(tu *acptest.Turn) error {
		if tu.PromptText() == "again" {
			return raw(tu, script("B")...)
		}
		return raw(tu, script("A")...)
	})
	a := c.Session("A")
	if n := len(a.State().History.Messages[0].Text); n >= 60*200 || n == 0 {
		t.Fatalf("A kept %d bytes: the budget did not bite", n)
	}
	a.Release()
	turn, err := parent.Prompt(t.Context(), schema.Text("again"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Wait()
	b := c.Session("B")
	if h := b.State().History; len(h.Messages) == 0 || len(h.Messages[0].Text) == 0 {
		t.Errorf("B folded nothing after A was released: %+v", h.Messages)
	}
}

// An agent that keeps announcing children the host keeps releasing does
// not grow the parent: a released child's entry leaves Subagents (before,
// every child ever announced stayed), so what the parent retains is
// bounded by the live children, Limits.MaxSubagentSessions.
func TestHostileSubagentChurnBounded(t *testing.T) {
	const rounds, perRound = 50, 8
	c, parent, _, _ := subagentTurn(t, acp.ClientOptions{Subagents: true, Limits: acp.Limits{MaxSubagentSessions: perRound}}, func(tu *acptest.Turn) error {
		for i := range perRound {
			id := fmt.Sprintf("%s-%d", tu.PromptText(), i)
			if err := tu.Update(acptest.SubagentUpdate(id, map[string]any{"title": strings.Repeat("t", 100)})); err != nil {
				return err
			}
		}
		return nil
	})
	most := 0
	for r := range rounds {
		if r > 0 {
			turn, err := parent.Prompt(t.Context(), schema.Text(fmt.Sprint("r", r)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		most = max(most, len(parent.State().Subagents))
		for k := range parent.Children() {
			k.Release()
		}
	}
	if most != perRound {
		t.Errorf("at most %d entries in a round, want %d (the announcements were not all folded?)", most, perRound)
	}
	if got := parent.State().Subagents; len(got) != 0 {
		t.Errorf("after %d released children the parent keeps %d entries", rounds*perRound, len(got))
	}
	if c.Session("r49-0") != nil {
		t.Error("a released child is still registered")
	}
}
