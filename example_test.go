package acp_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// connect starts an in-process acptest agent and connects a client to it.
func connect(opts *acptest.Options, copts *acp.ClientOptions) (*acp.Client, func()) {
	agent := acptest.New(opts)
	fromAgent, toAgent := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, copts)
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); agent.Close() }
}

// A turn end to end: the agent thinks, runs a tool and answers in two
// chunks of one message; Wait returns once all of it is folded.
func Example() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Think("Looking at the files.")
			t.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "List files", Kind: "read", Status: "in_progress"})
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: "completed"})
			t.SayID("m1", "There are ")
			t.SayID("m1", "3 files.")
			return "end_turn", nil
		},
	}, nil)
	defer done()

	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/work"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("How many files?"))
	if err != nil {
		log.Fatal(err)
	}
	stop, err := turn.Wait()
	if err != nil {
		log.Fatal(err)
	}
	st := turn.State()
	fmt.Println("stop:", stop)
	fmt.Println("thought:", st.Thoughts[0].Text)
	fmt.Printf("tool: %s (%s) %s\n", st.ToolCalls[0].Title, st.ToolCalls[0].Kind, st.ToolCalls[0].Status)
	fmt.Printf("message %s: %s\n", st.Messages[0].MessageID, st.Messages[0].Text)
	// Output:
	// stop: end_turn
	// thought: Looking at the files.
	// tool: List files (read) completed
	// message m1: There are 3 files.
}

// Updates streams a turn as it happens, replaying what came before the
// loop started; it ends when the turn does.
func ExampleTurn_Updates() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Plan(schema.PlanEntry{Content: "Answer", Priority: "high", Status: "in_progress"})
			t.Say("Hello")
			t.Say(", world")
			return "end_turn", nil
		},
	}, nil)
	defer done()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, nil)
	turn, _ := s.Prompt(ctx, schema.Text("Hi"))
	for u := range turn.Updates() {
		switch u := u.(type) {
		case *schema.AgentMessageChunk:
			fmt.Printf("text %q\n", u.Content.(*schema.TextContent).Text)
		default:
			fmt.Println(u.UpdateKind())
		}
	}
	// Output:
	// plan
	// text "Hello"
	// text ", world"
}

// Cancel does the client's part of a cancellation: the pending permission
// request is answered "cancelled", the running tool call is marked
// cancelled, and the turn ends with the agent's stop reason "cancelled".
func ExampleTurn_Cancel() {
	asked := make(chan struct{})
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "rm", Title: "rm -rf build", Kind: "execute", Status: "pending"})
			outcome, _ := t.RequestPermission(map[string]any{"toolCallId": "rm"}, acptest.DefaultPermissionOptions)
			_, cancelled, _ := acptest.ParseOutcome(outcome)
			fmt.Println("agent saw cancelled outcome:", cancelled)
			<-t.Cancelled()
			return "cancelled", nil
		},
	}, &acp.ClientOptions{Permission: func(ctx context.Context, _ *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		close(asked) // a dialog opens...
		<-ctx.Done() // ...and is dismissed by the cancel
		return acp.CancelledOutcome(), nil
	}})
	defer done()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, nil)
	turn, _ := s.Prompt(ctx, schema.Text("Clean up"))
	<-asked
	turn.Cancel()
	stop, err := turn.Wait()
	fmt.Println("stop:", stop, err)
	fmt.Println("tool call:", turn.State().ToolCalls[0].Status)
	// Output:
	// agent saw cancelled outcome: true
	// stop: cancelled <nil>
	// tool call: cancelled
}

// RememberAlways turns an "always allow" answer into a standing rule for
// tool calls of that kind in that session.
func ExampleRememberAlways() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			for i := range 3 {
				id := fmt.Sprint("edit-", i)
				t.ToolCall(acptest.ToolCallSpec{ID: id, Title: "Edit file " + fmt.Sprint(i), Kind: "edit"})
				out, _ := t.RequestPermission(map[string]any{"toolCallId": id}, []schema.PermissionOption{
					{OptionID: "yes", Name: "Allow", Kind: "allow_once"},
					{OptionID: "always", Name: "Always allow", Kind: "allow_always"},
					{OptionID: "no", Name: "Reject", Kind: "reject_once"},
				})
				choice, _, _ := acptest.ParseOutcome(out)
				fmt.Println(id, "->", choice)
			}
			return "end_turn", nil
		},
	}, &acp.ClientOptions{Permission: acp.RememberAlways(func(_ context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		fmt.Println("asking about", req.ToolCall.Title)
		return acp.SelectedOutcome(req.Option(schema.PermissionAllowAlways).OptionID), nil
	})})
	defer done()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, nil)
	turn, _ := s.Prompt(ctx, schema.Text("Refactor"))
	turn.Wait()
	// Output:
	// asking about Edit file 0
	// edit-0 -> always
	// edit-1 -> always
	// edit-2 -> always
}

// The text of whatever block a message chunk carries.
func ExampleTextOf() {
	for _, b := range []schema.ContentBlock{
		schema.Text("See "),
		schema.Link("file:///w/main.go", "main.go"),
		schema.TextResource("file:///w/go.mod", "module w", "text/plain"),
		schema.Image("iVBORw0KGgo=", "image/png"),
	} {
		fmt.Printf("%q\n", schema.TextOf(b))
	}
	// Output:
	// "See "
	// "[main.go](file:///w/main.go)"
	// "module w"
	// ""
}

// A tool call's diff content rendered for review.
func ExampleDiffContent_Unified() {
	old := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	d := &schema.DiffContent{
		Path:    "/w/main.go",
		OldText: &old,
		NewText: "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	}
	fmt.Print(d.Unified(1))
	// Output:
	// --- a/w/main.go
	// +++ b/w/main.go
	// @@ -3,3 +3,3 @@
	//  func main() {
	// -	println("hi")
	// +	println("hello")
	//  }
}

// Items lays out a turn's state as a chat view shows it: messages, thoughts
// and tool calls interleaved in the order they started.
func ExampleTurnState_Items() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Think("Let me look.")
			t.ToolCall(acptest.ToolCallSpec{ID: "read-1", Title: "Read main.go", Kind: schema.ToolKindRead, Status: schema.ToolCallStatusPending})
			t.Say("It is a Go file.")
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "read-1", Status: schema.ToolCallStatusCompleted})
			return "end_turn", nil
		},
	}, nil)
	defer done()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, nil)
	turn, _ := s.Prompt(ctx, schema.Text("What is main.go?"))
	turn.Wait()
	for _, it := range turn.State().Items() {
		switch it.Kind {
		case acp.ItemToolCall:
			fmt.Printf("%s: %s (%s)\n", it.Kind, it.ToolCall.Title, it.ToolCall.Status)
		default:
			fmt.Printf("%s: %s\n", it.Kind, it.Message.Text)
		}
	}
	// Output:
	// thought: Let me look.
	// tool_call: Read main.go (completed)
	// message: It is a Go file.
}

// A snapshot holds what the updates fold to, so it compares with a
// hand-written one; Turn.Updates replays the raw updates.
func ExampleTurnState() {
	c, done := connect(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "Read a.go", Kind: "read", Status: "completed"})
			t.SayID("m1", "Read ")
			t.SayID("m1", "it.")
			return "end_turn", nil
		},
	}, nil)
	defer done()
	ctx := context.Background()
	s, _ := c.NewSession(ctx, nil)
	turn, _ := s.Prompt(ctx, schema.Text("Read a.go"))
	turn.Wait()

	got := turn.State()
	want := acp.TurnState{
		StopReason: schema.StopReasonEndTurn,
		ToolCalls:  []acp.ToolCallState{{ToolCallID: "t1", Title: "Read a.go", Kind: schema.ToolKindRead, Status: schema.ToolCallStatusCompleted}},
		Messages:   []acp.Message{{MessageID: "m1", Text: "Read it.", Order: 1}},
	}
	fmt.Println("raw updates:", len(slices.Collect(turn.Updates())))
	if diff := cmp.Diff(want, got); diff != "" {
		fmt.Printf("state (-want +got):\n%s", diff)
	} else {
		fmt.Println("folded state as expected")
	}
	// Output:
	// raw updates: 3
	// folded state as expected
}
