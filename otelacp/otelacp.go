package otelacp

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/acpclient/acp/otelacp"

// Options configures an [Instrumentation]. The zero value uses the global
// providers and the W3C propagators.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator writes the trace context into outgoing params._meta and
	// reads it from the agent's requests. Nil means W3C trace context and
	// baggage (traceparent, tracestate, baggage: the keys the ACP
	// meta-propagation convention reserves), whatever the global
	// propagator is; pass otel.GetTextMapPropagator() to use that one.
	Propagator propagation.TextMapPropagator
	// AgentName is the gen_ai.agent.name of turn spans and names them
	// "invoke_agent {AgentName}"; "" leaves it out.
	AgentName string
	// ProviderName, if set, is the gen_ai.provider.name of turn spans and
	// metrics (the model provider behind the agent, when known).
	ProviderName string
	// MaxOpenToolSpans bounds the tool call spans of a turn open at once
	// (0: DefaultMaxOpenToolSpans). When the agent starts one more, the
	// oldest still running is ended there, with acp.tool_call.unfinished
	// and its status so far, and counted in acp.client.tool_calls; later
	// news of it is ignored.
	MaxOpenToolSpans int
}

// DefaultMaxOpenToolSpans is the default of Options.MaxOpenToolSpans:
// more tool calls than any agent runs at once, few enough that an agent
// starting them without end holds a bounded number of spans.
const DefaultMaxOpenToolSpans = 1000

func (in *Instrumentation) maxOpenTools() int {
	if n := in.opts.MaxOpenToolSpans; n > 0 {
		return n
	}
	return DefaultMaxOpenToolSpans
}

// Instrumentation maps an [acp.Client]'s [acp.Observer] onto OpenTelemetry.
// One Instrumentation may serve several clients, each with an Observer of
// its own; it is safe for concurrent use.
type Instrumentation struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	opts   Options
	m      instruments
}

// observer is the bookkeeping of one client's Observer: its running turns,
// by session id (session ids are unique on one connection only).
type observer struct {
	in    *Instrumentation
	mu    sync.Mutex
	turns map[string]*turnSpan
}

// New returns an Instrumentation; its Observer goes in
// [acp.ClientOptions.Observer]. The error is one of creating an
// instrument, in which case the Instrumentation still works, without it.
func New(opts *Options) (*Instrumentation, error) {
	in := &Instrumentation{}
	if opts != nil {
		in.opts = *opts
	}
	tp := in.opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := in.opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	in.prop = in.opts.Propagator
	if in.prop == nil {
		in.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	in.tracer = tp.Tracer(ScopeName, trace.WithInstrumentationVersion(acp.Version), trace.WithSchemaURL(semconv.SchemaURL))
	var err error
	in.m, err = newInstruments(mp.Meter(ScopeName, metric.WithInstrumentationVersion(acp.Version), metric.WithSchemaURL(semconv.SchemaURL)))
	return in, err
}

// Observer returns a hook to set as [acp.ClientOptions.Observer]. Each call
// returns a new one, which keeps track of its client's running turns: give
// every client its own.
func (in *Instrumentation) Observer() *acp.Observer {
	o := &observer{in: in, turns: map[string]*turnSpan{}}
	return &acp.Observer{
		Call:   in.call,
		Inject: in.inject,
		Serve:  o.serve,
		Turn:   o.turn,
		Restart: func(ev acp.RestartEvent) {
			// One count per restart that ended: the agent came back, or
			// the client gave up on it. The steps between are not counted.
			if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
				in.RecordRestart(context.Background(), string(ev.Phase))
			}
		},
	}
}

// RecordRestart counts one restart of an agent (the acp.client.restarts
// counter, with acp.restart.reason). The Observer calls it for each restart
// of a supervised client (ClientOptions.Restart) that ended, with reason
// "restored" or "gave_up"; call it yourself for restarts made elsewhere.
func (in *Instrumentation) RecordRestart(ctx context.Context, reason string) {
	in.m.restarts.Add(ctx, 1, metric.WithAttributes(AttrRestartReason.String(reason)))
}

func (in *Instrumentation) inject(ctx context.Context, set func(key, value string)) {
	in.prop.Inject(ctx, setCarrier(set))
}

// setCarrier is an inject-only TextMapCarrier.
type setCarrier func(key, value string)

func (f setCarrier) Get(string) string { return "" }
func (f setCarrier) Set(k, v string)   { f(k, v) }
func (f setCarrier) Keys() []string    { return nil }

// call starts the span of a request (or notification) to the agent.
func (in *Instrumentation) call(ctx context.Context, ci acp.CallInfo) (context.Context, func(error)) {
	name, attrs := method(ci.Method)
	if ci.SessionID != "" {
		attrs = append(attrs, str(semconv.GenAIConversationIDKey, ci.SessionID))
	}
	kind := trace.SpanKindClient
	if ci.Notification {
		kind = trace.SpanKindProducer
	}
	ctx, span := in.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		endWithError(span, err)
		span.End()
	}
}

// serve starts the span of an agent request: a child of the agent's trace
// when the request's _meta carries one (linked to the turn), else of the
// session's running turn (or of the tool call a permission request is
// about).
func (o *observer) serve(ctx context.Context, si acp.ServeInfo) (context.Context, func(any, error)) {
	in := o.in
	name, attrs := method(si.Method)
	attrs = append(attrs, str(semconv.JSONRPCRequestIDKey, si.RequestID))
	if si.SessionID != "" {
		attrs = append(attrs, str(semconv.GenAIConversationIDKey, si.SessionID))
	}
	var perm *permissionInfo
	if si.Method == schema.MethodSessionRequestPermission {
		perm = decodePermission(si.Params)
		if perm.toolCallID != "" {
			attrs = append(attrs, str(semconv.GenAIToolCallIDKey, perm.toolCallID))
		}
	}
	local := o.parentOf(si.SessionID, perm)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...)}
	parent := ctx
	if len(si.Meta) > 0 {
		if ext := in.prop.Extract(ctx, propagation.MapCarrier(si.Meta)); trace.SpanContextFromContext(ext).IsValid() {
			parent = ext
			if local.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: local}))
			}
		}
	}
	if parent == ctx && local.IsValid() {
		parent = trace.ContextWithSpanContext(ctx, local)
	}
	start := time.Now()
	ctx, span := in.tracer.Start(parent, name, opts...)
	return ctx, func(res any, err error) {
		if perm != nil {
			outcome := "error"
			if r, ok := res.(*schema.RequestPermissionResponse); ok && err == nil {
				outcome = string(r.Outcome.Kind)
				span.SetAttributes(str(AttrPermissionOutcome, outcome))
				if r.Outcome.OptionID != "" {
					span.SetAttributes(str(AttrPermissionOptionID, r.Outcome.OptionID))
					if k := perm.kinds[r.Outcome.OptionID]; k != "" {
						span.SetAttributes(str(AttrPermissionOptionKind, k))
					}
				}
			}
			in.m.permission.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(AttrPermissionOutcome.String(known(outcome, permissionOutcomes))))
		}
		endWithError(span, err)
		span.End()
	}
}

// parentOf returns the span context an agent request of session sid is a
// child of without a trace of the agent's: its tool call's span for a
// permission request about a running tool call, else the turn's.
func (o *observer) parentOf(sid string, perm *permissionInfo) trace.SpanContext {
	o.mu.Lock()
	ts := o.turns[sid]
	o.mu.Unlock()
	if ts == nil {
		return trace.SpanContext{}
	}
	return ts.parentFor(perm)
}

// endWithError marks span failed by err, if any. The message (often the
// agent's words) is clipped, in the exception event as in the status.
func endWithError(span trace.Span, err error) {
	if err == nil {
		return
	}
	msg := clip(err.Error())
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(semconv.ExceptionType(errorTypeName(err)), semconv.ExceptionMessage(msg)))
	span.SetStatus(codes.Error, msg)
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
}

// errorTypeName is the exception.type of err, as Span.RecordError would
// say it (which cannot be told to clip the message).
func errorTypeName(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String() // a pointer, as *schema.Error
	}
	return t.PkgPath() + "." + t.Name()
}

// errorType is the error.type of err: the agent's JSON-RPC error code
// (one of the protocol's, else _OTHER), or the kind of local failure.
func errorType(err error) string {
	var ae *schema.Error
	switch {
	case errors.As(err, &ae):
		return errorCode(ae.Code)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, acp.ErrConnClosed):
		return "connection_closed"
	case errors.Is(err, acp.ErrCancelGrace):
		return "cancel_grace"
	}
	return "_OTHER"
}
