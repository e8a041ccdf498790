package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Client.Authenticate refuses the legacy terminal logins of Copilot and Qwen
// (decoded as TerminalAuthMethod) without sending authenticate.
func TestAuthenticateRefusesLegacyTerminal(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[` + strings.ReplaceAll(copilotMethod, "COMMAND", "/usr/bin/copilot") + `,` + qwenMethod + `]}}`
	a := acptest.Replay([]acptest.Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)},
		{Dir: "<", Msg: json.RawMessage(init)},
	})
	defer a.Close()
	r, w := a.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, id := range []string{"copilot-login", "openai"} {
		if _, err := c.Authenticate(context.Background(), &schema.AuthenticateRequest{MethodID: id}); err == nil || !strings.Contains(err.Error(), "terminal method") {
			t.Errorf("%s: %v", id, err)
		}
	}
	if n := len(a.Received("authenticate")); n != 0 {
		t.Errorf("authenticate sent %d times", n)
	}
}
