package demo_test

// The demo speaks the version the client offers, through the acp client.

import (
	"context"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest/demo"
	"github.com/acpclient/acp/schema"
)

// TestVersions: the same demo speaks v1 to a client offering 1 and v2 to
// one offering 2, and its turn works in both: the permission asked and
// answered, the edit failing for want of client fs (v2 has none), the
// answer and the title.
func TestVersions(t *testing.T) {
	for _, v := range []int{1, 2} {
		c, _ := demo.Connect(t, nil, &acp.ClientOptions{ProtocolVersion: v, Permission: acp.AllowAll})
		if got := c.InitializeResponse().ProtocolVersion; got != v {
			t.Fatalf("offered %d, negotiated %d", v, got)
		}
		ctx := context.Background()
		s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.Prompt(ctx, schema.Text("hello"))
		if err != nil {
			t.Fatal(err)
		}
		stop, err := turn.Wait()
		if err != nil || stop != schema.StopReasonEndTurn {
			t.Fatalf("v%d: stop %q, %v", v, stop, err)
		}
		st := turn.State()
		var text strings.Builder
		for _, m := range st.Messages {
			text.WriteString(m.Text)
		}
		hint := map[int]string{1: "(with the acp command, run it with --fs)", 2: "(ACP v2 has none; with the acp command, run it with --protocol 1 --fs)"}[v]
		if !strings.Contains(text.String(), `You said: "hello".`) || !strings.Contains(text.String(), "does not let me write files "+hint) {
			t.Errorf("v%d: said %q", v, text.String())
		}
		if len(st.ToolCalls) != 2 || st.ToolCalls[1].Status != schema.ToolCallStatusFailed {
			t.Errorf("v%d: tool calls %+v", v, st.ToolCalls)
		}
		if title := s.State().Title; title != "hello" {
			t.Errorf("v%d: title %q", v, title)
		}
	}
}
