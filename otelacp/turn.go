package otelacp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// turnSpan is one turn's span and its tool calls' spans. Update and End
// come from the reader goroutine (End also from others, never at once);
// parentFor from the goroutines serving agent requests: mu guards tools.
type turnSpan struct {
	in    *Instrumentation
	o     *observer
	sid   string
	ctx   context.Context // carries span
	span  trace.Span
	start time.Time

	mu      sync.Mutex
	updates int
	started int // tool calls started
	tools   map[string]*toolSpan
	// running are the tool calls whose span is open, in the order they
	// started (with ended ones not yet skipped at the front); open counts
	// them. Past Options.MaxOpenToolSpans the oldest is ended, unfinished:
	// an agent that starts tool calls and never ends them must not hold a
	// span each until the turn ends.
	running []*toolSpan
	open    int
	used    *schema.UsageUpdate
}

// toolSpan is one tool call of a turn. Once ended it keeps only its span
// context (for permission requests about it), not the span.
type toolSpan struct {
	span   trace.Span
	sc     trace.SpanContext
	kind   schema.ToolKind
	status schema.ToolCallStatus
	ended  bool
}

func (o *observer) turn(ctx context.Context, ti acp.TurnInfo) (context.Context, *acp.TurnObserver) {
	in := o.in
	name := "invoke_agent"
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, str(semconv.GenAIConversationIDKey, ti.SessionID)}
	if in.opts.AgentName != "" {
		name += " " + in.opts.AgentName
		attrs = append(attrs, semconv.GenAIAgentName(in.opts.AgentName))
	}
	if in.opts.ProviderName != "" {
		attrs = append(attrs, semconv.GenAIProviderNameKey.String(in.opts.ProviderName))
	}
	ts := &turnSpan{in: in, o: o, sid: ti.SessionID, start: time.Now(), tools: map[string]*toolSpan{}}
	ts.ctx, ts.span = in.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	o.mu.Lock()
	o.turns[ti.SessionID] = ts
	o.mu.Unlock()
	return ts.ctx, &acp.TurnObserver{Update: ts.update, End: ts.end}
}

func (ts *turnSpan) update(u schema.Update) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.updates++
	switch u := u.(type) {
	case *schema.ToolCall:
		tc := ts.toolLocked(u.ToolCallID, u.Title, u.Name, u.Kind)
		ts.statusLocked(tc, u.Status)
	case *schema.ToolCallUpdate:
		var title, name string
		var kind schema.ToolKind
		if u.Title != nil {
			title = *u.Title
		}
		if u.Name != nil {
			name = *u.Name
		}
		if u.Kind != nil {
			kind = *u.Kind
		}
		tc := ts.toolLocked(u.ToolCallID, title, name, kind)
		if u.Status != nil {
			ts.statusLocked(tc, *u.Status)
		}
	case *schema.UsageUpdate:
		ts.used = u
	}
}

// toolLocked returns the tool call id, starting its span at its first
// news; later news may name it better.
func (ts *turnSpan) toolLocked(id, title, name string, kind schema.ToolKind) *toolSpan {
	tc := ts.tools[id]
	if tc == nil {
		ts.started++
		tc = &toolSpan{kind: schema.ToolKindOther}
		if ts.open >= ts.in.maxOpenTools() {
			ts.evictLocked()
		}
		_, tc.span = ts.in.tracer.Start(ts.ctx, "execute_tool", trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, str(semconv.GenAIToolCallIDKey, id), str(semconv.GenAIConversationIDKey, ts.sid)))
		tc.sc = tc.span.SpanContext()
		ts.tools[id] = tc
		ts.running = append(ts.running, tc)
		ts.open++
	}
	if tc.ended {
		return tc
	}
	// The span keeps its fixed name: the tool's name is the agent's to
	// choose, and a span name is a low-cardinality key of every backend.
	if name != "" {
		tc.span.SetAttributes(str(semconv.GenAIToolNameKey, name))
	}
	if title != "" {
		tc.span.SetAttributes(str(AttrToolTitle, title))
	}
	if kind != "" {
		tc.kind = kind
	}
	return tc
}

// evictLocked ends the span of the oldest tool call still running, as
// unfinished, to make room for another.
func (ts *turnSpan) evictLocked() {
	for len(ts.running) > 0 {
		tc := ts.running[0]
		ts.running[0] = nil
		ts.running = ts.running[1:]
		if !tc.ended {
			ts.endToolLocked(tc, true)
			return
		}
	}
}

// statusLocked records a tool call's status; a final one ends its span.
func (ts *turnSpan) statusLocked(tc *toolSpan, st schema.ToolCallStatus) {
	if tc.ended || st == "" {
		return
	}
	tc.status = st
	switch st {
	case schema.ToolCallStatusCompleted, schema.ToolCallStatusFailed, schema.ToolCallStatusCancelled:
		ts.endToolLocked(tc, false)
	}
}

func (ts *turnSpan) endToolLocked(tc *toolSpan, unfinished bool) {
	tc.ended = true
	status := tc.status
	if status == "" {
		status = schema.ToolCallStatusPending
	}
	// The span says what the agent said; the metric one of the kinds and
	// statuses known, or "other".
	tc.span.SetAttributes(str(AttrToolKind, string(tc.kind)), str(AttrToolStatus, string(status)))
	if unfinished {
		tc.span.SetAttributes(AttrToolUnfinished.Bool(true))
	}
	if status == schema.ToolCallStatusFailed {
		tc.span.SetStatus(codes.Error, "the tool call failed")
	}
	tc.span.End()
	tc.span = nil // the SDK's span, with its attributes, is the exporter's now
	ts.open--
	ts.in.m.tools.Add(ts.ctx, 1, metric.WithAttributes(AttrToolKind.String(known(tc.kind, toolKinds)), AttrToolStatus.String(known(status, toolStatuses))))
}

func (ts *turnSpan) end(e acp.TurnEnd) {
	in := ts.in
	o := ts.o
	o.mu.Lock()
	if o.turns[ts.sid] == ts {
		delete(o.turns, ts.sid)
	}
	o.mu.Unlock()

	ts.mu.Lock()
	for _, tc := range ts.running {
		if !tc.ended {
			ts.endToolLocked(tc, true)
		}
	}
	span := ts.span
	span.SetAttributes(AttrTurnUpdates.Int(ts.updates), AttrTurnToolCalls.Int(ts.started))
	if u := ts.used; u != nil {
		span.SetAttributes(AttrContextUsed.Int64(int64(u.Used)), AttrContextSize.Int64(int64(u.Size)))
		if u.Cost != nil {
			span.SetAttributes(AttrCostAmount.Float64(u.Cost.Amount), str(AttrCostCurrency, u.Cost.Currency))
		}
	}
	ts.mu.Unlock()

	metricAttrs := []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent}
	if in.opts.ProviderName != "" {
		metricAttrs = append(metricAttrs, semconv.GenAIProviderNameKey.String(in.opts.ProviderName))
	}
	if e.StopReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(clip(string(e.StopReason))))
		metricAttrs = append(metricAttrs, AttrStopReason.String(known(e.StopReason, stopReasons)))
	}
	if e.StopReason == schema.StopReasonCancelled {
		span.SetAttributes(AttrTurnCancelled.Bool(true))
	}
	if u := e.Usage; u != nil {
		span.SetAttributes(semconv.GenAIUsageInputTokens(int(u.InputTokens)), semconv.GenAIUsageOutputTokens(int(u.OutputTokens)), AttrUsageTotalTokens.Int64(int64(u.TotalTokens)))
		if u.ThoughtTokens != nil {
			span.SetAttributes(AttrUsageThoughtTokens.Int64(int64(*u.ThoughtTokens)))
		}
		if u.CachedReadTokens != nil {
			span.SetAttributes(semconv.GenAIUsageCacheReadInputTokens(int(*u.CachedReadTokens)))
		}
		if u.CachedWriteTokens != nil {
			span.SetAttributes(semconv.GenAIUsageCacheCreationInputTokens(int(*u.CachedWriteTokens)))
		}
		in.m.tokens.Record(ts.ctx, int64(u.InputTokens), metric.WithAttributes(append(metricAttrs[:len(metricAttrs):len(metricAttrs)], semconv.GenAITokenTypeInput)...))
		in.m.tokens.Record(ts.ctx, int64(u.OutputTokens), metric.WithAttributes(append(metricAttrs[:len(metricAttrs):len(metricAttrs)], semconv.GenAITokenTypeOutput)...))
	}
	if e.Err != nil {
		endWithError(span, e.Err)
		metricAttrs = append(metricAttrs, semconv.ErrorTypeKey.String(errorType(e.Err)))
	} else if e.AgentError != nil {
		span.SetStatus(codes.Error, clip(e.AgentError.Message))
	}
	in.m.turn.Record(ts.ctx, time.Since(ts.start).Seconds(), metric.WithAttributes(metricAttrs...))
	span.End()
}

// parentFor returns the span an agent request of the turn's session is a
// child of: the tool call a permission request is about while it runs, the
// turn otherwise.
func (ts *turnSpan) parentFor(perm *permissionInfo) trace.SpanContext {
	if perm != nil && perm.toolCallID != "" {
		ts.mu.Lock()
		tc := ts.tools[perm.toolCallID]
		ts.mu.Unlock()
		if tc != nil {
			return tc.sc
		}
	}
	return ts.span.SpanContext()
}

// permissionInfo is what a permission request's span needs of its params.
type permissionInfo struct {
	toolCallID string
	kinds      map[string]string // option id to kind
}

func decodePermission(params json.RawMessage) *permissionInfo {
	var p struct {
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
		Options []schema.PermissionOption `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	pi := &permissionInfo{toolCallID: p.ToolCall.ToolCallID, kinds: map[string]string{}}
	for _, o := range p.Options {
		pi.kinds[o.OptionID] = string(o.Kind)
	}
	return pi
}
