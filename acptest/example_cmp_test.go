// This file holds the test-shaped example: a scripted agent, the client
// under test, and its folded state compared with go-cmp.
package acptest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// What a test of an integration looks like: script the agent, drive the
// client, and compare the turn's folded state with the one you expect.
// States are plain values, so cmp.Diff compares them whole; in a test,
// acptest.Connect(t, agentOpts, clientOpts) does the connecting below and
// closes both at the end, and a non-empty diff goes to t.Errorf.
func Example_cmpDiff() {
	agent := acptest.New(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "edit-1", Title: "Edit go.mod", Kind: "edit", Status: "pending",
				Content: []any{acptest.Diff("/w/go.mod", nil, "module w\n")}})
			out, err := t.RequestPermission(acptest.ToolCallSpec{ID: "edit-1"}, acptest.DefaultPermissionOptions)
			if err != nil {
				return "", err
			}
			if choice, _, _ := acptest.ParseOutcome(out); choice != "allow" {
				t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit-1", Status: "failed"})
				t.SayID("m1", "Not edited.")
				return "end_turn", nil
			}
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit-1", Status: "completed"})
			t.SayID("m1", "Edited.")
			return "end_turn", nil
		},
	})
	defer agent.Close()
	fromAgent, toAgent := agent.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil) // nil options: every permission request is rejected
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("Add a go.mod"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		log.Fatal(err)
	}

	want := acp.TurnState{
		StopReason: schema.StopReasonEndTurn,
		ToolCalls: []acp.ToolCallState{{
			ToolCallID: "edit-1", Title: "Edit go.mod", Kind: schema.ToolKindEdit, Status: schema.ToolCallStatusFailed,
			Content: []schema.ToolCallContent{&schema.DiffContent{Path: "/w/go.mod", NewText: "module w\n"}},
		}},
		Messages: []acp.Message{{MessageID: "m1", Text: "Not edited.", Order: 1}},
	}
	diff := cmp.Diff(want, turn.State())
	fmt.Println("state as expected:", diff == "")
	if diff != "" {
		fmt.Println(diff)
	}
	// Output:
	// state as expected: true
}
