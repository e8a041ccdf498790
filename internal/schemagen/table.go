package main

// genType is a Go type whose UnmarshalJSON is generated from schema $defs.
type genType struct {
	Go   string   // the Go type in package schema (or Out's)
	Defs []string // the $defs it decodes; their properties are merged in order
	// Unstable lets fields and defs missing from the stable schema come from
	// schema.unstable.json (the package decodes a few unstable fields that
	// real agents send).
	Unstable bool
	// Legacy lets fields and defs missing from both schemas come from
	// legacy.json: shapes real agents still send that no schema has.
	Legacy bool
	// Label names the type in errors; "" means its Go name in words. The
	// session update kinds keep their wire names ("tool_call").
	Label string
	// Out is the package the Go type is declared in and its decoder is
	// written to, a Pkg of outputs; "" means package schema.
	Out string
}

// output is one generated file: the package it belongs to, that package's
// directory (from the module root), and the file written there.
type output struct {
	Pkg, Dir, File string
}

// outputs are the generated files, one per package that has generated
// decoders. A row of generated or unions says which one it goes to (Out),
// so moving a type to another package is one field of its row.
var outputs = []output{
	{Pkg: "schema", Dir: "schema", File: "protocol_gen.go"},
	{Pkg: "nes", Dir: "nes", File: "nes_gen.go"},
}

// outputOf returns the output of the package pkg ("" is package schema).
func outputOf(pkg string) (output, bool) {
	if pkg == "" {
		pkg = "schema"
	}
	for _, o := range outputs {
		if o.Pkg == pkg {
			return o, true
		}
	}
	return output{}, false
}

// in reports whether a row's Out is the package pkg.
func in(out, pkg string) bool { return out == pkg || out == "" && pkg == "schema" }

// generated lists the types whose decoders are generated, in the order they
// are written out (within each output).
var generated = []genType{
	{Go: "StopReason", Defs: []string{"StopReason"}},
	{Go: "PlanEntryPriority", Defs: []string{"PlanEntryPriority"}},
	{Go: "PlanEntryStatus", Defs: []string{"PlanEntryStatus"}},
	{Go: "PermissionOptionKind", Defs: []string{"PermissionOptionKind"}},

	{Go: "Implementation", Defs: []string{"Implementation"}},
	// Every capability that is only a presence marker has the same shape.
	{Go: "Capability", Defs: []string{
		"LogoutCapabilities", "SessionListCapabilities", "SessionDeleteCapabilities",
		"SessionAdditionalDirectoriesCapabilities", "SessionResumeCapabilities",
		"SessionCloseCapabilities", "ElicitationFormCapabilities", "ElicitationUrlCapabilities",
		"BooleanConfigOptionCapabilities", "SessionForkCapabilities", "SessionCancelCapabilities",
		"SubagentCapabilities", "PlanCapabilities", "NoticeCapabilities", "CompactionCapabilities",
		"SessionSystemPromptOverrideCapabilities", "SessionArchiveCapabilities", "SessionStatusCapabilities",
		"SessionTitleCapabilities", "AuthStatusCapabilities",
		"NesDocumentDidOpenCapabilities", "NesDocumentDidCloseCapabilities",
		"NesDocumentDidSaveCapabilities", "NesDocumentDidFocusCapabilities",
	}, Unstable: true},
	{Go: "ClientCapabilities", Defs: []string{"ClientCapabilities"}, Unstable: true},
	{Go: "FileSystemCapabilities", Defs: []string{"FileSystemCapabilities"}},
	{Go: "AuthCapabilities", Defs: []string{"AuthCapabilities"}},
	{Go: "ElicitationCapabilities", Defs: []string{"ElicitationCapabilities"}},
	{Go: "ClientSessionCapabilities", Defs: []string{"ClientSessionCapabilities"}},
	{Go: "SessionConfigOptionsCapabilities", Defs: []string{"SessionConfigOptionsCapabilities"}},
	{Go: "AgentCapabilities", Defs: []string{"AgentCapabilities"}, Unstable: true},
	{Go: "PromptCapabilities", Defs: []string{"PromptCapabilities"}},
	{Go: "MCPCapabilities", Defs: []string{"McpCapabilities"}, Unstable: true},
	{Go: "SessionCapabilities", Defs: []string{"SessionCapabilities"}, Unstable: true},
	{Go: "AgentAuthCapabilities", Defs: []string{"AgentAuthCapabilities"}, Unstable: true},
	{Go: "InitializeRequest", Defs: []string{"InitializeRequest"}},
	{Go: "InitializeResponse", Defs: []string{"InitializeResponse"}},

	{Go: "AgentAuthMethod", Defs: []string{"AuthMethodAgent"}},
	{Go: "TerminalAuthMethod", Defs: []string{"AuthMethodTerminal"}},
	{Go: "EnvVarAuthMethod", Defs: []string{"AuthMethodEnvVar"}, Legacy: true, Label: "auth method"},
	{Go: "EnvVarSpec", Defs: []string{"AuthEnvVar"}, Legacy: true, Label: "env var"},
	{Go: "AuthenticateRequest", Defs: []string{"AuthenticateRequest"}},
	{Go: "AuthenticateResponse", Defs: []string{"AuthenticateResponse"}},
	{Go: "LogoutRequest", Defs: []string{"LogoutRequest"}},
	{Go: "LogoutResponse", Defs: []string{"LogoutResponse"}},

	{Go: "MCPServerStdio", Defs: []string{"McpServerStdio"}},
	{Go: "MCPServerHTTP", Defs: []string{"McpServerHttp"}},
	{Go: "MCPServerSSE", Defs: []string{"McpServerSse"}},
	{Go: "MCPServerACP", Defs: []string{"McpServerAcp"}, Unstable: true},
	{Go: "EnvVariable", Defs: []string{"EnvVariable"}},
	{Go: "HTTPHeader", Defs: []string{"HttpHeader"}},

	{Go: "NewSessionRequest", Defs: []string{"NewSessionRequest"}},
	{Go: "NewSessionResponse", Defs: []string{"NewSessionResponse"}, Legacy: true},
	{Go: "LoadSessionRequest", Defs: []string{"LoadSessionRequest"}},
	{Go: "LoadSessionResponse", Defs: []string{"LoadSessionResponse"}, Legacy: true},
	{Go: "ResumeSessionRequest", Defs: []string{"ResumeSessionRequest"}},
	{Go: "ResumeSessionResponse", Defs: []string{"ResumeSessionResponse"}, Legacy: true},
	{Go: "ForkSessionRequest", Defs: []string{"ForkSessionRequest"}, Unstable: true},
	{Go: "ForkSessionResponse", Defs: []string{"ForkSessionResponse"}, Unstable: true, Legacy: true},
	{Go: "CloseSessionRequest", Defs: []string{"CloseSessionRequest"}},
	{Go: "CloseSessionResponse", Defs: []string{"CloseSessionResponse"}},
	{Go: "ListSessionsRequest", Defs: []string{"ListSessionsRequest"}, Unstable: true},
	{Go: "ListSessionsResponse", Defs: []string{"ListSessionsResponse"}},
	{Go: "SessionInfo", Defs: []string{"SessionInfo"}, Unstable: true},
	{Go: "DeleteSessionRequest", Defs: []string{"DeleteSessionRequest"}},
	{Go: "DeleteSessionResponse", Defs: []string{"DeleteSessionResponse"}},

	{Go: "SessionModeState", Defs: []string{"SessionModeState"}},
	{Go: "SessionMode", Defs: []string{"SessionMode"}},
	{Go: "SetSessionModeRequest", Defs: []string{"SetSessionModeRequest"}},
	{Go: "SetSessionModeResponse", Defs: []string{"SetSessionModeResponse"}},

	// The legacy model selection (models.go).
	{Go: "SessionModelState", Defs: []string{"SessionModelState"}, Legacy: true},
	{Go: "ModelInfo", Defs: []string{"ModelInfo"}, Legacy: true},
	{Go: "SetSessionModelRequest", Defs: []string{"SetSessionModelRequest"}, Legacy: true},
	{Go: "SetSessionModelResponse", Defs: []string{"SetSessionModelResponse"}, Legacy: true},

	{Go: "SelectOption", Defs: []string{"SessionConfigSelectOption"}},
	{Go: "SelectGroup", Defs: []string{"SessionConfigSelectGroup"}},
	{Go: "BooleanConfigOption", Defs: []string{"SessionConfigOption", "SessionConfigBoolean"}},
	{Go: "SetSessionConfigOptionResponse", Defs: []string{"SetSessionConfigOptionResponse"}},

	{Go: "AvailableCommand", Defs: []string{"AvailableCommand"}},
	{Go: "AvailableCommandInput", Defs: []string{"UnstructuredCommandInput"}},
	{Go: "PlanEntry", Defs: []string{"PlanEntry"}},

	{Go: "PromptRequest", Defs: []string{"PromptRequest"}},
	{Go: "PromptResponse", Defs: []string{"PromptResponse"}, Unstable: true},
	{Go: "Usage", Defs: []string{"Usage"}, Unstable: true},
	{Go: "CancelNotification", Defs: []string{"CancelNotification"}},
	{Go: "CancelRequestNotification", Defs: []string{"CancelRequestNotification"}},

	{Go: "RequestPermissionRequest", Defs: []string{"RequestPermissionRequest"}},
	{Go: "PermissionOption", Defs: []string{"PermissionOption"}},
	{Go: "RequestPermissionResponse", Defs: []string{"RequestPermissionResponse"}},

	{Go: "CompleteElicitationNotification", Defs: []string{"CompleteElicitationNotification"}},
	// The one part of a form's requested schema with a decoder of its own:
	// the titled options of an enum field (elicitation_schema.go).
	{Go: "ElicitationOption", Defs: []string{"EnumOption"}, Label: "elicitation option"},

	// Session updates. The three content chunks share ContentChunk.
	{Go: "UserMessageChunk", Defs: []string{"ContentChunk"}, Label: "user_message_chunk"},
	{Go: "AgentMessageChunk", Defs: []string{"ContentChunk"}, Label: "agent_message_chunk"},
	{Go: "AgentThoughtChunk", Defs: []string{"ContentChunk"}, Label: "agent_thought_chunk"},
	{Go: "ToolCall", Defs: []string{"ToolCall"}, Label: "tool_call", Unstable: true},
	{Go: "ToolCallUpdate", Defs: []string{"ToolCallUpdate"}, Label: "tool_call_update", Unstable: true},
	{Go: "Plan", Defs: []string{"Plan"}},
	{Go: "AvailableCommandsUpdate", Defs: []string{"AvailableCommandsUpdate"}, Label: "available_commands_update"},
	{Go: "ConfigOptionUpdate", Defs: []string{"ConfigOptionUpdate"}, Label: "config_option_update"},
	{Go: "SessionInfoUpdate", Defs: []string{"SessionInfoUpdate"}, Label: "session_info_update"},
	{Go: "UsageUpdate", Defs: []string{"UsageUpdate"}, Label: "usage_update"},
	{Go: "Cost", Defs: []string{"Cost"}},
	// Plan operations, notices and compaction (updates_plans_notices.go).
	{Go: "PlanUpdate", Defs: []string{"PlanUpdate"}, Label: "plan_update", Unstable: true},
	{Go: "PlanRemoved", Defs: []string{"PlanRemoved"}, Label: "plan_removed", Unstable: true},
	{Go: "PlanItems", Defs: []string{"PlanItems"}, Label: "plan items", Unstable: true},
	{Go: "PlanFile", Defs: []string{"PlanFile"}, Label: "plan file", Unstable: true},
	{Go: "PlanMarkdown", Defs: []string{"PlanMarkdown"}, Label: "plan markdown", Unstable: true},
	{Go: "Notice", Defs: []string{"Notice"}, Label: "notice", Unstable: true},
	{Go: "CompactionUpdate", Defs: []string{"CompactionUpdate"}, Label: "compaction_update", Unstable: true},
	{Go: "CompactionSummaryChunk", Defs: []string{"CompactionSummaryChunk"}, Label: "compaction_summary_chunk", Unstable: true},
	// Session archive, status and title (session_manage.go) and the auth
	// status (auth_status.go).
	{Go: "ArchiveSessionRequest", Defs: []string{"ArchiveSessionRequest"}, Unstable: true},
	{Go: "ArchiveSessionResponse", Defs: []string{"ArchiveSessionResponse"}, Unstable: true},
	{Go: "UnarchiveSessionRequest", Defs: []string{"UnarchiveSessionRequest"}, Unstable: true},
	{Go: "UnarchiveSessionResponse", Defs: []string{"UnarchiveSessionResponse"}, Unstable: true},
	{Go: "SessionStatusRequest", Defs: []string{"SessionStatusRequest"}, Unstable: true},
	{Go: "SessionStatusResponse", Defs: []string{"SessionStatusResponse"}, Unstable: true},
	{Go: "SetSessionTitleRequest", Defs: []string{"SetSessionTitleRequest"}, Unstable: true},
	{Go: "SetSessionTitleResponse", Defs: []string{"SetSessionTitleResponse"}, Unstable: true},
	{Go: "AuthStatus", Defs: []string{"AuthStatusResponse", "AuthStatusUpdateNotification"}, Unstable: true, Label: "auth status"},
	{Go: "AuthAccount", Defs: []string{"AuthAccount"}, Unstable: true},
	// The client system prompt (system_prompt.go).
	{Go: "SystemPrompt", Defs: []string{"SystemPrompt"}},
	{Go: "SessionSystemPromptCapabilities", Defs: []string{"SessionSystemPromptCapabilities"}},
	{Go: "SessionSystemPromptModeCapabilities", Defs: []string{"SessionSystemPromptModeCapabilities"}},
	// Subagent sessions (updates_subagent.go).
	{Go: "SubagentUpdate", Defs: []string{"SubagentUpdate"}, Label: "subagent_update"},
	{Go: "SubagentSessionCapabilities", Defs: []string{"SubagentSessionCapabilities"}},
	{Go: "SessionMessage", Defs: []string{"SessionMessage"}, Label: "session_message"},
	{Go: "SessionMessageChunk", Defs: []string{"SessionMessageChunk"}, Label: "session_message_chunk"},

	// The NES capabilities (nes_capabilities.go): AgentCapabilities carries them.
	{Go: "PositionEncodingKind", Defs: []string{"PositionEncodingKind"}, Unstable: true},
	{Go: "TextDocumentSyncKind", Defs: []string{"TextDocumentSyncKind"}, Unstable: true},
	{Go: "NESCapabilities", Defs: []string{"NesCapabilities"}, Unstable: true},
	{Go: "NESEventCapabilities", Defs: []string{"NesEventCapabilities"}, Unstable: true},
	{Go: "NESDocumentEventCapabilities", Defs: []string{"NesDocumentEventCapabilities"}, Unstable: true},
	{Go: "NESDocumentDidChangeCapabilities", Defs: []string{"NesDocumentDidChangeCapabilities"}, Unstable: true},
	// Next-edit suggestions (package nes). The labels keep the words the
	// errors used when the types were acp.StartNESResponse and so on.
	{Go: "Position", Defs: []string{"Position"}, Unstable: true, Out: "nes"},
	{Go: "Range", Defs: []string{"Range"}, Unstable: true, Out: "nes"},
	{Go: "StartResponse", Defs: []string{"StartNesResponse"}, Unstable: true, Out: "nes", Label: "start nes response"},
	{Go: "SuggestResponse", Defs: []string{"SuggestNesResponse"}, Unstable: true, Out: "nes", Label: "suggest nes response"},
	{Go: "EditSuggestion", Defs: []string{"NesEditSuggestion"}, Unstable: true, Out: "nes", Label: "nes edit suggestion"},
	{Go: "TextEdit", Defs: []string{"NesTextEdit"}, Unstable: true, Out: "nes", Label: "nes text edit"},
	{Go: "JumpSuggestion", Defs: []string{"NesJumpSuggestion"}, Unstable: true, Out: "nes", Label: "nes jump suggestion"},
	{Go: "RenameSuggestion", Defs: []string{"NesRenameSuggestion"}, Unstable: true, Out: "nes", Label: "nes rename suggestion"},
	{Go: "SearchAndReplaceSuggestion", Defs: []string{"NesSearchAndReplaceSuggestion"}, Unstable: true, Out: "nes",
		Label: "nes search and replace suggestion"},

	// MCP-over-ACP (mcp.go): the agent's mcp/message requests. The client
	// only sends the response and MessageMcpNotification, so neither has a
	// decoder.
	{Go: "MessageMCPRequest", Defs: []string{"MessageMcpRequest"}, Unstable: true, Label: "mcp message"},

	// Content.
	{Go: "Role", Defs: []string{"Role"}},
	{Go: "TextContent", Defs: []string{"TextContent"}},
	{Go: "ImageContent", Defs: []string{"ImageContent"}},
	{Go: "AudioContent", Defs: []string{"AudioContent"}},
	{Go: "ResourceLink", Defs: []string{"ResourceLink"}, Unstable: true},
	{Go: "EmbeddedResource", Defs: []string{"EmbeddedResource"}},
	{Go: "Annotations", Defs: []string{"Annotations"}},
	{Go: "TextResourceContents", Defs: []string{"TextResourceContents"}, Label: "text resource"},
	{Go: "BlobResourceContents", Defs: []string{"BlobResourceContents"}, Label: "blob resource"},

	// Tool calls.
	{Go: "ToolKind", Defs: []string{"ToolKind"}},
	{Go: "ToolCallStatus", Defs: []string{"ToolCallStatus"}},
	{Go: "ToolContent", Defs: []string{"Content"}},
	{Go: "DiffContent", Defs: []string{"Diff"}, Label: "diff"},
	{Go: "TerminalContent", Defs: []string{"Terminal"}},
	{Go: "ToolCallLocation", Defs: []string{"ToolCallLocation"}},
}

// unions lists the unions whose decoders are generated.
var unions = []genUnion{
	{Def: "SessionUpdate", Go: "Update", Func: "decodeUpdate", Label: "session update",
		Unknown: "UnknownUpdate", UnknownKey: "Kind", Unstable: true,
		// A malformed known kind is kept as *UnknownUpdate next to its
		// error, so the caller can report it and keep the update.
		Fail: "malformedUpdate(data, %s)"},
	{Def: "PlanUpdateContent", Go: "PlanContent", Func: "unmarshalPlanContent", Label: "plan content",
		Wrapper: "planContentField", Unknown: "UnknownPlanContent", UnknownKey: "Type", Fail: "nil, %s",
		Unstable: true},
	{Def: "NesSuggestion", Go: "Suggestion", Func: "unmarshalSuggestion", Label: "nes suggestion",
		Wrapper: "suggestionField", Unknown: "UnknownSuggestion", UnknownKey: "Kind", Fail: "nil, %s",
		Unstable: true, Out: "nes"},
	{Def: "AuthMethod", Go: "AuthMethod", Func: "unmarshalAuthMethod", Label: "auth method",
		Wrapper: "authMethodField", Unknown: "UnknownAuthMethod", UnknownKey: "Type", Fail: "nil, %s",
		// env_var left the unstable schema, but agents still send it.
		Legacy: true,
		// An unknown method is still listed by its id and name.
		UnknownCommon: true,
		// Copilot and Qwen announce terminal logins on agent methods, in
		// _meta; those must never be passed to authenticate.
		Then: "terminalFromMeta"},
	{Def: "McpServer", Go: "MCPServer", Func: "unmarshalMCPServer", Label: "mcp server",
		Wrapper: "mcpServerField", Unknown: "UnknownMCPServer", UnknownKey: "Type", Fail: "nil, %s",
		Unstable: true},
	{Def: "SessionConfigOption", Go: "SessionConfigOption", Func: "unmarshalConfigOption", Label: "config option",
		Wrapper: "configOptionField", Unknown: "UnknownConfigOption", UnknownKey: "Type", Fail: "nil, %s"},
	{Def: "ContentBlock", Go: "ContentBlock", Func: "unmarshalContentBlock", Label: "content block",
		Wrapper: "contentBlockField", Unknown: "UnknownContent", UnknownKey: "Type", Fail: "nil, %s"},
	{Def: "ToolCallContent", Go: "ToolCallContent", Func: "unmarshalToolCallContent", Label: "tool call content",
		Wrapper: "toolCallContentField", Unknown: "UnknownToolCallContent", UnknownKey: "Type", Fail: "nil, %s"},
	{Def: "EmbeddedResourceResource", Go: "ResourceContents", Func: "unmarshalResourceContents",
		Label: "resource contents", Wrapper: "resourceContentsField", Unknown: "UnknownResourceContents",
		Fail: "nil, %s"},
}

// skip says why a stable $defs entry has no generated decoder. File and Go,
// when set, name the hand-written Go type that decodes it; the coverage test
// checks that it is declared there.
type skip struct {
	File, Go string
	Why      string
}

func hand(file, goType, why string) skip {
	return skip{File: file, Go: goType, Why: why}
}

const (
	whyID      = "an identifier: fields hold it as a plain string"
	whyOpenSet = "an open set of strings (the listed constants or any other string): a named string type " +
		"with the listed values as constants keeps whatever string arrives"
	whyEnvelope = "a JSON-RPC envelope or method union: jrpc2 and the dispatcher route by method name"
	// The fs and terminal types have no decoder of their own.
	whyFS = "decoded by encoding/json as declared: a generated decoder would refuse a request " +
		"without its required fields and read a malformed line, limit, cwd, env or " +
		"outputByteLimit as absent, which changes which agent requests are served"
)

// notGenerated is every stable $defs entry that is not in generated.
// whyState is why the StateUpdate union is decoded by hand.
const whyState = "a union on state whose idle branch is a union on stopReason, neither of which the generator " +
	"reads; their variants add no fields of their own, so one flat struct with a hand-written lenient decoder " +
	"(StateUpdate.UnmarshalJSON) holds them all"

var notGenerated = map[string]skip{
	// Identifiers and scalars.
	"AuthMethodId":         {Why: whyID},
	"ElicitationId":        {Why: whyID},
	"MessageId":            {Why: whyID},
	"PermissionOptionId":   {Why: whyID},
	"SessionConfigGroupId": {Why: whyID},
	"SessionConfigId":      {Why: whyID},
	"SessionConfigValueId": {Why: whyID},
	"SessionId":            {Why: whyID},
	"SessionModeId":        {Why: whyID},
	"TerminalId":           {Why: whyID},
	"ToolCallId":           {Why: whyID},
	"ProtocolVersion":      {Why: "an integer: its range is checked where InitializeRequest and InitializeResponse read it"},
	"RequestId":            {Why: "a JSON-RPC id: kept as raw JSON (CancelRequestNotification, CreateElicitationRequest)"},
	"PlanId":               {Why: whyID},
	"CompactionId":         {Why: whyID},
	"NoticeSeverity":       hand("updates_plans_notices.go", "NoticeSeverity", whyOpenSet),
	"CompactionStatus":     hand("updates_plans_notices.go", "CompactionStatus", whyOpenSet),
	"SystemPromptMode":     hand("system_prompt.go", "SystemPromptMode", whyOpenSet),
	"SessionConfigOptionCategory": {Why: "an open set of strings: SessionConfigOption.Category is a plain string " +
		"with the known values as constants"},

	// A session's activity (updates_subagent.go).
	"StateUpdate":               {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},
	"RunningStateUpdate":        {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},
	"IdleStateUpdate":           {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},
	"RequiresActionStateUpdate": {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},
	"UnknownStateUpdate":        {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},
	"ErrorStopReason":           {Go: "StateUpdate", File: "updates_subagent.go", Why: whyState},

	// JSON-RPC plumbing.
	"AgentNotification":  {Why: whyEnvelope},
	"AgentRequest":       {Why: whyEnvelope},
	"AgentResponse":      {Why: whyEnvelope},
	"ClientNotification": {Why: whyEnvelope},
	"ClientRequest":      {Why: whyEnvelope},
	"ClientResponse":     {Why: whyEnvelope},
	"Error":              {Why: "a JSON-RPC error object: jrpc2 decodes it"},
	"ErrorCode":          {Why: "a JSON-RPC error code: jrpc2 decodes it"},
	"ExtNotification":    {Why: "an extension message: any JSON, passed through raw"},
	"ExtRequest":         {Why: "an extension message: any JSON, passed through raw"},
	"ExtResponse":        {Why: "an extension message: any JSON, passed through raw"},

	// Unions and shapes of protocol*.go with decoding rules beyond the marks.
	"AvailableCommandInput": hand("protocol_prompt.go", "AvailableCommandInput",
		"a union of one variant, UnstructuredCommandInput, which AvailableCommandInput decodes"),
	"SessionConfigSelect": hand("protocol_session.go", "SelectConfigOption",
		"options is a flat or a grouped list, told apart by its elements"),
	"SessionConfigSelectOptions": hand("protocol_session.go", "SelectConfigOption",
		"a flat or a grouped list, told apart by its elements"),
	"SetSessionConfigOptionRequest": hand("protocol_session.go", "SetSessionConfigOptionRequest",
		`value is a string, or a boolean when "type" is "boolean"`),
	"RequestPermissionOutcome": hand("protocol_prompt.go", "PermissionOutcome",
		`a union told apart by "outcome"; unknown outcomes are kept and never taken for approval`),
	"SelectedPermissionOutcome": hand("protocol_prompt.go", "PermissionOutcome",
		`the "selected" variant of RequestPermissionOutcome`),
	"CreateElicitationRequest": hand("protocol_prompt.go", "CreateElicitationRequest",
		"required fields depend on the mode and the scope"),
	"CreateElicitationResponse": hand("protocol_prompt.go", "CreateElicitationResponse",
		"a union told apart by \"action\""),
	"ElicitationAcceptAction": hand("protocol_prompt.go", "CreateElicitationResponse",
		`the "accept" variant of CreateElicitationResponse`),
	"ElicitationFormMode": hand("protocol_prompt.go", "CreateElicitationRequest",
		`the "form" mode of CreateElicitationRequest`),
	"ElicitationUrlMode": hand("protocol_prompt.go", "CreateElicitationRequest",
		`the "url" mode of CreateElicitationRequest`),
	"ElicitationSessionScope": hand("protocol_prompt.go", "CreateElicitationRequest",
		"the session scope of CreateElicitationRequest"),
	"ElicitationRequestScope": hand("protocol_prompt.go", "CreateElicitationRequest",
		"the request scope of CreateElicitationRequest"),

	// The requested schema of a form elicitation is kept as raw JSON.
	"ElicitationSchema":         {Why: "kept raw in CreateElicitationRequest.RequestedSchema"},
	"ElicitationSchemaType":     {Why: "part of ElicitationSchema, kept raw"},
	"ElicitationPropertySchema": {Why: "part of ElicitationSchema, kept raw"},
	"StringPropertySchema":      {Why: "part of ElicitationSchema, kept raw"},
	"NumberPropertySchema":      {Why: "part of ElicitationSchema, kept raw"},
	"IntegerPropertySchema":     {Why: "part of ElicitationSchema, kept raw"},
	"BooleanPropertySchema":     {Why: "part of ElicitationSchema, kept raw"},
	"MultiSelectPropertySchema": {Why: "part of ElicitationSchema, kept raw"},
	"MultiSelectItems":          {Why: "part of ElicitationSchema, kept raw"},
	"StringMultiSelectItems":    {Why: "part of ElicitationSchema, kept raw"},
	"TitledMultiSelectItems":    {Why: "part of ElicitationSchema, kept raw"},
	"StringFormat":              {Why: "part of ElicitationSchema, kept raw"},
	"ElicitationContentValue":   {Why: "a value of CreateElicitationResponse.Content, kept raw"},

	// Session updates.
	"SessionNotification": hand("updates.go", "SessionNotification",
		"a malformed update still fills in the notification, as *UnknownUpdate next to the error"),
	"CurrentModeUpdate": hand("updates.go", "CurrentModeUpdate",
		`"modeId", which a doc example shows, is accepted for currentModeId`),

	// File system and terminals.
	"ReadTextFileRequest":         hand("fs_types.go", "ReadTextFileRequest", whyFS),
	"ReadTextFileResponse":        hand("fs_types.go", "ReadTextFileResponse", whyFS),
	"WriteTextFileRequest":        hand("fs_types.go", "WriteTextFileRequest", whyFS),
	"WriteTextFileResponse":       hand("fs_types.go", "WriteTextFileResponse", whyFS),
	"CreateTerminalRequest":       hand("fs_types.go", "CreateTerminalRequest", whyFS),
	"CreateTerminalResponse":      hand("fs_types.go", "CreateTerminalResponse", whyFS),
	"TerminalOutputRequest":       hand("fs_types.go", "TerminalOutputRequest", whyFS),
	"TerminalOutputResponse":      hand("fs_types.go", "TerminalOutputResponse", whyFS),
	"TerminalExitStatus":          hand("fs_types.go", "TerminalExitStatus", whyFS),
	"WaitForTerminalExitRequest":  hand("fs_types.go", "WaitForTerminalExitRequest", whyFS),
	"WaitForTerminalExitResponse": hand("fs_types.go", "WaitForTerminalExitResponse", whyFS),
	"KillTerminalRequest":         hand("fs_types.go", "KillTerminalRequest", whyFS),
	"KillTerminalResponse":        hand("fs_types.go", "KillTerminalResponse", whyFS),
	"ReleaseTerminalRequest":      hand("fs_types.go", "ReleaseTerminalRequest", whyFS),
	"ReleaseTerminalResponse":     hand("fs_types.go", "ReleaseTerminalResponse", whyFS),
}
