// This file holds the runnable examples of the change feed and of the
// ready permission policies, as pkg.go.dev shows them.
package acp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A UI opens on a turn that is already running: it renders the snapshot
// once, then follows the events after it. An event that changed a tool
// call carries the tool call as merged after it, so the UI redraws that one
// card, its diff included, without merging updates itself.
func ExampleTurn_Events() {
	uiOpen := make(chan struct{})
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "read-1", Title: "Read main.go", Kind: "read", Status: "in_progress"})
			<-uiOpen // the UI opens here, mid-turn
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "read-1", Status: "completed"})
			t.ToolCall(acptest.ToolCallSpec{ID: "edit-1", Title: "Edit main.go", Kind: "edit", Status: "in_progress",
				Content: []any{acptest.Diff("/w/main.go", nil, "package main\n")}})
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "edit-1", Status: "completed"})
			t.Say("Done.")
			return "end_turn", nil
		},
	}, nil)
	defer done()
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("Fix main.go"))
	if err != nil {
		log.Fatal(err)
	}
	// Wait until the first card exists, as a UI opened later would find it.
	if _, err := turn.WaitFor(ctx, func(ev acp.Event) bool { return ev.ToolCall != nil }); err != nil {
		log.Fatal(err)
	}

	card := func(tc *acp.ToolCallState) {
		fmt.Printf("  card %s: %s [%s]", tc.ToolCallID, tc.Title, tc.Status)
		for _, c := range tc.Content {
			if d, ok := c.(*schema.DiffContent); ok {
				fmt.Printf(" diff of %s", d.Path)
			}
		}
		fmt.Println()
	}
	st, seq := turn.Snapshot()
	fmt.Println("snapshot at event", seq)
	for i := range st.ToolCalls {
		card(&st.ToolCalls[i])
	}
	close(uiOpen)
	for ev := range turn.Events(ctx, seq) {
		fmt.Printf("event %d: %s\n", ev.Seq, ev.Kind)
		switch {
		case ev.ToolCall != nil:
			card(ev.ToolCall)
		case ev.End != nil:
			fmt.Println("  stop:", ev.End.StopReason)
		default:
			if m, ok := ev.Update.(*schema.AgentMessageChunk); ok {
				fmt.Printf("  text %q\n", schema.TextOf(m.Content))
			}
		}
	}
	// Output:
	// snapshot at event 1
	//   card read-1: Read main.go [in_progress]
	// event 2: update
	//   card read-1: Read main.go [completed]
	// event 3: update
	//   card edit-1: Edit main.go [in_progress] diff of /w/main.go
	// event 4: update
	//   card edit-1: Edit main.go [completed] diff of /w/main.go
	// event 5: update
	//   text "Done."
	// event 6: end
	//   stop: end_turn
}

// The ready policies answer the same request each their way: RejectAll
// (what nil ClientOptions do), AllowAll, CancelAll, and RememberAlways,
// which asks once and turns an "always" answer into a standing rule for
// that kind of tool call in the session. OneAtATime shows one dialog at a
// time.
func ExamplePermissionHandler() {
	ask := func(_ context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		fmt.Printf("  the user is asked %q and picks always\n", req.Title)
		return acp.SelectedOutcome(req.Option(schema.PermissionAllowAlways).OptionID), nil
	}
	policies := []struct {
		name   string
		policy acp.PermissionHandler
	}{
		{"RejectAll", acp.RejectAll},
		{"AllowAll", acp.AllowAll},
		{"CancelAll", acp.CancelAll},
		{"RememberAlways", acp.OneAtATime(acp.RememberAlways(ask))},
	}
	for _, p := range policies {
		fmt.Println(p.name + ":")
		c, done := connect(&acptest.Options{
			OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
				for i := range 2 {
					id := fmt.Sprint("edit-", i)
					t.ToolCall(acptest.ToolCallSpec{ID: id, Title: "Edit file", Kind: "edit", Status: "pending"})
					out, err := t.RequestPermission(acptest.ToolCallSpec{ID: id, Title: "Edit the file?"}, []schema.PermissionOption{
						{OptionID: "once", Name: "Allow", Kind: schema.PermissionAllowOnce},
						{OptionID: "always", Name: "Always allow", Kind: schema.PermissionAllowAlways},
						{OptionID: "no", Name: "Reject", Kind: schema.PermissionRejectOnce},
					})
					if err != nil {
						return "", err
					}
					choice, cancelled, _ := acptest.ParseOutcome(out)
					if cancelled {
						choice = "(cancelled)"
					}
					fmt.Printf("  %s -> %s\n", id, choice)
				}
				return "end_turn", nil
			},
		}, &acp.ClientOptions{Permission: p.policy})
		ctx := context.Background()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		turn, err := s.Prompt(ctx, schema.Text("Edit twice"))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			log.Fatal(err)
		}
		done()
	}
	// Output:
	// RejectAll:
	//   edit-0 -> no
	//   edit-1 -> no
	// AllowAll:
	//   edit-0 -> once
	//   edit-1 -> once
	// CancelAll:
	//   edit-0 -> (cancelled)
	//   edit-1 -> (cancelled)
	// RememberAlways:
	//   the user is asked "Edit the file?" and picks always
	//   edit-0 -> always
	//   edit-1 -> always
}

// A terminal shows a message's text, not its chunks: EventsMerged gives
// the chunks of one message that follow one another as one event, so a
// renderer that fell behind (here, one that starts after the turn) writes
// the text in a few writes, not one a chunk.
func ExampleTurn_EventsMerged() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			for _, s := range []string{"Hel", "lo, ", "wor", "ld", "!"} {
				t.Say(s)
			}
			return "end_turn", nil
		},
	}, nil)
	defer done()
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("Say hello"))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		log.Fatal(err)
	}
	for ev := range turn.EventsMerged(ctx, 0) {
		switch u := ev.Update.(type) {
		case *schema.AgentMessageChunk:
			fmt.Printf("event %d, joining %d chunks: %q\n", ev.Seq, ev.Joined, u.Content.(*schema.TextContent).Text)
		case nil:
			fmt.Printf("event %d: %s\n", ev.Seq, ev.Kind)
		}
	}
	// Output:
	// event 5, joining 5 chunks: "Hello, world!"
	// event 6: end
}
