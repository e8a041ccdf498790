package otelacp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/otelacp"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// One turn with a tool call and a permission round, exported with the
// stdout exporter; the JSON it writes is printed as a tree of span names
// and a few attributes (ids and times vary from run to run).
func Example() {
	var out bytes.Buffer
	exp, _ := stdouttrace.New(stdouttrace.WithWriter(&out))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	inst, _ := otelacp.New(&otelacp.Options{TracerProvider: tp, AgentName: "acptest"})

	a := acptest.New(&acptest.Options{OnPrompt: toolTurn})
	fromAgent, toAgent := a.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent},
		&acp.ClientOptions{Observer: inst.Observer(), Permission: acp.AllowAll})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, root := tp.Tracer("example").Start(ctx, "edit a.go")
	s, _ := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	turn, _ := s.Prompt(ctx, schema.Text("edit a.go"))
	turn.Wait()
	c.Close()
	a.Close()
	root.End()
	tp.Shutdown(context.Background())

	printTree(&out, "edit a.go", "gen_ai.operation.name", "gen_ai.tool.call.id", "acp.tool_call.kind", "acp.tool_call.status",
		"acp.permission.outcome", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "acp.turn.tool_calls")
	// Output:
	// edit a.go
	//   session/new (client)
	//   invoke_agent acptest (client) gen_ai.operation.name=invoke_agent gen_ai.response.finish_reasons=[end_turn] gen_ai.usage.input_tokens=100 gen_ai.usage.output_tokens=50 acp.turn.tool_calls=1
	//     session/prompt (client)
	//     execute_tool (internal) gen_ai.operation.name=execute_tool gen_ai.tool.call.id=t1 acp.tool_call.kind=edit acp.tool_call.status=completed
	//       session/request_permission (server) gen_ai.tool.call.id=t1 acp.permission.outcome=selected
}

// span is what printTree reads of the stdout exporter's JSON.
type span struct {
	Name        string
	SpanKind    int
	StartTime   string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
}

// printTree prints the spans of the trace of the span named root as a tree, children
// in the order they started, with the attributes named in keys.
func printTree(out *bytes.Buffer, root string, keys ...string) {
	var spans []span
	dec := json.NewDecoder(out)
	for dec.More() {
		var s span
		if dec.Decode(&s) != nil {
			return
		}
		spans = append(spans, s)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].StartTime < spans[j].StartTime })
	kinds := map[int]string{2: "server", 3: "client", 4: "producer"}
	var walk func(parent, trace string, depth int)
	walk = func(parent, trace string, depth int) {
		for _, s := range spans {
			if s.Parent.SpanID != parent || s.SpanContext.TraceID != trace {
				continue
			}
			line := strings.Repeat("  ", depth) + s.Name
			if k := kinds[s.SpanKind]; k != "" {
				line += " (" + k + ")"
			} else if depth > 0 {
				line += " (internal)"
			}
			for _, k := range keys {
				for _, a := range s.Attributes {
					if a.Key == k {
						v, _ := json.Marshal(a.Value.Value)
						line += " " + k + "=" + strings.ReplaceAll(strings.Trim(string(v), `"`), `"`, "")
					}
				}
			}
			fmt.Println(line)
			walk(s.SpanContext.SpanID, trace, depth+1)
		}
	}
	for _, s := range spans {
		if s.Name == root {
			walk("0000000000000000", s.SpanContext.TraceID, 0)
			return
		}
	}
}
