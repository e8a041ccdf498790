package acp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// v2: a prompt is answered when accepted and its turn runs until the
// agent reports idle. The agent dying in such a turn ends it with the
// connection's end — ErrAgentRestarted under supervision, ErrConnClosed
// without — and never with the stop reason of an idle the restored
// session reports afterwards.
func TestRestartV2TurnInFlight(t *testing.T) {
	for _, supervised := range []bool{true, false} {
		name := "unsupervised"
		if supervised {
			name = "supervised"
		}
		t.Run(name, func(t *testing.T) {
			a := acptest.New(&acptest.Options{Version: 2, OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
				tn.Say("half")
				<-tn.Context().Done() // until killed
				return "", tn.Context().Err()
			}})
			t.Cleanup(func() { a.Close() })
			opts := &acp.ClientOptions{ProtocolVersion: 2}
			if supervised {
				opts.Restart = &acp.RestartPolicy{}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := acp.Connect(ctx, &acptest.Transport{Agent: a}, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx, schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			for u := range turn.Updates() {
				if _, ok := u.(*schema.AgentMessageChunk); ok {
					break
				}
			}
			a.Kill()
			select {
			case <-turn.Done():
			case <-ctx.Done():
				t.Fatal("the turn did not end after the agent died")
			}
			_, err = turn.Wait()
			want := acp.ErrConnClosed
			if supervised {
				want = acp.ErrAgentRestarted
			}
			if !errors.Is(err, want) {
				t.Fatalf("the interrupted turn: %v, want %v", err, want)
			}
		})
	}
}
