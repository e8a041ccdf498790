// This file holds the README's and its docs pages' code snippets as
// functions, so that the compiler checks them against the current API
// (readme_sync_test.go checks that the pages show exactly these bodies).
// They are never run: each needs a real agent or the network.
package acp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os/exec"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/registry"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
)

// readmeExample is docs/CLIENT.md's program against a real agent.
func readmeExample(askUser acp.PermissionHandler) {
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: exec.Command("codex-acp")}, &acp.ClientOptions{
		Permission: acp.RememberAlways(askUser),         // or acp.AllowAll, acp.RejectAll (the default)
		FS:         (&workspace.FS{}).Handlers(),        // fs/* confined to the session's directories
		Terminal:   (&workspace.Terminals{}).Handlers(), // terminal/* in process trees, bounded output
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // stdin EOF, SIGTERM, SIGKILL: no process survives

	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/path/to/project"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("Why does TestParse fail?"))
	if err != nil {
		log.Fatal(err)
	}
	for u := range turn.Updates() { // replays, then follows, until the turn ends
		if m, ok := u.(*schema.AgentMessageChunk); ok {
			fmt.Print(schema.TextOf(m.Content))
		}
	}
	stop, err := turn.Wait() // everything before the answer is folded
	fmt.Println(stop, len(turn.State().ToolCalls), err)
}

var _ = readmeExample

// readmeFeed is docs/CLIENT.md's change-feed example.
func readmeFeed(ctx context.Context, turn *acp.Turn, renderTurn func(acp.TurnState), renderCard func(*acp.ToolCallState)) {
	st, seq := turn.Snapshot()
	renderTurn(st) // once, then follow the events after seq
	for ev := range turn.Events(ctx, seq) {
		if tc := ev.ToolCall; tc != nil {
			renderCard(tc) // the tool call after this event
		}
	}
}

// readmeRegistry is docs/REGISTRY.md's example.
func readmeRegistry(ctx context.Context, opts *acp.ClientOptions) error {
	reg, err := registry.Load(ctx, nil) // the official registry, cached
	if err != nil {
		return err
	}
	cmd, err := reg.Command(ctx, "codex-acp") // downloaded once when it ships a binary
	if err != nil {
		return err
	}
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, opts)
	if err != nil {
		return err
	}
	return c.Close()
}

var _, _, _ = readmeFeed, readmeRegistry, readmeRemote

// readmeRemote is the README's remote-agent snippet.
func readmeRemote(ctx context.Context, token string) (*acp.Client, error) {
	tr, err := remote.New("wss://agents.example.com/acp", remote.Options{
		Header: http.Header{"Authorization": {"Bearer " + token}},
	})
	if err != nil {
		return nil, err
	}
	return acp.Connect(ctx, tr, nil)
}
