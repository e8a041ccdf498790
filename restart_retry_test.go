package acp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func init() {
	// An agent that, the first time (no file at RESTART_UNDELIVERED yet),
	// answers a prompt with CodeNotDelivered and exits, as a draining
	// gateway refuses a new request and then closes the connection.
	acptest.Register("restart.undelivered", func() *acptest.Agent {
		return acptest.New(&acptest.Options{
			History: map[string][]any{"sess-known": nil},
			OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
				mark := os.Getenv("RESTART_UNDELIVERED")
				if _, err := os.Stat(mark); err != nil {
					if err := os.WriteFile(mark, nil, 0o600); err != nil {
						return "", err
					}
					t.AfterTurn(func() { os.Exit(3) })
					return "", &acptest.Error{Code: acp.CodeNotDelivered, Message: "draining: not delivered"}
				}
				t.Say("answer to " + t.PromptText())
				return schema.StopReasonEndTurn, nil
			},
		})
	})
}

// A prompt answered CodeNotDelivered is sent again, as the same turn,
// once the restart that follows has restored its session: the turn ends
// with the restarted agent's answer and nothing of the restore's replay.
// Without supervision the turn fails with the answer's error.
func TestRestartRetriesUndeliveredPrompt(t *testing.T) {
	for _, supervised := range []bool{true, false} {
		t.Run(map[bool]string{true: "supervised", false: "unsupervised"}[supervised], func(t *testing.T) {
			t.Setenv("RESTART_UNDELIVERED", filepath.Join(t.TempDir(), "mark"))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			opts := &acp.ClientOptions{}
			evs := newRestartEvents()
			if supervised {
				opts.Restart = &acp.RestartPolicy{OnRestart: evs.on}
			}
			c, err := acp.Connect(ctx, &acp.CommandTransport{Command: acptest.Command("restart.undelivered")}, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-known", Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx, schema.Text("hello"))
			if err != nil {
				t.Fatal(err)
			}
			stop, err := turn.Wait()
			if !supervised {
				var se *schema.Error
				if !errors.As(err, &se) || se.Code != acp.CodeNotDelivered {
					t.Fatalf("unsupervised: the turn ended %q, %v; want the CodeNotDelivered error", stop, err)
				}
				return
			}
			if err != nil || stop != schema.StopReasonEndTurn {
				t.Fatalf("the retried turn: %q, %v", stop, err)
			}
			var text string
			for _, m := range turn.State().Messages {
				text += m.Text
			}
			if text != "answer to hello" {
				t.Errorf("the retried turn's text: %q", text)
			}
			if ev := evs.wait(t, ctx, acp.RestartRestored); len(ev.Restored) != 1 {
				t.Errorf("the restart: %+v", ev)
			}
			if n := s.State().Restarts; n != 1 {
				t.Errorf("Restarts = %d, want 1", n)
			}
		})
	}
}
