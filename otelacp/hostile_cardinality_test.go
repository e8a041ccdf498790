package otelacp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
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
)

// huge is a string of 1 MiB, for every field an agent fills.
var huge = strings.Repeat("h", 1<<20)

// cardinalityTurn is a turn of an agent that names everything itself:
// per turn, 300 tool calls each with a name, kind and status of its own,
// 50 requests of methods of its own, and a stop reason of its own; a
// tool call named and titled in 1 MiB, a request of a 1 MiB method, a
// 1 MiB stop reason; the third turn fails with an error code of its own
// and a 1 MiB message.
func cardinalityTurn(tt *acptest.Turn) (schema.StopReason, error) {
	n := tt.Number()
	for i := range 300 {
		id := fmt.Sprintf("t%d-%d", n, i)
		tt.Update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "title " + id,
			"name": "tool " + id, "kind": "kind " + id, "status": "pending"})
		tt.Update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "status " + id})
	}
	for i := range 50 {
		if _, err := tt.Call(context.Background(), fmt.Sprintf("_x/m%d-%d", n, i), map[string]any{"sessionId": tt.SessionID()}); err != nil {
			return "", err
		}
	}
	// One 1 MiB string a turn, in each place an agent can put one (the
	// race detector makes each costly).
	switch n {
	case 1:
		tt.Update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "big", "title": huge, "name": huge, "kind": huge[:64<<10], "status": huge[:64<<10]})
	case 2:
		if _, err := tt.Call(context.Background(), "_x/"+huge, map[string]any{"sessionId": tt.SessionID()}); err != nil {
			return "", err
		}
	}
	switch n {
	case 1:
		return schema.StopReason(fmt.Sprintf("stop %d", n)), nil
	case 2:
		return schema.StopReason(huge), nil
	}
	return "", &acptest.Error{Code: 770001, Message: huge}
}

// TestHostileCardinality: whatever an agent names, the spans have a fixed
// set of names, every string attribute, status and exception message is
// at most MaxAttributeBytes, and the metrics have a bounded number of
// series (each attribute one of the values known, or "other"). Before,
// three such turns made 1 056 span names (one of 1 MiB) and 906 series.
func TestHostileCardinality(t *testing.T) {
	inst, exp, reader, _ := setup(t, otelacp.Options{})
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: cardinalityTurn}, &acp.ClientOptions{Observer: inst.Observer(),
		ExtMethod: func(context.Context, string, json.RawMessage) (any, error) { return map[string]any{}, nil }})
	ctx := context.Background()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		turn, err := s.Prompt(ctx, schema.Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		turn.Wait()
	}
	c.Close() // every span has ended

	spans := exp.GetSpans()
	names := map[string]int{}
	for _, sp := range spans {
		names[sp.Name]++
		checkClipped(t, sp)
	}
	series := 0
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range pointAttrs(m) {
				series++
				for _, kv := range set.ToSlice() {
					if len(kv.Value.String()) > 64 {
						t.Errorf("metric %s: attribute %s is %d bytes", m.Name, kv.Key, len(kv.Value.String()))
					}
				}
			}
		}
	}
	t.Logf("%d spans, %d distinct names; %d metric series", len(spans), len(names), series)
	if len(spans) < 3*(300+50)+2 {
		t.Fatalf("%d spans: the script did not run", len(spans))
	}
	want := map[string]bool{"session/new": true, "invoke_agent": true, "session/prompt": true, "execute_tool": true, "_OTHER": true, "initialize": true}
	for n := range names {
		if !want[n] {
			t.Errorf("a span named %.80q", n)
		}
	}
	// Tool calls: kind × status, each "other" here; turns: three stop
	// reasons ("other" twice, and the failed turn's error.type _OTHER);
	// tokens: none; requests of the client's handler: none.
	if series > 8 {
		t.Errorf("%d metric series, want at most 8", series)
	}
	for _, sp := range spans {
		a := attrs(sp)
		switch sp.Name {
		case "execute_tool":
			if a["gen_ai.tool.name"].AsString() == "" || a["acp.tool_call.kind"].AsString() == "" {
				t.Errorf("a tool span without the agent's name or kind: %v", sp.Attributes)
			}
		case "_OTHER":
			if !strings.HasPrefix(a["rpc.method_original"].AsString(), "_x/") {
				t.Errorf("an extension request's span without its method: %v", sp.Attributes)
			}
		}
	}
}

// checkClipped fails t for a string of sp over MaxAttributeBytes.
func checkClipped(t *testing.T, sp tracetest.SpanStub) {
	t.Helper()
	check := func(what string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			vs := []string{kv.Value.String()}
			if kv.Value.Type() == attribute.STRINGSLICE {
				vs = kv.Value.AsStringSlice()
			}
			for _, v := range vs {
				if len(v) > otelacp.MaxAttributeBytes {
					t.Errorf("span %.40q: %s %s is %d bytes", sp.Name, what, kv.Key, len(v))
				}
			}
		}
	}
	check("attribute", sp.Attributes)
	for _, ev := range sp.Events {
		check("event "+ev.Name, ev.Attributes)
	}
	if n := len(sp.Status.Description); n > otelacp.MaxAttributeBytes {
		t.Errorf("span %.40q: a status of %d bytes", sp.Name, n)
	}
	if n := len(sp.Name); n > 64 {
		t.Errorf("a span name of %d bytes", n)
	}
}

// pointAttrs returns the attribute sets of m's data points: one a series.
func pointAttrs(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// liveSpans is a SpanProcessor that tracks how many execute_tool spans
// are open at once.
type liveSpans struct {
	mu        sync.Mutex
	live, max int
}

func (l *liveSpans) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if s.Name() == "execute_tool" {
		l.mu.Lock()
		l.live++
		l.max = max(l.max, l.live)
		l.mu.Unlock()
	}
}

func (l *liveSpans) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.Name() == "execute_tool" {
		l.mu.Lock()
		l.live--
		l.mu.Unlock()
	}
}
func (l *liveSpans) Shutdown(context.Context) error   { return nil }
func (l *liveSpans) ForceFlush(context.Context) error { return nil }

// TestHostileToolCallsNeverEnd: an agent that starts tool calls and never
// ends them holds at most MaxOpenToolSpans spans open; the oldest is
// ended, unfinished, to make room, and every call still has its span and
// its count. (Before, each stayed open, with its attributes, until the
// turn ended: 5000 here.)
func TestHostileToolCallsNeverEnd(t *testing.T) {
	const n, bound = 5000, 100
	exp := tracetest.NewInMemoryExporter()
	live := &liveSpans{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(live), sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	inst, err := otelacp.New(&otelacp.Options{TracerProvider: tp, MeterProvider: mp, MaxOpenToolSpans: bound})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		for i := range n {
			tt.ToolCall(acptest.ToolCallSpec{ID: fmt.Sprint("t", i), Title: "forever", Kind: schema.ToolKindExecute, Status: schema.ToolCallStatusInProgress})
		}
		// News of an evicted call is ignored; of a running one, kept.
		tt.UpdateToolCall(acptest.ToolCallSpec{ID: "t0", Status: schema.ToolCallStatusCompleted})
		tt.UpdateToolCall(acptest.ToolCallSpec{ID: fmt.Sprint("t", n-1), Status: schema.ToolCallStatusCompleted})
		return schema.StopReasonEndTurn, nil
	}}, &acp.ClientOptions{Observer: inst.Observer()})
	ctx := context.Background()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	live.mu.Lock()
	most := live.max
	live.mu.Unlock()
	if most > bound {
		t.Errorf("%d tool spans open at once, want at most %d", most, bound)
	}
	status := map[string]int{}
	for _, sp := range exp.GetSpans() {
		if sp.Name == "execute_tool" {
			a := attrs(sp)
			status[a["acp.tool_call.status"].AsString()+map[bool]string{true: " unfinished"}[a["acp.tool_call.unfinished"].AsBool()]]++
		}
	}
	if want := map[string]int{"in_progress unfinished": n - 1, "completed": 1}; !maps.Equal(status, want) {
		t.Errorf("tool spans by status: %v, want %v", status, want)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == otelacp.MetricToolCalls {
				for _, p := range d.DataPoints {
					total += p.Value
				}
			}
		}
	}
	if total != n {
		t.Errorf("acp.client.tool_calls counted %d, want %d", total, n)
	}
}
