package traceview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// TestRenderAcptestTranscript renders what acptest's Agent.WriteTranscript
// writes, for a turn with a thought, a message, a tool call with a diff
// and a permission answered by the client.
func TestRenderAcptestTranscript(t *testing.T) {
	old := "one\n"
	c, a := acptest.Connect(t, &acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Think("hmm")
			t.ToolCall(acptest.ToolCallSpec{ID: "e1", Title: "Edit f.txt", Kind: "edit", Status: "pending",
				Content: []any{acptest.Diff("/w/f.txt", &old, "two\n")}})
			if _, err := t.AskPermission(acptest.ToolCallSpec{ID: "e1"}); err != nil {
				return "", err
			}
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "e1", Status: "completed"})
			t.Say("done")
			return schema.StopReasonEndTurn, nil
		},
	}, &acp.ClientOptions{Permission: acp.AllowAll})
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("edit it"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	if err := a.WriteTranscript(&rec); err != nil {
		t.Fatal(err)
	}
	_, p := render(t, rec.Bytes(), Options{})
	if len(p.Bad) != 0 || p.Stats.Turns != 1 {
		t.Fatalf("bad %v, turns %d", p.Bad, p.Stats.Turns)
	}
	var kinds []string
	for _, it := range p.Sessions[0].Segs[len(p.Sessions[0].Segs)-1].Items {
		kinds = append(kinds, it.K)
	}
	if got := strings.Join(kinds, " "); got != "user thought tool perm msg" {
		t.Errorf("items %q, want the prompt, thought, tool call, permission, message", got)
	}
	tc := find(p, "tool")[0].Tool
	if tc.Status != "completed" || len(tc.Hist) != 2 || !strings.Contains(strings.Join(tc.Content[0].Diff, "\n"), "+two") || tc.Perm == "" {
		t.Errorf("tool card %+v", tc)
	}
	if pm := find(p, "perm")[0].Perm; pm.Answer != "selected" || pm.MS == nil {
		t.Errorf("permission %+v", pm)
	}
}
