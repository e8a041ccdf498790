package acp_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A supervised client outlives its agent: the turn the agent died in
// fails with ErrAgentRestarted, the session is restored, and the next
// prompt runs on it.
func ExampleRestartPolicy() {
	ctx := context.Background()
	agent := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		if t.PromptText() == "crash" {
			t.Crash() // the agent dies mid-turn
		}
		t.Say("hello again")
		return schema.StopReasonEndTurn, nil
	}})
	defer agent.Close()
	// A transport that can connect again: here a new in-process
	// connection; a CommandTransport starts a new process.
	c, err := acp.Connect(ctx, &acptest.Transport{Agent: agent}, &acp.ClientOptions{
		Restart: &acp.RestartPolicy{}, // the defaults: 5 restarts a minute, backoff 500ms to 30s
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	s, _ := c.NewSession(ctx, nil)

	turn, _ := s.Prompt(ctx, schema.Text("crash"))
	_, err = turn.Wait()
	fmt.Println("interrupted:", errors.Is(err, acp.ErrAgentRestarted))

	turn, _ = s.Prompt(ctx, schema.Text("are you back?")) // waits for the restart
	turn.Wait()
	fmt.Println(turn.State().Messages[0].Text)
	fmt.Println("restarts:", s.State().Restarts)

	// A UI following the session's feed learns of the restart there.
	for ev := range s.Events(ctx, 0) {
		if ev.Kind == acp.EventRestarted {
			fmt.Printf("feed: %s on connection %d by %s\n", ev.Kind, ev.Restart.Connection, ev.Restart.Method)
			break
		}
	}
	// Output:
	// interrupted: true
	// hello again
	// restarts: 1
	// feed: restarted on connection 2 by session/resume
}
