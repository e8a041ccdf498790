package acp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// restartClient connects a supervised client to a through a reconnecting
// acptest.Transport.
func restartClient(t *testing.T, a *acptest.Agent, policy *acp.RestartPolicy, copts *acp.ClientOptions) (*acp.Client, *acptest.Transport) {
	t.Helper()
	tr := &acptest.Transport{Agent: a}
	o := acp.ClientOptions{}
	if copts != nil {
		o = *copts
	}
	if policy == nil {
		policy = &acp.RestartPolicy{}
	}
	o.Restart = policy
	c, err := acp.Connect(context.Background(), tr, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		a.Close()
	})
	return c, tr
}

// crashScript answers prompts by text: "crash" says something and dies
// mid-turn, anything else is echoed back.
func crashScript(t *acptest.Turn) (schema.StopReason, error) {
	p := t.PromptText()
	if strings.HasPrefix(p, "crash") {
		t.Say("partial answer to " + p)
		t.Crash()
	}
	t.Say("answer to " + p)
	return schema.StopReasonEndTurn, nil
}

// run prompts s with text and waits for the turn's end.
func run(ctx context.Context, s *acp.Session, text string) (*acp.Turn, error) {
	turn, err := s.Prompt(ctx, schema.Text(text))
	if err != nil {
		return nil, err
	}
	_, err = turn.Wait()
	return turn, err
}

func waitRestored(t *testing.T, ctx context.Context, s *acp.Session) {
	t.Helper()
	for range s.Changes(ctx) {
		if s.State().Restarts > 0 {
			return
		}
	}
	t.Fatal("the session was never restored")
}

func TestRestartRestoresSessionAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restore acptest.Restore
		method  string
	}{
		{"resume", acptest.RestoreBoth, schema.MethodSessionResume},
		{"load", acptest.RestoreLoadOnly, schema.MethodSessionLoad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			a := acptest.New(&acptest.Options{OnPrompt: crashScript, Restore: tc.restore})
			c, tr := restartClient(t, a, nil, nil)
			s, err := c.NewSession(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run(ctx, s, "hello"); err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx, schema.Text("crash now"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = turn.Wait()
			if !errors.Is(err, acp.ErrAgentRestarted) {
				t.Fatalf("the interrupted turn: got %v, want ErrAgentRestarted", err)
			}
			if errors.Is(err, acp.ErrConnClosed) {
				t.Errorf("the interrupted turn's error %v says the client closed", err)
			}
			if got := turn.State().Messages; len(got) != 1 || got[0].Text != "partial answer to crash now" {
				t.Errorf("the interrupted turn kept %+v", got)
			}
			// The next prompt waits for the restart and runs on the
			// restored session.
			if _, err := run(ctx, s, "again"); err != nil {
				t.Fatalf("the prompt after the restart: %v", err)
			}
			st := s.State()
			if st.Restarts != 1 {
				t.Errorf("Restarts = %d, want 1", st.Restarts)
			}
			if tr.Connects() != 2 {
				t.Errorf("Connects = %d, want 2", tr.Connects())
			}
			if n := len(st.History.Messages) + len(st.History.UserMessages) + len(st.History.ToolCalls); n != 0 {
				t.Errorf("the replay was folded again into History: %+v", st.History)
			}
			turns := s.Turns()
			if len(turns) != 3 {
				t.Fatalf("%d turns", len(turns))
			}
			if got := turns[2].State().Messages; len(got) != 1 || got[0].Text != "answer to again" {
				t.Errorf("the turn after the restart: %+v", got)
			}
			if c.Err() != nil {
				t.Errorf("Err = %v", c.Err())
			}
			var restarted []acp.Event
			for ev := range s.Events(ctx, 0) {
				if ev.Kind == acp.EventRestarted {
					restarted = append(restarted, ev)
				}
				if ev.Kind == acp.EventTurnStart && ev.Turn == turns[2] {
					break
				}
			}
			if len(restarted) != 1 || restarted[0].Restart.Method != tc.method || restarted[0].Restart.Connection != 2 {
				t.Errorf("restart events: %+v", restarted)
			}
		})
	}
}
