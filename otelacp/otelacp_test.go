package otelacp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/otelacp"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// setup returns an Instrumentation recording into memory.
func setup(t *testing.T, opts otelacp.Options) (*otelacp.Instrumentation, *tracetest.InMemoryExporter, *sdkmetric.ManualReader, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	opts.TracerProvider, opts.MeterProvider = tp, mp
	inst, err := otelacp.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return inst, exp, reader, tp
}

// toolTurn is an agent turn with a tool call whose permission is asked,
// granted, and which then completes; the prompt response reports usage.
func toolTurn(tt *acptest.Turn) (schema.StopReason, error) {
	tt.Say("looking")
	tt.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "Edit a.go", Kind: schema.ToolKindEdit, Status: schema.ToolCallStatusPending})
	if _, err := tt.AskPermission(acptest.ToolCallSpec{ID: "t1"}); err != nil {
		return "", err
	}
	tt.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: schema.ToolCallStatusInProgress})
	tt.UpdateToolCall(acptest.ToolCallSpec{ID: "t1", Status: schema.ToolCallStatusCompleted})
	tt.Usage(1200, 200000)
	tt.SetResult("usage", map[string]any{"totalTokens": 150, "inputTokens": 100, "outputTokens": 50})
	return schema.StopReasonEndTurn, nil
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// byName returns the spans of trace id by name (the first of each name).
func byName(spans tracetest.SpanStubs, id trace.TraceID) map[string]tracetest.SpanStub {
	m := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID() != id {
			continue
		}
		if _, ok := m[s.Name]; !ok {
			m[s.Name] = s
		}
	}
	return m
}

// A turn with a tool call and a permission round is a span tree under the
// caller's span: the turn, its session/prompt request, the tool call and,
// under it, the permission request; the metrics count the same.
func TestTurnSpanTree(t *testing.T) {
	inst, exp, reader, tp := setup(t, otelacp.Options{AgentName: "acptest"})
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: toolTurn},
		&acp.ClientOptions{Observer: inst.Observer(), Permission: acp.AllowAll})
	ctx, root := tp.Tracer("test").Start(context.Background(), "caller")
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("edit a.go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	c.Close() // every span of the connection has ended
	root.End()

	spans := byName(exp.GetSpans(), root.SpanContext().TraceID())
	parentOf := func(name string) string {
		p := spans[name].Parent.SpanID()
		for n, s := range spans {
			if s.SpanContext.SpanID() == p {
				return n
			}
		}
		return "?"
	}
	for child, parent := range map[string]string{
		"session/new":                "caller",
		"invoke_agent acptest":       "caller",
		"session/prompt":             "invoke_agent acptest",
		"execute_tool":               "invoke_agent acptest",
		"session/request_permission": "execute_tool",
	} {
		if _, ok := spans[child]; !ok {
			t.Errorf("no span %q; have %v", child, keys(spans))
			continue
		}
		if got := parentOf(child); got != parent {
			t.Errorf("%s is a child of %s, want %s", child, got, parent)
		}
	}
	ta := attrs(spans["invoke_agent acptest"])
	for k, want := range map[attribute.Key]string{
		"gen_ai.operation.name":          "invoke_agent",
		"gen_ai.conversation.id":         s.ID(),
		"gen_ai.agent.name":              "acptest",
		"gen_ai.response.finish_reasons": `["end_turn"]`,
		"gen_ai.usage.input_tokens":      "100",
		"gen_ai.usage.output_tokens":     "50",
		"acp.turn.updates":               "5",
		"acp.turn.tool_calls":            "1",
		"acp.context.used_tokens":        "1200",
	} {
		if got := ta[k].String(); got != want {
			t.Errorf("turn span %s=%q, want %q", k, got, want)
		}
	}
	tool := spans["execute_tool"]
	xa := attrs(tool)
	if xa["gen_ai.tool.call.id"].AsString() != "t1" || xa["acp.tool_call.kind"].AsString() != "edit" ||
		xa["acp.tool_call.status"].AsString() != "completed" || xa["acp.tool_call.title"].AsString() != "Edit a.go" {
		t.Errorf("tool span attributes %v", xa)
	}
	if tool.SpanKind != trace.SpanKindInternal || !tool.EndTime.After(tool.StartTime) {
		t.Errorf("tool span kind %v, %v..%v", tool.SpanKind, tool.StartTime, tool.EndTime)
	}
	pa := attrs(spans["session/request_permission"])
	if pa["acp.permission.outcome"].AsString() != "selected" || pa["acp.permission.option_kind"].AsString() != "allow_once" ||
		pa["gen_ai.tool.call.id"].AsString() != "t1" || spans["session/request_permission"].SpanKind != trace.SpanKindServer {
		t.Errorf("permission span attributes %v", pa)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := metricsOf(rm)
	for name, want := range map[string]string{
		otelacp.MetricTurnDuration:       "count=1 acp.turn.stop_reason=end_turn,gen_ai.operation.name=invoke_agent",
		otelacp.MetricToolCalls:          "sum=1 acp.tool_call.kind=edit,acp.tool_call.status=completed",
		otelacp.MetricPermissionDuration: "count=1 acp.permission.outcome=selected",
		otelacp.MetricTokenUsage:         "sum=100 acp.turn.stop_reason=end_turn,gen_ai.operation.name=invoke_agent,gen_ai.token.type=input; sum=50 acp.turn.stop_reason=end_turn,gen_ai.operation.name=invoke_agent,gen_ai.token.type=output",
	} {
		if got[name] != want {
			t.Errorf("metric %s: %q, want %q", name, got[name], want)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// metricsOf sums up every data point: counts of histograms, sums of
// counters, each with its attributes, sorted.
func metricsOf(rm metricdata.ResourceMetrics) map[string]string {
	out := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var pts []string
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					pts = append(pts, fmt.Sprintf("count=%d %s", p.Count, p.Attributes.Encoded(attribute.DefaultEncoder())))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					pts = append(pts, fmt.Sprintf("sum=%d %s", p.Sum, p.Attributes.Encoded(attribute.DefaultEncoder())))
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					pts = append(pts, fmt.Sprintf("sum=%d %s", p.Value, p.Attributes.Encoded(attribute.DefaultEncoder())))
				}
			}
			sort.Strings(pts)
			out[m.Name] = strings.Join(pts, "; ")
		}
	}
	return out
}

// The caller's trace reaches the agent as _meta.traceparent of
// session/prompt (the request span's context), and an agent request that
// carries the agent's traceparent is served in a span of the agent's
// trace, linked to the turn.
func TestTraceparentRoundTrip(t *testing.T) {
	const agentTrace, agentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	inst, exp, _, tp := setup(t, otelacp.Options{})
	seen := make(chan string, 1)
	c, a := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		_, err := tt.Call(context.Background(), "_trace/ping", map[string]any{
			"sessionId": tt.SessionID(),
			"_meta":     map[string]any{"traceparent": "00-" + agentTrace + "-" + agentSpan + "-01", "tracestate": "agent=1"},
		})
		return "", err
	}}, &acp.ClientOptions{Observer: inst.Observer(), ExtMethod: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		seen <- trace.SpanContextFromContext(ctx).TraceID().String()
		return map[string]any{}, nil
	}})
	ctx, root := tp.Tracer("test").Start(context.Background(), "caller")
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	root.End()

	var p struct {
		Meta struct {
			Traceparent string `json:"traceparent"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(a.Received(schema.MethodSessionPrompt)[0], &p); err != nil {
		t.Fatal(err)
	}
	mine := byName(exp.GetSpans(), root.SpanContext().TraceID())
	prompt := mine["session/prompt"].SpanContext
	if want := fmt.Sprintf("00-%s-%s-01", prompt.TraceID(), prompt.SpanID()); p.Meta.Traceparent != want {
		t.Errorf("the agent got traceparent %q, want %q (the session/prompt span)", p.Meta.Traceparent, want)
	}
	if got := <-seen; got != agentTrace {
		t.Errorf("the handler's context is in trace %s, want the agent's %s", got, agentTrace)
	}
	var id trace.TraceID
	id, _ = trace.TraceIDFromHex(agentTrace)
	served, ok := byName(exp.GetSpans(), id)["_OTHER"] // an extension method
	if !ok || attrs(served)["rpc.method_original"].AsString() != "_trace/ping" {
		t.Fatalf("no span of the agent's request in the agent's trace")
	}
	if served.Parent.SpanID().String() != agentSpan || !served.Parent.IsRemote() || served.Parent.TraceState().Get("agent") != "1" {
		t.Errorf("served span's parent %v", served.Parent)
	}
	turnSpan := mine["invoke_agent"].SpanContext
	if len(served.Links) != 1 || served.Links[0].SpanContext.SpanID() != turnSpan.SpanID() {
		t.Errorf("served span links %+v, want the turn %v", served.Links, turnSpan.SpanID())
	}
}

// A failed turn and a tool call still running at its end: the turn span
// has the error, the tool span ends with the turn, marked unfinished.
func TestTurnErrorEndsOpenToolCalls(t *testing.T) {
	inst, exp, reader, _ := setup(t, otelacp.Options{})
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		tt.ToolCall(acptest.ToolCallSpec{ID: "t1", Title: "ls", Kind: schema.ToolKindExecute, Status: schema.ToolCallStatusInProgress})
		return "", acptest.Errorf(-32603, "model overloaded")
	}}, &acp.ClientOptions{Observer: inst.Observer()})
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	turn.Wait()
	c.Close()
	var turnSpan, tool tracetest.SpanStub
	for _, sp := range exp.GetSpans() {
		switch sp.Name {
		case "invoke_agent":
			turnSpan = sp
		case "execute_tool":
			tool = sp
		}
	}
	if turnSpan.Status.Code.String() != "Error" || attrs(turnSpan)["error.type"].AsString() != "-32603" {
		t.Errorf("turn span status %v, attributes %v", turnSpan.Status, attrs(turnSpan))
	}
	if a := attrs(tool); a["acp.tool_call.unfinished"].AsBool() != true || a["acp.tool_call.status"].AsString() != "in_progress" {
		t.Errorf("tool span attributes %v", a)
	}
	var rm metricdata.ResourceMetrics
	reader.Collect(context.Background(), &rm)
	if got := metricsOf(rm)[otelacp.MetricToolCalls]; got != "sum=1 acp.tool_call.kind=execute,acp.tool_call.status=in_progress" {
		t.Errorf("tool calls metric %q", got)
	}
	if got := metricsOf(rm)[otelacp.MetricTurnDuration]; got != "count=1 error.type=-32603,gen_ai.operation.name=invoke_agent" {
		t.Errorf("turn metric %q", got)
	}
}

// RecordRestart counts restarts by reason.
func TestRecordRestart(t *testing.T) {
	inst, _, reader, _ := setup(t, otelacp.Options{})
	inst.RecordRestart(context.Background(), "exited")
	inst.RecordRestart(context.Background(), "exited")
	var rm metricdata.ResourceMetrics
	reader.Collect(context.Background(), &rm)
	if got := metricsOf(rm)[otelacp.MetricRestarts]; got != "sum=2 acp.restart.reason=exited" {
		t.Errorf("restarts %q", got)
	}
}

// Two clients on one Instrumentation, whose agents both name their session
// sess-1: each agent request is under its own client's turn.
func TestClientsShareInstrumentation(t *testing.T) {
	inst, exp, _, _ := setup(t, otelacp.Options{})
	release := make(chan struct{})
	ping := func(tt *acptest.Turn) error {
		_, err := tt.Call(context.Background(), "_x/ping", map[string]any{"sessionId": tt.SessionID()})
		return err
	}
	ext := func(context.Context, string, json.RawMessage) (any, error) { return map[string]any{}, nil }
	ca, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		<-release
		return "", ping(tt)
	}}, &acp.ClientOptions{Observer: inst.Observer(), ExtMethod: ext})
	cb, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		return "", ping(tt)
	}}, &acp.ClientOptions{Observer: inst.Observer(), ExtMethod: ext})
	var turns []*acp.Turn
	for _, c := range []*acp.Client{ca, cb} {
		s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.Prompt(context.Background(), schema.Text("hi"))
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn)
	}
	if _, err := turns[1].Wait(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if _, err := turns[0].Wait(); err != nil {
		t.Fatal(err)
	}
	ca.Close()
	cb.Close()
	spans := exp.GetSpans()
	turnOf := map[trace.SpanID]bool{}
	for _, s := range spans {
		if s.Name == "invoke_agent" {
			turnOf[s.SpanContext.SpanID()] = true
		}
	}
	pings := 0
	for _, s := range spans {
		if s.Name != "_OTHER" || attrs(s)["rpc.method_original"].AsString() != "_x/ping" {
			continue
		}
		pings++
		if !turnOf[s.Parent.SpanID()] {
			t.Errorf("a ping is not under a turn (parent %v)", s.Parent.SpanID())
		}
		for _, o := range spans {
			if o.Name == "invoke_agent" && o.SpanContext.SpanID() == s.Parent.SpanID() && o.SpanContext.TraceID() != s.SpanContext.TraceID() {
				t.Error("a ping is in another trace than its turn")
			}
		}
	}
	if pings != 2 || len(turnOf) != 2 {
		t.Errorf("%d pings, %d turns", pings, len(turnOf))
	}
}
