// This file holds the package's runnable example: a client reaching an
// agent through the gateway over both profiles, all in one process.
package remote_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/gateway"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// A remote client, end to end in one process: the gateway serves a
// scripted agent (here in-process; gateway.CommandAgent runs a command) on
// an httptest server, and the client reaches it over Streamable HTTP
// (http://) and over WebSocket (ws://). Plain http and ws are allowed to
// loopback only; a real endpoint is https:// or wss://, with a token in
// Options.Header.
func ExampleNew() {
	agent := acptest.New(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("you said: " + t.PromptText())
			return "end_turn", nil
		},
	})
	defer agent.Close()
	gw := gateway.New((&acptest.Transport{Agent: agent}).Connect, nil) // one agent connection per ACP connection
	srv := httptest.NewServer(gw)
	defer srv.Close()
	defer gw.Close()

	ctx := context.Background()
	for _, url := range []string{srv.URL + "/acp", "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp"} {
		tr, err := remote.New(url, remote.Options{})
		if err != nil {
			log.Fatal(err)
		}
		c, err := acp.Connect(ctx, tr, nil)
		if err != nil {
			log.Fatal(err)
		}
		s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
		if err != nil {
			log.Fatal(err)
		}
		turn, err := s.Prompt(ctx, schema.Text("hello over "+url[:strings.Index(url, ":")]))
		if err != nil {
			log.Fatal(err)
		}
		stop, err := turn.Wait()
		fmt.Println(turn.State().Messages[0].Text, stop, err)
		c.Close()
	}
	// Output:
	// you said: hello over http end_turn <nil>
	// you said: hello over ws end_turn <nil>
}
