package schema

// The JSON-RPC method names of ACP v1, as they appear on the wire.
const (
	// Client to agent: requests.
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionList            = "session/list"
	MethodSessionClose           = "session/close"
	MethodSessionDelete          = "session/delete"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodLogout                 = "logout"

	// Client to agent: notifications.
	MethodSessionCancel = "session/cancel"

	// Agent to client: notifications.
	MethodSessionUpdate       = "session/update"
	MethodElicitationComplete = "elicitation/complete"

	// Agent to client: requests.
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalRelease          = "terminal/release"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodElicitationCreate        = "elicitation/create"

	// Either direction: withdraws a request the sender made earlier. The
	// receiver may stop working on it; a request already answered ignores it.
	MethodCancelRequest = "$/cancel_request"
)

// Method names of the unstable features.
//
// Unstable: they follow schema.unstable.json (pinned in schema/), or no
// schema (session/set_model), and may change.
const (
	MethodSessionFork     = "session/fork"
	MethodSessionSetModel = "session/set_model" // legacy model selection; in no schema any more

	MethodNESStart   = "nes/start"
	MethodNESSuggest = "nes/suggest"
	MethodNESAccept  = "nes/accept"
	MethodNESReject  = "nes/reject"
	MethodNESClose   = "nes/close"

	MethodDocumentDidOpen   = "document/didOpen"
	MethodDocumentDidChange = "document/didChange"
	MethodDocumentDidClose  = "document/didClose"
	MethodDocumentDidSave   = "document/didSave"
	MethodDocumentDidFocus  = "document/didFocus"
)

// Method names of session archive, status and title, and of the auth
// status, added in schema 1.29.0.
//
// Unstable: they follow schema.unstable.json and may change.
const (
	MethodSessionArchive   = "session/archive"
	MethodSessionUnarchive = "session/unarchive"
	MethodSessionStatus    = "session/status"
	MethodSessionSetTitle  = "session/set_title"
	MethodAuthStatus       = "auth/status"
	// MethodAuthStatusUpdate is the agent's notification of a change of
	// its auth status. Agents also send it as "_auth/status_update"
	// (codex-acp), which is read the same way.
	MethodAuthStatusUpdate = "auth/status_update"
)
