package e2e

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestRestart: the real agent's process is killed with SIGKILL — after a
// completed turn, and in the middle of one while the model streams — with
// supervision on. The client starts it again, resumes the session, and
// the conversation goes on: the interrupted turn ends with
// ErrAgentRestarted and keeps what it had folded, the next prompt works on
// the restored session, and the session's state is the old one plus the
// new turn, nothing twice.
func TestRestart(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		for _, midTurn := range []bool{false, true} {
			name := "after-turn"
			if midTurn {
				name = "mid-turn"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				testRestart(t, ag, midTurn)
			})
		}
	})
}

// testRestart runs one case, in the version ag is offered (v2: the
// session comes back by session/resume with a replay from the start).
func testRestart(t *testing.T, ag agent, midTurn bool) {
	v2 := ag.version == 2
	restarts := make(chan acp.RestartEvent, 16)
	var died time.Time
	opts := &acp.ClientOptions{
		Permission: acp.AllowAll,
		Restart: &acp.RestartPolicy{OnRestart: func(ev acp.RestartEvent) {
			switch ev.Phase {
			case acp.RestartRestored, acp.RestartGaveUp, acp.RestartFailed:
				restarts <- ev
			}
		}},
	}
	r := start(t, ag, opts)
	r.Model.Script(Reply{Text: []string{"First answer."}})
	if _, stop, err := r.prompt("one"); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("first turn: %v, %v", stop, err)
	}
	id := r.S.ID()
	kill := func() {
		died = time.Now()
		// The agent's own process (node), not its group: as an OOM kill
		// would. The client ends what is left of the group.
		p, err := os.FindProcess(r.pgid)
		if err == nil {
			err = p.Kill() // SIGKILL
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	if midTurn {
		release := make(chan struct{})
		defer close(release)
		r.Model.Script(Reply{Text: []string{"Half ", "way"}, Stall: release})
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		turn, err := r.S.Prompt(ctx, schema.Text("two"))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for u := range turn.Updates() {
			if c, ok := u.(*schema.AgentMessageChunk); ok {
				if tc, ok := c.Content.(*schema.TextContent); ok {
					got += tc.Text
				}
			}
			if strings.HasSuffix(got, "Half way") {
				break
			}
		}
		kill()
		_, err = turn.Wait()
		if !errors.Is(err, acp.ErrAgentRestarted) || errors.Is(err, acp.ErrConnClosed) {
			t.Fatalf("the interrupted turn: %v, want ErrAgentRestarted", err)
		}
		var ee *acp.ExitError
		if !errors.As(err, &ee) || ee.Status != "signal: killed" {
			t.Errorf("the interrupted turn's error %v, want the ExitError of SIGKILL", err)
		}
		if m := texts(turn.State().Messages); len(m) == 0 || !strings.HasSuffix(m[len(m)-1], "Half way") {
			t.Errorf("the interrupted turn's messages %q, want the streamed text kept", m)
		}
	} else {
		kill()
	}
	beforeAgent, beforeUser := conversation(r.S)

	var ev acp.RestartEvent
	select {
	case ev = <-restarts:
	case <-time.After(120 * time.Second):
		t.Fatalf("no restart within 2 minutes\nstderr:\n%s", r.stderrTail())
	}
	usable := time.Since(died)
	if ev.Phase != acp.RestartRestored || !slices.Equal(ev.Restored, []string{id}) || len(ev.Lost) != 0 || ev.Connection != 2 {
		t.Fatalf("restart event %+v, want session %s restored on connection 2", ev, id)
	}
	t.Logf("%s: SIGKILL to a restored session in %v", ag.name, usable.Round(time.Millisecond))

	r.Model.Script(Reply{Text: []string{"Second answer."}})
	if _, stop, err := r.prompt("three"); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("the turn after the restart: %v, %v\nstderr:\n%s", stop, err, r.stderrTail())
	}
	afterAgent, afterUser := conversation(r.S)
	if want := append(slices.Clip(beforeAgent), "Second answer."); !slices.Equal(afterAgent, want) {
		t.Errorf("agent messages after the restart %q, want %q", afterAgent, want)
	}
	if len(afterUser) < len(beforeUser) || !slices.Equal(afterUser[:len(beforeUser)], beforeUser) {
		t.Errorf("user messages after the restart %q, want %q first", afterUser, beforeUser)
	}
	if n := r.S.State().Restarts; n != 1 {
		t.Errorf("SessionState.Restarts %d, want 1", n)
	}
	if n := r.Model.Left(); n != 0 {
		t.Errorf("%d scripted replies left", n)
	}
	if midTurn || v2 {
		return
	}
	// What the restart is measured against: a fresh process, initialize
	// and session/load of the same history, by hand.
	r.C.Close()
	t0 := time.Now()
	r.connect(&acp.ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := r.C.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: r.Dir}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	t.Logf("%s: a fresh connect and session/load in %v", ag.name, time.Since(t0).Round(time.Millisecond))
}

// conversation is what the session holds of the conversation: the agent's
// and the user's messages, those outside turns (a replay) first, then each
// turn's.
func conversation(s *acp.Session) (agent, user []string) {
	st := s.State()
	agent, user = texts(st.History.Messages), texts(st.History.UserMessages)
	for _, t := range s.Turns() {
		ts := t.State()
		agent = append(agent, texts(ts.Messages)...)
		user = append(user, texts(ts.UserMessages)...)
	}
	return agent, user
}
