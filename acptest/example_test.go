package acptest_test

import (
	"bufio"
	"fmt"
	"io"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A scripted turn, driven with raw JSON lines over in-process pipes.
func Example() {
	a := acptest.New(&acptest.Options{
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("you said: " + t.PromptText())
			return "end_turn", nil
		},
	})
	defer a.Close()
	fromAgent, toAgent := a.Pipe()
	defer toAgent.Close()
	out := bufio.NewReader(fromAgent)
	roundTrip := func(line string, replies int) {
		io.WriteString(toAgent, line+"\n")
		for range replies {
			l, _ := out.ReadString('\n')
			fmt.Print(l)
		}
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, 1)
	roundTrip(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`, 1)
	roundTrip(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"hi"}]}}`, 2)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"loadSession":true,"promptCapabilities":{"audio":true,"embeddedContext":true,"image":true},"sessionCapabilities":{"close":{},"delete":{},"list":{},"resume":{}}},"agentInfo":{"name":"acptest","version":"0.0.0"},"authMethods":[],"protocolVersion":1}}
	// {"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess-1"}}
	// {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"content":{"text":"you said: hi","type":"text"},"sessionUpdate":"agent_message_chunk"}}}
	// {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
}
