package otelacp

import "go.opentelemetry.io/otel/attribute"

// Attributes of this package's own, where the OpenTelemetry GenAI semantic
// conventions (semconv v1.41.0) have none. Where they have one it is used:
// gen_ai.operation.name (invoke_agent for turns, execute_tool for tool
// calls), gen_ai.conversation.id (the session id), gen_ai.agent.name,
// gen_ai.provider.name, gen_ai.response.finish_reasons (the stop reason),
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens,
// gen_ai.tool.name and gen_ai.tool.call.id, error.type; rpc.system.name
// (jsonrpc), rpc.method and jsonrpc.request.id on request spans.
const (
	// AttrTurnUpdates: the number of updates the agent sent during a turn.
	AttrTurnUpdates = attribute.Key("acp.turn.updates")
	// AttrTurnToolCalls: the number of tool calls a turn started.
	AttrTurnToolCalls = attribute.Key("acp.turn.tool_calls")
	// AttrTurnCancelled: the client cancelled the turn.
	AttrTurnCancelled = attribute.Key("acp.turn.cancelled")
	// AttrStopReason: the turn's stop reason, on the turn metric (one of
	// the acp package's StopReason constants, or "other").
	AttrStopReason = attribute.Key("acp.turn.stop_reason")
	// AttrUsageTotalTokens, AttrUsageThoughtTokens, AttrUsageCachedRead:
	// the prompt response's usage beyond input and output tokens.
	AttrUsageTotalTokens   = attribute.Key("acp.usage.total_tokens")
	AttrUsageThoughtTokens = attribute.Key("acp.usage.thought_tokens")
	// AttrContextUsed and AttrContextSize: the last usage_update of the
	// turn (tokens in the context window, and its size).
	AttrContextUsed = attribute.Key("acp.context.used_tokens")
	AttrContextSize = attribute.Key("acp.context.size_tokens")
	// AttrCostAmount and AttrCostCurrency: the session's cumulative cost,
	// from the last usage_update that had one.
	AttrCostAmount   = attribute.Key("acp.cost.amount")
	AttrCostCurrency = attribute.Key("acp.cost.currency")

	// AttrToolKind and AttrToolStatus: a tool call's kind (read, edit,
	// execute, …) and its last status (completed, failed, or where it was
	// when the turn ended).
	AttrToolKind   = attribute.Key("acp.tool_call.kind")
	AttrToolStatus = attribute.Key("acp.tool_call.status")
	// AttrToolTitle: the tool call's title as the agent worded it.
	AttrToolTitle = attribute.Key("acp.tool_call.title")
	// AttrToolUnfinished: the turn ended before the tool call reached a
	// final status.
	AttrToolUnfinished = attribute.Key("acp.tool_call.unfinished")

	// AttrPermissionOutcome: selected, cancelled, or error (the handler
	// failed); AttrPermissionOptionID and AttrPermissionOptionKind the
	// chosen option.
	AttrPermissionOutcome    = attribute.Key("acp.permission.outcome")
	AttrPermissionOptionID   = attribute.Key("acp.permission.option_id")
	AttrPermissionOptionKind = attribute.Key("acp.permission.option_kind")

	// AttrRestartReason: why an agent was restarted (acp.client.restarts).
	AttrRestartReason = attribute.Key("acp.restart.reason")
)
