package schema

import "encoding/json"

// This file holds the wire types of the client side of ACP v1 other than
// content blocks, tool calls and session updates: initialize and
// capabilities, authentication, sessions, modes, config options, prompts,
// permission and elicitation. Names follow the schema's $defs.
//
// Decoding mirrors the schema: capabilities and other optional fields marked
// x-deserialize-default-on-error read as their default when malformed, lists
// marked x-deserialize-skip-invalid-items drop bad elements, unknown fields
// are ignored. Required fields and discriminators are strict. Encoding leaves
// unset optional fields out.
//
// Most UnmarshalJSON methods of these types, and the decoders of the unions
// (auth methods, MCP servers, config options, content, updates), are
// generated from the pinned schema into protocol_gen.go (go generate; see
// internal/schemagen). The decoders in protocol_decode.go are the ones whose
// rules go beyond the marks: fields whose requirements depend on another
// field, and a list whose shape its elements decide.

// ---- enums ----

// StopReason is why a prompt turn ended. Unknown values are kept; decoding
// never fails (a non-string reads as "", though PromptResponse requires a
// string).
type StopReason string

const (
	StopReasonEndTurn         StopReason = "end_turn"
	StopReasonMaxTokens       StopReason = "max_tokens"
	StopReasonMaxTurnRequests StopReason = "max_turn_requests"
	StopReasonRefusal         StopReason = "refusal"
	StopReasonCancelled       StopReason = "cancelled"
)

// PlanEntryPriority is a plan entry's importance. Unknown values are kept.
type PlanEntryPriority string

const (
	PlanEntryPriorityHigh   PlanEntryPriority = "high"
	PlanEntryPriorityMedium PlanEntryPriority = "medium"
	PlanEntryPriorityLow    PlanEntryPriority = "low"
)

// PlanEntryStatus is a plan entry's progress. Unknown values are kept.
type PlanEntryStatus string

const (
	PlanEntryStatusPending    PlanEntryStatus = "pending"
	PlanEntryStatusInProgress PlanEntryStatus = "in_progress"
	PlanEntryStatusCompleted  PlanEntryStatus = "completed"
)

// PermissionOptionKind hints how to present a permission option. Unknown
// values are kept.
type PermissionOptionKind string

const (
	PermissionAllowOnce    PermissionOptionKind = "allow_once"
	PermissionAllowAlways  PermissionOptionKind = "allow_always"
	PermissionRejectOnce   PermissionOptionKind = "reject_once"
	PermissionRejectAlways PermissionOptionKind = "reject_always"
)

// ---- initialize ----

// Implementation names a client or an agent. Name and Version are required.
type Implementation struct {
	Name    string          `json:"name"`
	Title   string          `json:"title,omitempty"`
	Version string          `json:"version"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// Capability is an object-valued support marker: the wire sends {} (possibly
// with _meta) for "supported" and omits it or sends null for "not". A field
// of type *Capability is nil when the feature is not advertised; a malformed
// marker reads as nil.
type Capability struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports. Every field is lenient:
// a malformed member reads as its default (unsupported).
type ClientCapabilities struct {
	FS          FileSystemCapabilities     `json:"fs"`
	Terminal    bool                       `json:"terminal"`
	Session     *ClientSessionCapabilities `json:"session,omitempty"`
	Auth        AuthCapabilities           `json:"auth"`
	Elicitation *ElicitationCapabilities   `json:"elicitation,omitempty"`
	// Plan says the client understands the plan_update and plan_removed
	// updates (stable since schema 1.34.0).
	Plan *Capability `json:"plan,omitempty"`
	// Subagents says the client keeps the child sessions that
	// subagent_update announces (stable since schema 1.34.0).
	Subagents *Capability `json:"subagents,omitempty"`
	// PositionEncodings lists the position encodings the client supports
	// for next-edit suggestions, preferred first. Unstable: follows
	// schema.unstable.json; may change.
	PositionEncodings []PositionEncodingKind `json:"positionEncodings,omitempty"`
	Meta              json.RawMessage        `json:"_meta,omitempty"`
}

// FileSystemCapabilities enables fs/read_text_file and fs/write_text_file.
type FileSystemCapabilities struct {
	ReadTextFile  bool            `json:"readTextFile"`
	WriteTextFile bool            `json:"writeTextFile"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// AuthCapabilities: Terminal lets the agent offer terminal auth methods.
type AuthCapabilities struct {
	Terminal bool            `json:"terminal"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationCapabilities lists the elicitation modes the client supports;
// a mode is supported only when its marker is non-nil.
type ElicitationCapabilities struct {
	Form *Capability     `json:"form,omitempty"`
	URL  *Capability     `json:"url,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ClientSessionCapabilities are the client's session-related capabilities.
type ClientSessionCapabilities struct {
	// Compaction says the client understands compaction_update and
	// compaction_summary_chunk (stable since schema 1.25.0).
	Compaction    *Capability                       `json:"compaction,omitempty"`
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	// Notices says the client shows notice updates to the user (stable
	// since schema 1.25.0).
	Notices *Capability     `json:"notices,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// SessionConfigOptionsCapabilities: Boolean lets the agent send boolean
// config options.
type SessionConfigOptionsCapabilities struct {
	Boolean *Capability     `json:"boolean,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// AgentCapabilities is what the agent supports. Every field is lenient: a
// malformed member reads as its default (unsupported).
type AgentCapabilities struct {
	LoadSession         bool                  `json:"loadSession"`
	PromptCapabilities  PromptCapabilities    `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities       `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities"`
	Auth                AgentAuthCapabilities `json:"auth"`
	// NES is the agent's next-edit-suggestion capabilities
	// (nes_capabilities.go; the feature is package nes).
	// Unstable: follows schema.unstable.json; may change.
	NES *NESCapabilities `json:"nes,omitempty"`
	// PositionEncoding is the position encoding the agent picked for
	// next-edit suggestions (see nes.PositionEncoding).
	// Unstable: follows schema.unstable.json; may change.
	PositionEncoding PositionEncodingKind `json:"positionEncoding,omitempty"`
	Meta             json.RawMessage      `json:"_meta,omitempty"`
}

// PromptCapabilities are the content types a prompt may carry beyond text
// and resource links.
type PromptCapabilities struct {
	Image           bool            `json:"image"`
	Audio           bool            `json:"audio"`
	EmbeddedContext bool            `json:"embeddedContext"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// MCPCapabilities are the MCP transports the agent supports besides stdio.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
	// ACP: the agent reaches MCP servers the client hosts over the ACP
	// connection ([MCPServerACP]). Unstable: follows schema.unstable.json;
	// may change.
	ACP  bool            `json:"acp,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionCapabilities gate the optional session methods.
type SessionCapabilities struct {
	List                  *Capability `json:"list,omitempty"`
	Delete                *Capability `json:"delete,omitempty"`
	AdditionalDirectories *Capability `json:"additionalDirectories,omitempty"`
	Resume                *Capability `json:"resume,omitempty"`
	Close                 *Capability `json:"close,omitempty"`
	// Fork gates session/fork. Unstable: follows schema.unstable.json; may
	// change.
	Fork *Capability `json:"fork,omitempty"`
	// SystemPrompt says the agent applies a client SystemPrompt on
	// session/new, load and resume (stable since schema 1.30.0).
	SystemPrompt *SessionSystemPromptCapabilities `json:"systemPrompt,omitempty"`
	// Archive gates session/archive, session/unarchive and the archived
	// filter of session/list. Unstable: follows schema.unstable.json; may
	// change.
	Archive *Capability `json:"archive,omitempty"`
	// Status gates session/status. Unstable: follows schema.unstable.json;
	// may change.
	Status *Capability `json:"status,omitempty"`
	// Title gates session/set_title. Unstable: follows
	// schema.unstable.json; may change.
	Title *Capability     `json:"title,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// AgentAuthCapabilities: Logout gates the logout method.
type AgentAuthCapabilities struct {
	Logout *Capability `json:"logout,omitempty"`
	// Status gates auth/status. Unstable: follows schema.unstable.json;
	// may change.
	Status *Capability     `json:"status,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// InitializeRequest is the params of initialize. ProtocolVersion is
// required (an integer 0..65535); everything else is lenient.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               json.RawMessage    `json:"_meta,omitempty"`
}

// InitializeResponse is the result of initialize. ProtocolVersion is
// required; a malformed agentCapabilities or agentInfo reads as its default;
// invalid auth methods are dropped, unknown types are kept.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods,omitzero"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}
