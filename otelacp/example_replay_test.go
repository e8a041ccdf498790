package otelacp_test

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/otelacp"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The span tree of one turn of a real agent: the e2e suite's recording of
// claude-agent-acp 0.101.0 running a shell command after the user allowed
// it (testdata/transcripts/e2e-claude-allow.jsonl, replayed by acptest;
// the client sends what the recorded one did).
func Example_recordedAgent() {
	var out bytes.Buffer
	exp, _ := stdouttrace.New(stdouttrace.WithWriter(&out))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	inst, _ := otelacp.New(&otelacp.Options{TracerProvider: tp, AgentName: "claude-agent-acp"})

	f, err := os.Open("../testdata/transcripts/e2e-claude-allow.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := acptest.NewReplay(f)
	f.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	fromAgent, toAgent := a.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent},
		&acp.ClientOptions{Observer: inst.Observer(), Permission: acp.AllowAll})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, root := tp.Tracer("example").Start(ctx, "create made.txt")
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/e2e/work"})
	if err != nil {
		fmt.Println(err)
		return
	}
	turn, _ := s.Prompt(ctx, schema.Text("create made.txt"))
	if _, err := turn.Wait(); err != nil {
		fmt.Println(err)
	}
	c.Close()
	a.Close()
	root.End()
	tp.Shutdown(context.Background())

	printTree(&out, "create made.txt", "gen_ai.operation.name", "gen_ai.tool.call.id", "acp.tool_call.kind", "acp.tool_call.status",
		"acp.permission.outcome", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "acp.turn.tool_calls")
	// Output:
	// create made.txt
	//   session/new (client)
	//   invoke_agent claude-agent-acp (client) gen_ai.operation.name=invoke_agent gen_ai.response.finish_reasons=[end_turn] gen_ai.usage.input_tokens=200 gen_ai.usage.output_tokens=20 acp.turn.tool_calls=1
	//     session/prompt (client)
	//     execute_tool (internal) gen_ai.operation.name=execute_tool gen_ai.tool.call.id=call_make acp.tool_call.kind=execute acp.tool_call.status=completed
	//       session/request_permission (server) gen_ai.tool.call.id=call_make acp.permission.outcome=selected
}
