package acp_test

import (
	"context"
	"fmt"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// The same code runs a turn against a v1 and a v2 agent: offer v2, take
// what the agent picks. With a v2 agent the turn ends at its idle
// state_update; Wait, State and the handlers do not change.
func ExampleClientOptions_protocolVersion() {
	for _, version := range []int{1, 2} {
		agent := acptest.New(&acptest.Options{Version: version, OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("hello")
			return schema.StopReasonEndTurn, nil
		}})
		fromAgent, toAgent := agent.Pipe()
		ctx := context.Background()
		c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &acp.ClientOptions{ProtocolVersion: 2})
		if err != nil {
			fmt.Println(err)
			return
		}
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		turn, err := s.Prompt(ctx, schema.Text("hi"))
		if err != nil {
			fmt.Println(err)
			return
		}
		stop, err := turn.Wait()
		fmt.Println(c.InitializeResponse().ProtocolVersion, stop, err, turn.State().Messages[0].Text)
		c.Close()
		agent.Close()
	}
	// Output:
	// 1 end_turn <nil> hello
	// 2 end_turn <nil> hello
}
