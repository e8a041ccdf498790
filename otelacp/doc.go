// Package otelacp maps the acp client's [acp.Observer] onto OpenTelemetry:
// spans for prompt turns, tool calls, permission requests and every request
// between client and agent; metrics for turns, tokens, tool calls,
// permission answers and agent restarts; and W3C trace context carried in
// params._meta both ways, as the ACP meta-propagation convention reserves
// (traceparent, tracestate, baggage). It is a module of its own so that the
// acp package does not depend on OpenTelemetry.
//
// Use it by setting the Observer of an Instrumentation in the client's
// options:
//
//	inst, err := otelacp.New(&otelacp.Options{AgentName: "claude"})
//	if err != nil {
//		log.Print(err) // an instrument could not be made; the rest works
//	}
//	c, err := acp.Connect(ctx, transport, &acp.ClientOptions{Observer: inst.Observer()})
//
// # Spans
//
// A turn (Session.Prompt until it ends) is one span, "invoke_agent" (or
// "invoke_agent {AgentName}"), a child of the span in the Prompt context:
//
//	invoke_agent                      client   gen_ai.operation.name=invoke_agent, gen_ai.conversation.id,
//	│                                          gen_ai.response.finish_reasons, gen_ai.usage.input_tokens/output_tokens,
//	│                                          acp.turn.updates, acp.turn.tool_calls, acp.context.used_tokens/size_tokens
//	├── session/prompt                client   rpc.method; its context is the traceparent the agent receives
//	├── execute_tool                  internal gen_ai.tool.call.id, gen_ai.tool.name, acp.tool_call.kind/status/title;
//	│   │                                      from the tool call's first update to its final status (or the turn's end)
//	│   └── session/request_permission server  acp.permission.outcome/option_id/option_kind; lasts until it is answered
//	└── fs/read_text_file             server   (any other agent request of the session)
//
// Every other request the client sends (session/new, initialize, Call, …)
// is a client span of its own, a child of its context's span;
// notifications are producer spans. A request's span is named after its
// method when the protocol defines it, else "_OTHER" (rpc.method=_OTHER,
// rpc.method_original the method). An agent request whose params._meta
// carries a traceparent is a child of the agent's span instead, linked to
// the turn's (or tool call's) span, so an agent that traces its work shows
// the client's answers inside its own trace.
//
// # Metrics
//
// gen_ai.client.operation.duration (turns, seconds), gen_ai.client.token.usage
// (the prompt response's input and output tokens), acp.client.tool_calls
// (by kind and final status), acp.client.permission.duration (by outcome),
// acp.client.restarts (recorded by [Instrumentation.RecordRestart]).
//
// Attribute names follow the OpenTelemetry GenAI semantic conventions of
// semconv v1.41.0 where they have one; the acp.* names are this package's
// (see the Attr constants).
//
// # Bounds
//
// The agent chooses most of what is recorded, so none of it decides how
// much is: span names are a fixed set (the agent's tool and method names
// are attributes), every string attribute, status and exception message
// is cut to [MaxAttributeBytes], and a metric attribute from the agent
// (tool kind and status, stop reason, permission outcome, error.type) is
// one of the values this package knows or "other" ("_OTHER" for
// error.type), so the number of series is bounded by those sets. Spans
// keep the agent's value, clipped. A turn holds at most
// Options.MaxOpenToolSpans tool call spans open: past it the oldest
// running one ends, unfinished.
package otelacp
