package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestLoadSession: a new connection loads a session a real turn ran in;
// the agent's replay is folded into the session's history.
func TestLoadSession(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		r := start(t, ag, &acp.ClientOptions{Permission: acp.AllowAll})
		r.Model.Script(
			Reply{Text: []string{"Making it."}, Tool: shell(ag, "call_make", "echo made > made.txt")},
			Reply{Text: []string{"Made."}},
		)
		if _, stop, err := r.prompt("make made.txt"); err != nil || stop != schema.StopReasonEndTurn {
			t.Fatalf("turn: %v, %v", stop, err)
		}
		id := r.S.ID()
		r.C.Close()

		// The load gets a trace of its own: a recording is one connection.
		r.trace.Reset()
		r.tw = acp.NewTraceWriter(r.trace)
		r.connect(&acp.ClientOptions{Trace: r.tw})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := r.C.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: r.Dir})
		if err != nil {
			t.Fatalf("session/load: %v", err)
		}
		st := s.State()
		h := st.History
		for _, o := range st.Outside {
			if !o.Replay {
				t.Errorf("update %T outside the replay", o.Update)
			}
		}
		// Claude Code replays the model switch it made at session start
		// as user messages without ids: they fold into the prompt's.
		if u := texts(h.UserMessages); len(u) != 1 || !strings.HasSuffix(u[0], "make made.txt") {
			t.Errorf("replayed user messages %q, want the prompt", u)
		}
		if m := texts(h.Messages); strings.Join(m, "|") != "Making it.|Made." {
			t.Errorf("replayed agent messages %q", m)
		}
		if tc := findTool(h, "call_make"); tc == nil || tc.Status != schema.ToolCallStatusCompleted {
			t.Errorf("replayed tool call %+v, want call_make completed", tc)
		}
		r.save("load")
	})
}
