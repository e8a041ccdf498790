// This file holds the rule table: every rule graded, with its level, the
// spec page it comes from, what is observed and in which scenario.
// docs/CHECK.md lists the same table (a test keeps them equal).

package conformance

import "slices"

// Rule is one requirement of the protocol that a run grades.
type Rule struct {
	ID    string `json:"id"`
	Area  string `json:"area"`
	Level Level  `json:"level"`
	// Spec is the page and anchor, relative to
	// https://agentclientprotocol.com/protocol/vN/ (SpecV2 when the v2
	// page differs; empty SpecV2 means the same page).
	Spec   string `json:"spec"`
	SpecV2 string `json:"specV2,omitempty"`
	Title  string `json:"title"`
	// Observed says what the grader looks at.
	Observed string `json:"observed"`
	// Scenario names the scenario that exercises it ("all" for rules
	// graded on every frame of every scenario).
	Scenario string `json:"scenario"`
	// Versions the rule applies to; nil means 1 and 2.
	Versions []int `json:"versions,omitempty"`
}

func (r *Rule) appliesTo(v int) bool { return r.Versions == nil || slices.Contains(r.Versions, v) }

func (r *Rule) spec(v int) string {
	page := r.Spec
	if v == 2 && r.SpecV2 != "" {
		page = r.SpecV2
	}
	if page[0] == '/' { // outside the protocol pages (JSON-RPC 2.0 itself)
		return page[1:]
	}
	if v == 2 {
		return "protocol/v2/" + page
	}
	return "protocol/v1/" + page
}

var v1only, v2only = []int{1}, []int{2}

// rules is the table, in report order, grouped by area.
var rules = []Rule{
	// initialization
	{ID: "init.answers", Area: "initialization", Level: Must, Spec: "initialization#initialization",
		Title:    "the agent answers initialize",
		Observed: "a result (not an error, not silence) to an initialize offering the version graded", Scenario: "negotiate"},
	{ID: "init.version", Area: "initialization", Level: Must, Spec: "initialization#version-negotiation",
		Title:    "the agent answers the offered version if it supports it, else its latest",
		Observed: "protocolVersion answered to offers of 1, 2 and 99 on fresh connections: an integer, equal to the offer or to the agent's latest (the answer to 99); an error only where no common version exists", Scenario: "negotiate"},
	{ID: "init.shape", Area: "initialization", Level: Must, Spec: "initialization#agent-capabilities",
		Title:    "the initialize result has the schema's shape",
		Observed: "v1: agentCapabilities an object, loadSession and promptCapabilities.{image,audio,embeddedContext} booleans, authMethods entries with string id and name; v2: info with name and version, capabilities an object", Scenario: "negotiate"},
	{ID: "init.agent-info", Area: "initialization", Level: Should, Spec: "initialization#implementation-information",
		Title:    "the agent names itself",
		Observed: "agentInfo with a name and a version", Scenario: "negotiate", Versions: v1only},

	// JSON-RPC framing
	{ID: "jsonrpc.lines", Area: "jsonrpc", Level: Must, Spec: "transports#stdio",
		Title:    "every line the agent writes is one JSON-RPC 2.0 message",
		Observed: `each line from the agent, in every scenario: one JSON object with "jsonrpc":"2.0" (no blank lines, no log output, no embedded newlines)`, Scenario: "all"},
	{ID: "jsonrpc.responses", Area: "jsonrpc", Level: Must, Spec: "/www.jsonrpc.org/specification#response_object",
		Title:    "each response answers one request of the client's, once, with result or error",
		Observed: "every response's id is that of a request the client sent and not yet answered; exactly one of result and error; an error has an integer code and a string message", Scenario: "all"},
	{ID: "jsonrpc.method-not-found", Area: "jsonrpc", Level: Must, Spec: "/www.jsonrpc.org/specification#error_object",
		Title:    "an unknown method is answered with -32601",
		Observed: "the error code answered to a request for conformance/no_such_method", Scenario: "probes"},
	{ID: "jsonrpc.invalid-params", Area: "jsonrpc", Level: Must, Spec: "/www.jsonrpc.org/specification#error_object",
		Title:    "invalid params are answered with -32602",
		Observed: `the error code answered to session/new with {"cwd":42,"mcpServers":"none"}`, Scenario: "probes"},

	// authentication
	{ID: "auth.methods", Area: "authentication", Level: Must, Spec: "authentication#advertising-authentication",
		Title:    "an agent that requires authentication offers a way to authenticate",
		Observed: "when session/new fails with auth_required (-32000), authMethods is not empty, and with Options.AuthMethod the authenticate call succeeds and session/new then works", Scenario: "session"},

	// session setup
	{ID: "session.new", Area: "session", Level: Must, Spec: "session-setup#creating-a-session",
		Title:    "session/new answers a unique session id",
		Observed: "two session/new results: non-empty string sessionIds that differ", Scenario: "session"},
	{ID: "session.updates-known", Area: "session", Level: Must, Spec: "prompt-turn#3-agent-reports-output", SpecV2: "prompt-lifecycle#3-agent-reports-output",
		Title:    "session/update names a session the agent opened on this connection",
		Observed: "the sessionId of every session/update and agent request, in every scenario, against the ids session/new, load and resume answered (or were asked for)", Scenario: "all"},
	{ID: "session.load", Area: "session", Level: Must, Spec: "session-setup#loading-sessions",
		Title:    "an agent advertising loadSession loads a session and replays it",
		Observed: "on a new connection, session/load of a session prompted before answers a result after replaying the conversation (the prompt's text as a user message) as session/update with that sessionId", Scenario: "restore", Versions: v1only},
	{ID: "session.resume", Area: "session", Level: Must, Spec: "session-setup#resuming-sessions",
		Title:    "an agent advertising resume resumes without replaying",
		Observed: "on a new connection, session/resume (v2: without replayFrom) of a session prompted before answers a result, with no message, thought, tool call or plan update for the session before it", Scenario: "restore"},
	{ID: "session.list", Area: "session", Level: Must, Spec: "session-list",
		Title:    "an agent advertising list lists sessions",
		Observed: "session/list answers {sessions:[...]} with a string sessionId and cwd in each", Scenario: "restore"},
	{ID: "session.close", Area: "session", Level: Must, Spec: "session-setup#closing-active-sessions",
		Title:    "an agent advertising close closes a session",
		Observed: "session/close of an open session answers a result", Scenario: "restore"},

	// v2 restore: replay cursors and the end of a session
	{ID: "v2.resume-replay", Area: "session", Level: Must, Spec: "session-setup#resuming-sessions",
		Title:    "session/resume from the start replays the conversation before answering",
		Observed: `on a new connection, session/resume with replayFrom {"type":"start"} of a session prompted before sends, before its response, the prompt as a user message and an agent message for that session`, Scenario: "restore", Versions: v2only},
	{ID: "v2.resume-ids", Area: "session", Level: Must, Spec: "session-setup#resuming-sessions",
		Title:    "replayed messages keep their message ids",
		Observed: "every replayed message has a messageId; the replayed user message has the messageId session/prompt answered, and each replayed agent message one the live turn used for an agent message (a message is its id: updates are upserts keyed by it)", Scenario: "restore", Versions: v2only},
	{ID: "v2.resume-state", Area: "session", Level: Must, Spec: "draft/session-setup#current-state-synchronization",
		Title:    "a resume ends with the current-state snapshot",
		Observed: "a state_update for the session after the last replayed update and before the session/resume response, with and without replayFrom (the v2 the agents speak has no replay_complete: the snapshot ends a replay)", Scenario: "restore", Versions: v2only},
	{ID: "v2.close", Area: "session", Level: Must, Spec: "session-setup#closing-active-sessions",
		Title:    "a closed session gets nothing more on the connection",
		Observed: "after a session/close result, a session/prompt for the session is answered with an error, and no session/update for it follows on that connection (until it is resumed there), in every scenario; the background scenario closes a session while its background work is listed (closing stops it) and watches a second (conformance.LateWindow) for anything more", Scenario: "restore, background", Versions: v2only},

	// prompt turn
	{ID: "prompt.text", Area: "prompt", Level: Must, Spec: "content#text-content",
		Title:    "the agent accepts a text prompt",
		Observed: "a session/prompt of one text block is answered with a result and the turn ends", Scenario: "session"},
	{ID: "prompt.resource-link", Area: "prompt", Level: Must, Spec: "initialization#prompt-capabilities",
		Title:    "the agent accepts a resource link in a prompt",
		Observed: "a session/prompt of a text block and a resource_link to a file in the workspace is answered with a result", Scenario: "session"},
	{ID: "prompt.capabilities", Area: "prompt", Level: Must, Spec: "initialization#prompt-capabilities",
		Title:    "the agent accepts the content types it advertises",
		Observed: "a prompt with an image, audio or embedded resource block, each only when promptCapabilities advertises it, is answered with a result", Scenario: "session"},
	{ID: "prompt.stop-reason", Area: "prompt", Level: Must, Spec: "prompt-turn#stop-reasons", SpecV2: "prompt-lifecycle#stop-reasons",
		Title:    "each turn ends with a valid stop reason",
		Observed: "v1: the session/prompt result's stopReason is one of end_turn, max_tokens, max_turn_requests, refusal, cancelled; v2: the idle state_update's stopReason is one of those or starts with _", Scenario: "session"},
	{ID: "prompt.updates-in-turn", Area: "prompt", Level: Should, Spec: "prompt-turn#4-check-for-completion",
		Title:    "a turn's output comes before its end",
		Observed: "no message, thought, tool call or plan update for the session between the session/prompt response and the next prompt", Scenario: "session", Versions: v1only},
	{ID: "prompt.updates-valid", Area: "prompt", Level: Must, Spec: "schema#sessionupdate",
		Title:    "session/update and the agent's requests decode",
		Observed: "the acp client's diagnostics: bad_update, bad_notification, bad_request fail; unknown_update warns (a kind newer than the client)", Scenario: "all"},

	// v2 prompt lifecycle
	{ID: "v2.prompt-accepted", Area: "prompt", Level: Must, Spec: "prompt-lifecycle#2-prompt-accepted",
		Title:    "session/prompt is answered with the inserted message's id",
		Observed: "the session/prompt result has a non-empty string messageId", Scenario: "session", Versions: v2only},
	{ID: "v2.user-message", Area: "prompt", Level: Must, Spec: "prompt-lifecycle#2-prompt-accepted",
		Title:    "the agent reports where the user message was inserted",
		Observed: "a user_message or user_message_chunk update with the messageId of the prompt's result", Scenario: "session", Versions: v2only},
	{ID: "v2.state-lifecycle", Area: "prompt", Level: Must, Spec: "prompt-lifecycle#4-report-completion",
		Title:    "a turn reports running and then idle",
		Observed: "state_update running (or requires_action) after the prompt, then state_update idle for the session", Scenario: "session", Versions: v2only},
	{ID: "v2.message-ids", Area: "prompt", Level: Must, Spec: "prompt-lifecycle#message-ids",
		Title:    "message updates carry a messageId",
		Observed: "every user/agent message and thought update or chunk has a non-empty messageId", Scenario: "all", Versions: v2only},

	// v2 background work
	{ID: "v2.background", Area: "background", Level: Must, Spec: "draft/prompt-lifecycle#background-work",
		Title:    "state_update.background lists announced work, on every snapshot",
		Observed: "every background list, in every scenario: an array of objects with a string type; a terminal with a terminalId that a terminal_update announced earlier and whose exitStatus has not been reported, a tool_call with a toolCallId a tool_call_update announced, a subagent with a sessionId; once a session reports background work, every later state_update for it has the list", Scenario: "all", Versions: v2only},
	{ID: "v2.background-ends", Area: "background", Level: Must, Spec: "draft/prompt-lifecycle#background-work",
		Title:    "background work, once listed, is later listed gone, after its end is reported",
		Observed: "after the background prompt (Options.Prompts.Background), the first item listed is cancelled with terminal/cancel or tool_call/cancel when it advertises capabilities.cancel; a later snapshot must list it gone (within half the scenario's timeout, at most 10 s), and in every scenario a removed terminal's exitStatus or tool call's final status must come before the snapshot that removes it", Scenario: "background", Versions: v2only},

	// tool calls and permissions
	{ID: "tools.shape", Area: "tools", Level: Must, Spec: "tool-calls#creating",
		Title:    "tool calls have an id and valid kind and status",
		Observed: "every tool_call (v1) has a toolCallId and a title; every tool call update's status is pending, in_progress, completed or failed (v2 also cancelled) and its kind one of the schema's", Scenario: "all"},
	{ID: "tools.known-ids", Area: "tools", Level: Should, Spec: "tool-calls#updating",
		Title:    "a tool_call_update names an announced tool call",
		Observed: "every tool_call_update's toolCallId was announced by a tool_call earlier on the connection", Scenario: "all", Versions: v1only},
	{ID: "permission.request", Area: "tools", Level: Must, Spec: "tool-calls#requesting-permission",
		Title:    "permission requests have the schema's shape",
		Observed: "session/request_permission: a known sessionId, a toolCall with a toolCallId, and options, each with optionId, name and a kind of allow_once, allow_always, reject_once, reject_always", Scenario: "all"},

	// cancellation
	{ID: "cancel.stop-reason", Area: "cancellation", Level: Must, Spec: "prompt-turn#cancellation", SpecV2: "prompt-lifecycle#cancellation",
		Title:    "a cancelled turn ends with stopReason cancelled",
		Observed: "after session/cancel sent right after session/prompt (v2: once it is accepted), the turn ends (v1: the prompt's result, v2: the idle state_update) with cancelled, not an error; another stop reason warns (the turn may have ended first)", Scenario: "cancel"},
	{ID: "cancel.no-late-updates", Area: "cancellation", Level: Must, Spec: "prompt-turn#cancellation",
		Title:    "no output after a cancelled turn ends",
		Observed: "no message, thought, tool call or plan update for the session between the cancelled prompt's response and the next prompt, which must be answered", Scenario: "cancel", Versions: v1only},

	// modes and config options
	{ID: "modes.set", Area: "modes", Level: Must, Spec: "session-modes#setting-the-current-mode",
		Title:    "session/set_mode switches to an advertised mode",
		Observed: "session/set_mode with an availableModes id other than the current one answers a result", Scenario: "session", Versions: v1only},
	{ID: "modes.unknown", Area: "modes", Level: Should, Spec: "session-modes#setting-the-current-mode",
		Title:    "session/set_mode with an unknown mode fails",
		Observed: "session/set_mode with modeId conformance-no-such-mode answers an error", Scenario: "session", Versions: v1only},
	{ID: "config.defaults", Area: "config", Level: Must, Spec: "session-config-options#default-values-and-graceful-degradation",
		Title:    "every config option has a current value, and no boolean unless offered",
		Observed: "each configOptions entry of session/new has an id (v2: configId) and a currentValue; in v1 none has type boolean (the grader does not offer boolean options; v2 has them by default)", Scenario: "session"},
	{ID: "config.set", Area: "config", Level: Must, Spec: "session-config-options#setting-a-config-option",
		Title:    "session/set_config_option answers the full list with the new value",
		Observed: "setting a select option to another of its values answers configOptions in which it has that value", Scenario: "session"},

	// client capabilities
	{ID: "caps.fs", Area: "capabilities", Level: Must, Spec: "file-system#checking-support",
		Title:    "no fs request unless the client offered fs",
		Observed: "no fs/* request in the scenarios where the client offers no fs capability (all but tool in v1)", Scenario: "all", Versions: v1only},
	{ID: "caps.terminal", Area: "capabilities", Level: Must, Spec: "terminals#checking-support",
		Title:    "no terminal request unless the client offered terminals",
		Observed: "no terminal/* request in any scenario (the grader never offers terminals)", Scenario: "all", Versions: v1only},
	{ID: "fs.absolute-paths", Area: "capabilities", Level: Must, Spec: "overview#argument-requirements",
		Title:    "fs requests name absolute paths",
		Observed: "the path of every fs/read_text_file and fs/write_text_file the agent sends when fs is offered", Scenario: "tool", Versions: v1only},
}

// ruleByID indexes rules.
var ruleByID = func() map[string]*Rule {
	m := make(map[string]*Rule, len(rules))
	for i := range rules {
		m[rules[i].ID] = &rules[i]
	}
	return m
}()

// Rules returns every rule a run grades, in report order.
func Rules() []Rule { return slices.Clone(rules) }
