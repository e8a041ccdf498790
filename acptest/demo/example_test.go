package demo_test

// Runnable examples of the demo agent in-process.

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest/demo"
	"github.com/acpclient/acp/schema"
)

// The demo agent in-process, as a test of a host would run it: one turn
// that the client's permission policy answers, then the turn's folded
// state. Its sessions stay in memory (the zero Options).
func Example() {
	a := demo.New(nil)
	defer a.Close()
	fromAgent, toAgent := a.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &acp.ClientOptions{
		Permission: acp.RejectAll, // the demo asks before its edit
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: os.TempDir()})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hello"))
	if err != nil {
		log.Fatal(err)
	}
	stop, err := turn.Wait()
	if err != nil {
		log.Fatal(err)
	}
	st := turn.State()
	fmt.Println("stop:", stop)
	for _, tc := range st.ToolCalls {
		fmt.Printf("tool: %s (%s) %s\n", tc.Title, tc.Kind, tc.Status)
	}
	for _, m := range st.Messages {
		fmt.Println("said:", strings.TrimSpace(m.Text))
	}
	// Output:
	// stop: end_turn
	// tool: Read the workspace (read) completed
	// tool: Write acp-demo.txt (edit) failed
	// said: Understood: I did not write acp-demo.txt.
	// said: You said: "hello".
}

// With a state directory, a second agent (a restarted process) resumes
// the first one's session and replays its history on load.
func ExampleNew_stateDir() {
	dir, err := os.MkdirTemp("", "acp-demo-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	connect := func() (*acp.Client, func()) {
		a := demo.New(&demo.Options{StateDir: dir})
		fromAgent, toAgent := a.Pipe()
		c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil)
		if err != nil {
			log.Fatal(err)
		}
		return c, func() { c.Close(); a.Close() }
	}

	c, done := connect()
	s, _ := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
	turn, _ := s.Prompt(ctx, schema.Text("/echo remember this"))
	turn.Wait()
	id := s.ID()
	done()

	c, done = connect()
	defer done()
	s, err = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: dir})
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range s.State().Outside {
		if m, ok := u.Update.(*schema.AgentMessageChunk); ok {
			fmt.Println("replayed:", schema.TextOf(m.Content))
		}
	}
	// Output:
	// replayed: remember this
}

// A live turn from the change feed, as a host renders it: the answer as
// it streams, and each tool call's card when its status changes. The
// demo stands in for a real agent.
func Example_changeFeed() {
	a := demo.New(nil)
	defer a.Close()
	fromAgent, toAgent := a.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent},
		&acp.ClientOptions{Permission: acp.AllowAll})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: os.TempDir()})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hello"))
	if err != nil {
		log.Fatal(err)
	}
	// Events(ctx, 0) replays the turn from its start and follows it; a
	// host that renders turn.Snapshot() first follows from its seq.
	shown := map[string]schema.ToolCallStatus{}
	for ev := range turn.Events(ctx, 0) {
		if m, ok := ev.Update.(*schema.AgentMessageChunk); ok {
			fmt.Print(schema.TextOf(m.Content))
		}
		if tc := ev.ToolCall; tc != nil && shown[tc.ToolCallID] != tc.Status {
			shown[tc.ToolCallID] = tc.Status
			fmt.Printf("[tool] %s: %s\n", tc.Title, tc.Status)
		}
	}
	stop, _ := turn.Wait()
	fmt.Println("\nstop:", stop)
	// Output:
	// [tool] Read the workspace: in_progress
	// [tool] Read the workspace: completed
	// [tool] Write acp-demo.txt: pending
	// [tool] Write acp-demo.txt: in_progress
	// [tool] Write acp-demo.txt: failed
	// I did not write acp-demo.txt: you allowed it, but the client does not let me write files (with the acp command, run it with --fs). You said: "hello".
	// stop: end_turn
}
