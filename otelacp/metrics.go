package otelacp

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The metrics. Names follow the GenAI semantic conventions where they
// have one (gen_ai.client.*), the package's own otherwise (acp.client.*).
// An attribute value from the agent is one this package knows, or
// "other" ("_OTHER" for error.type): see bounded.go.
const (
	// MetricTurnDuration: seconds from Session.Prompt to the turn's end,
	// with gen_ai.operation.name=invoke_agent, acp.turn.stop_reason and
	// error.type when the turn failed.
	MetricTurnDuration = "gen_ai.client.operation.duration"
	// MetricTokenUsage: the prompt response's usage tokens per turn, with
	// gen_ai.token.type input or output.
	MetricTokenUsage = "gen_ai.client.token.usage"
	// MetricToolCalls: tool calls by acp.tool_call.kind and
	// acp.tool_call.status, counted when each ends (or its turn does).
	MetricToolCalls = "acp.client.tool_calls"
	// MetricPermissionDuration: seconds a permission request took to be
	// answered, by acp.permission.outcome.
	MetricPermissionDuration = "acp.client.permission.duration"
	// MetricRestarts: agent restarts, by acp.restart.reason
	// (Instrumentation.RecordRestart).
	MetricRestarts = "acp.client.restarts"
)

type instruments struct {
	turn       metric.Float64Histogram
	tokens     metric.Int64Histogram
	tools      metric.Int64Counter
	permission metric.Float64Histogram
	restarts   metric.Int64Counter
}

// The GenAI conventions' bucket advice.
var (
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// newInstruments makes every instrument; one that fails is a no-op and
// its error is returned with the others'.
func newInstruments(m metric.Meter) (instruments, error) {
	var errs []error
	var in instruments
	var err error
	nm := noop.NewMeterProvider().Meter("")
	if in.turn, err = m.Float64Histogram(MetricTurnDuration, metric.WithUnit("s"), metric.WithDescription("GenAI operation duration: ACP prompt turns."), metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		errs = append(errs, err)
		in.turn, _ = nm.Float64Histogram("")
	}
	if in.tokens, err = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"), metric.WithDescription("Tokens used per ACP prompt turn, as the agent reported them."), metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
		errs = append(errs, err)
		in.tokens, _ = nm.Int64Histogram("")
	}
	if in.tools, err = m.Int64Counter(MetricToolCalls, metric.WithUnit("{tool_call}"), metric.WithDescription("Tool calls the agent ran, by kind and final status.")); err != nil {
		errs = append(errs, err)
		in.tools, _ = nm.Int64Counter("")
	}
	if in.permission, err = m.Float64Histogram(MetricPermissionDuration, metric.WithUnit("s"), metric.WithDescription("Time to answer the agent's permission requests."), metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		errs = append(errs, err)
		in.permission, _ = nm.Float64Histogram("")
	}
	if in.restarts, err = m.Int64Counter(MetricRestarts, metric.WithUnit("{restart}"), metric.WithDescription("Agent restarts by the client's supervision.")); err != nil {
		errs = append(errs, err)
		in.restarts, _ = nm.Int64Counter("")
	}
	return in, errors.Join(errs...)
}
