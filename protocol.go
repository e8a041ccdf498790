package acp

import (
	"encoding/json"
	"fmt"
)

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

// UnmarshalJSON keeps any string; a non-string reads as "".
func (r *StopReason) UnmarshalJSON(b []byte) error { *r = StopReason(enumString(b)); return nil }

// PlanEntryPriority is a plan entry's importance. Unknown values are kept.
type PlanEntryPriority string

const (
	PlanEntryPriorityHigh   PlanEntryPriority = "high"
	PlanEntryPriorityMedium PlanEntryPriority = "medium"
	PlanEntryPriorityLow    PlanEntryPriority = "low"
)

// UnmarshalJSON keeps any string; a non-string reads as "".
func (p *PlanEntryPriority) UnmarshalJSON(b []byte) error {
	*p = PlanEntryPriority(enumString(b))
	return nil
}

// PlanEntryStatus is a plan entry's progress. Unknown values are kept.
type PlanEntryStatus string

const (
	PlanEntryStatusPending    PlanEntryStatus = "pending"
	PlanEntryStatusInProgress PlanEntryStatus = "in_progress"
	PlanEntryStatusCompleted  PlanEntryStatus = "completed"
)

// UnmarshalJSON keeps any string; a non-string reads as "".
func (s *PlanEntryStatus) UnmarshalJSON(b []byte) error {
	*s = PlanEntryStatus(enumString(b))
	return nil
}

// PermissionOptionKind hints how to present a permission option. Unknown
// values are kept.
type PermissionOptionKind string

const (
	PermissionAllowOnce    PermissionOptionKind = "allow_once"
	PermissionAllowAlways  PermissionOptionKind = "allow_always"
	PermissionRejectOnce   PermissionOptionKind = "reject_once"
	PermissionRejectAlways PermissionOptionKind = "reject_always"
)

// UnmarshalJSON keeps any string; a non-string reads as "".
func (k *PermissionOptionKind) UnmarshalJSON(b []byte) error {
	*k = PermissionOptionKind(enumString(b))
	return nil
}

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
	Meta        json.RawMessage            `json:"_meta,omitempty"`
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
	ConfigOptions *SessionConfigOptionsCapabilities `json:"configOptions,omitempty"`
	Meta          json.RawMessage                   `json:"_meta,omitempty"`
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
	McpCapabilities     McpCapabilities       `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities"`
	Auth                AgentAuthCapabilities `json:"auth"`
	Meta                json.RawMessage       `json:"_meta,omitempty"`
}

// PromptCapabilities are the content types a prompt may carry beyond text
// and resource links.
type PromptCapabilities struct {
	Image           bool            `json:"image"`
	Audio           bool            `json:"audio"`
	EmbeddedContext bool            `json:"embeddedContext"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// McpCapabilities are the MCP transports the agent supports besides stdio.
type McpCapabilities struct {
	HTTP bool            `json:"http"`
	SSE  bool            `json:"sse"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionCapabilities gate the optional session methods.
type SessionCapabilities struct {
	List                  *Capability     `json:"list,omitempty"`
	Delete                *Capability     `json:"delete,omitempty"`
	AdditionalDirectories *Capability     `json:"additionalDirectories,omitempty"`
	Resume                *Capability     `json:"resume,omitempty"`
	Close                 *Capability     `json:"close,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// AgentAuthCapabilities: Logout gates the logout method.
type AgentAuthCapabilities struct {
	Logout *Capability     `json:"logout,omitempty"`
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

// ---- authentication ----

// AuthMethod is one way to authenticate offered in InitializeResponse:
//
//   - *AgentAuthMethod (no "type"): call authenticate with its ID
//   - *TerminalAuthMethod ("terminal"): run the agent interactively with its
//     Args and Env, then reconnect; never pass it to authenticate
//   - *EnvVarAuthMethod ("env_var"): not in the stable schema (a removed
//     unstable variant real agents still send); the agent reads the named
//     variables from its own environment when authenticate is called with
//     its ID
//   - *UnknownAuthMethod (any other "type"; not callable; raw JSON kept)
//
// id and name are required; an entry without them is dropped from the list.
type AuthMethod interface {
	MethodID() string
	MethodName() string
	isAuthMethod()
}

func (*AgentAuthMethod) isAuthMethod()    {}
func (*TerminalAuthMethod) isAuthMethod() {}
func (*EnvVarAuthMethod) isAuthMethod()   {}
func (*UnknownAuthMethod) isAuthMethod()  {}

func (m *AgentAuthMethod) MethodID() string      { return m.ID }
func (m *TerminalAuthMethod) MethodID() string   { return m.ID }
func (m *EnvVarAuthMethod) MethodID() string     { return m.ID }
func (m *UnknownAuthMethod) MethodID() string    { return m.ID }
func (m *AgentAuthMethod) MethodName() string    { return m.Name }
func (m *TerminalAuthMethod) MethodName() string { return m.Name }
func (m *EnvVarAuthMethod) MethodName() string   { return m.Name }
func (m *UnknownAuthMethod) MethodName() string  { return m.Name }

// AgentAuthMethod is authenticated by the agent itself through authenticate.
type AgentAuthMethod struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// TerminalAuthMethod is authenticated by running the agent's own command in
// an interactive terminal with Args appended and Env applied. In v1 env is a
// JSON object. A malformed args or env reads as empty.
type TerminalAuthMethod struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// EnvVarAuthMethod asks the user to set environment variables for the agent
// (see [AuthMethod]).
type EnvVarAuthMethod struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Vars        []EnvVarSpec    `json:"vars,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// EnvVarSpec is one variable of an [EnvVarAuthMethod]. Secret and Optional
// are nil when not sent (the former unstable schema defaulted them to true
// and false).
type EnvVarSpec struct {
	Name     string          `json:"name"`
	Label    string          `json:"label,omitempty"`
	Secret   *bool           `json:"secret,omitempty"`
	Optional *bool           `json:"optional,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// UnknownAuthMethod is an auth method of a type this package does not know.
// ID and Name are read leniently for display; Raw is re-sent unchanged.
type UnknownAuthMethod struct {
	Type string
	ID   string
	Name string
	Raw  json.RawMessage
}

// AuthenticateRequest is the params of authenticate.
type AuthenticateRequest struct {
	MethodID string          `json:"methodId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AuthenticateResponse is the result of authenticate.
type AuthenticateResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// LogoutRequest is the params of logout.
type LogoutRequest struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// LogoutResponse is the result of logout.
type LogoutResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ---- MCP servers ----

// McpServer is an MCP server the agent should connect to:
//
//   - *McpServerStdio (no "type" on the v1 wire; "stdio" is accepted)
//   - *McpServerHTTP ("http", needs mcpCapabilities.http)
//   - *McpServerSSE ("sse", needs mcpCapabilities.sse)
//   - *UnknownMcpServer (any other "type"; raw JSON kept)
type McpServer interface {
	isMcpServer()
}

func (*McpServerStdio) isMcpServer()   {}
func (*McpServerHTTP) isMcpServer()    {}
func (*McpServerSSE) isMcpServer()     {}
func (*UnknownMcpServer) isMcpServer() {}

// McpServerStdio is launched by the agent as a subprocess. Command should be
// an absolute path. Args and Env are always sent, as [] when empty.
type McpServerStdio struct {
	Name    string          `json:"name"`
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Env     []EnvVariable   `json:"env"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// McpServerHTTP is reached over streamable HTTP. Headers is always sent.
type McpServerHTTP struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HTTPHeader    `json:"headers"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// McpServerSSE is reached over SSE (deprecated by MCP). Headers is always
// sent.
type McpServerSSE struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HTTPHeader    `json:"headers"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnknownMcpServer is a server config of a type this package does not know.
type UnknownMcpServer struct {
	Type string
	Raw  json.RawMessage
}

// EnvVariable is an environment variable.
type EnvVariable struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// HTTPHeader is an HTTP header.
type HTTPHeader struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// ---- sessions ----

// NewSessionRequest is the params of session/new. McpServers is always sent
// ([] when nil). AdditionalDirectories needs
// sessionCapabilities.additionalDirectories and is left out when empty.
type NewSessionRequest struct {
	Cwd                   string          `json:"cwd"`
	McpServers            []McpServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// NewSessionResponse is the result of session/new. SessionID is required;
// malformed modes read as nil, invalid config options are dropped.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load (needs loadSession).
type LoadSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	McpServers            []McpServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// LoadSessionResponse is the result of session/load; a null result decodes
// as the zero value.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume (needs
// sessionCapabilities.resume). McpServers is optional in the schema but the
// docs require it, so it is always sent.
type ResumeSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	McpServers            []McpServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of session/resume; null decodes as the
// zero value.
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// CloseSessionRequest is the params of session/close.
type CloseSessionRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CloseSessionResponse is the result of session/close.
type CloseSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of session/list; empty fields are left
// out ({} asks for the first page of all sessions).
type ListSessionsRequest struct {
	Cwd    string          `json:"cwd,omitempty"`
	Cursor string          `json:"cursor,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list. sessions is required;
// invalid entries are dropped. NextCursor "" means the last page.
type ListSessionsResponse struct {
	Sessions   []SessionInfo   `json:"sessions"`
	NextCursor string          `json:"nextCursor,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// SessionInfo describes a listed session. SessionID and Cwd are required;
// the rest is lenient.
type SessionInfo struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitzero"`
	Title                 *string         `json:"title,omitempty"`
	UpdatedAt             *string         `json:"updatedAt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of session/delete.
type DeleteSessionRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DeleteSessionResponse is the result of session/delete.
type DeleteSessionResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ---- modes ----

// SessionModeState is the agent's current mode and the modes it offers.
type SessionModeState struct {
	CurrentModeID  string          `json:"currentModeId"`
	AvailableModes []SessionMode   `json:"availableModes"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// SessionMode is one mode of operation.
type SessionMode struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID string          `json:"sessionId"`
	ModeID    string          `json:"modeId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModeResponse is the result of session/set_mode.
type SetSessionModeResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ---- config options ----

// Config option categories (SessionConfigOption.Category). They are UX hints
// only; names starting with "_" are custom, other unknown values are kept.
const (
	ConfigCategoryMode         = "mode"
	ConfigCategoryModel        = "model"
	ConfigCategoryModelConfig  = "model_config"
	ConfigCategoryThoughtLevel = "thought_level"
)

// SessionConfigOption is one session setting, told apart by "type":
//
//   - *SelectConfigOption ("select")
//   - *BooleanConfigOption ("boolean"; only sent to clients that advertised
//     session.configOptions.boolean)
//   - *UnknownConfigOption (any other "type"; the client should ignore it,
//     the agent keeps its default)
//
// id and name are required; in a list, an option without them (or a known
// type without its currentValue) is dropped.
type SessionConfigOption interface {
	OptionID() string
	isSessionConfigOption()
}

func (*SelectConfigOption) isSessionConfigOption()  {}
func (*BooleanConfigOption) isSessionConfigOption() {}
func (*UnknownConfigOption) isSessionConfigOption() {}

func (o *SelectConfigOption) OptionID() string  { return o.ID }
func (o *BooleanConfigOption) OptionID() string { return o.ID }
func (o *UnknownConfigOption) OptionID() string { return o.ID }

// SelectConfigOption picks one value among Options. The wire's "options" is
// either a flat list or a list of groups; exactly one of Options and Groups
// is non-nil after decoding (an empty list decodes as empty Options). On
// encoding, a non-empty Groups wins over Options. Use Values for the flat
// list in either case.
type SelectConfigOption struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Category     string          `json:"category,omitempty"`
	CurrentValue string          `json:"currentValue"`
	Options      []SelectOption  `json:"-"`
	Groups       []SelectGroup   `json:"-"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// Values returns every selectable value, flattening groups in order.
func (o *SelectConfigOption) Values() []SelectOption {
	if len(o.Groups) == 0 {
		return o.Options
	}
	var out []SelectOption
	for _, g := range o.Groups {
		out = append(out, g.Options...)
	}
	return out
}

// SelectOption is one value of a select option.
type SelectOption struct {
	Value       string          `json:"value"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// SelectGroup is a named group of select values.
type SelectGroup struct {
	Group   string          `json:"group"`
	Name    string          `json:"name"`
	Options []SelectOption  `json:"options"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// BooleanConfigOption is an on/off setting.
type BooleanConfigOption struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Category     string          `json:"category,omitempty"`
	CurrentValue bool            `json:"currentValue"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// UnknownConfigOption is a config option of a type this package does not
// know; Raw is re-sent unchanged.
type UnknownConfigOption struct {
	Type string
	ID   string
	Raw  json.RawMessage
}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
// For a select option set Value; it is sent as {"value":"..."} with no
// "type". For a boolean option set Boolean; it is sent as
// {"type":"boolean","value":true|false} and Value is ignored.
type SetSessionConfigOptionRequest struct {
	SessionID string
	ConfigID  string
	Value     string
	Boolean   *bool
	Meta      json.RawMessage
}

// SetSessionConfigOptionResponse is the result of session/set_config_option:
// the complete list of options. Invalid options are dropped.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ---- commands and plans ----

// AvailableCommand is a slash command; Name has no leading "/". A malformed
// input reads as nil.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        json.RawMessage        `json:"_meta,omitempty"`
}

// AvailableCommandInput says the command takes free text; Hint describes it.
type AvailableCommandInput struct {
	Hint string          `json:"hint"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanEntry is one task of a plan. All three fields are required strings;
// unknown priority and status values are kept.
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// ---- prompt ----

// PromptRequest is the params of session/prompt. Prompt is always sent (as
// [] when nil); image, audio and embedded resources need the matching
// promptCapabilities.
type PromptRequest struct {
	SessionID string          `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt. stopReason is required
// (an unknown value is kept); a malformed usage reads as nil.
type PromptResponse struct {
	StopReason StopReason      `json:"stopReason"`
	Usage      *Usage          `json:"usage,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// Usage is token usage reported with a prompt response. It is UNSTABLE in
// the spec (whether it counts the turn or the session is unresolved).
type Usage struct {
	TotalTokens       uint64          `json:"totalTokens"`
	InputTokens       uint64          `json:"inputTokens"`
	OutputTokens      uint64          `json:"outputTokens"`
	ThoughtTokens     *uint64         `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64         `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64         `json:"cachedWriteTokens,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// CancelNotification is the params of the session/cancel notification.
type CancelNotification struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request. RequestID is
// the raw JSON-RPC id (number, string or null) of the request to cancel.
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ---- permission ----

// RequestPermissionRequest is the params of session/request_permission.
// ToolCall (only its toolCallId is required) and Options are strict: a bad
// option fails the request, since answering with an option id the agent did
// not offer would be worse.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// PermissionOption is one answer offered to the user.
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission:
// {"outcome":{"outcome":"selected","optionId":"..."}} or
// {"outcome":{"outcome":"cancelled"}}.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// Permission outcomes (PermissionOutcome.Outcome).
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// PermissionOutcome is the user's answer. OptionID is set only for
// OutcomeSelected. Unknown outcomes are kept, and must never be taken for
// approval.
type PermissionOutcome struct {
	Outcome  string          `json:"outcome"`
	OptionID string          `json:"optionId,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ---- elicitation ----

// Elicitation modes (CreateElicitationRequest.Mode); others are custom or
// future modes and must not be rendered as a known one.
const (
	ElicitationModeForm = "form"
	ElicitationModeURL  = "url"
)

// CreateElicitationRequest is the params of elicitation/create. It is scoped
// to a session (SessionID, optionally ToolCallID) or to a pending JSON-RPC
// request (RequestID, raw). Form mode carries RequestedSchema (kept raw);
// URL mode carries ElicitationID and URL. message and mode are required, as
// are the fields of the form and url modes; other modes are kept as sent.
type CreateElicitationRequest struct {
	Message         string          `json:"message"`
	Mode            string          `json:"mode"`
	SessionID       string          `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage `json:"requestId,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`

	// Turn and Seq place the request in its session's stream (they are not
	// on the wire): Turn is the session's running turn when the request
	// arrived (nil if none, or no known session), Seq the sequence number of
	// the last of Turn's events applied before it.
	Turn *Turn  `json:"-"`
	Seq  uint64 `json:"-"`
}

// Elicitation actions (CreateElicitationResponse.Action).
const (
	ElicitationAccept  = "accept"
	ElicitationDecline = "decline"
	ElicitationCancel  = "cancel"
)

// CreateElicitationResponse is the result of elicitation/create. Content (an
// object of field values, kept raw) is only meaningful with
// ElicitationAccept.
type CreateElicitationResponse struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
// Unknown or already completed IDs must be ignored.
type CompleteElicitationNotification struct {
	ElicitationID string          `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// =====================================================================
// encoding
// =====================================================================

func (m AgentAuthMethod) MarshalJSON() ([]byte, error) {
	type body AgentAuthMethod
	return json.Marshal(body(m))
}

func (m TerminalAuthMethod) MarshalJSON() ([]byte, error) {
	type body TerminalAuthMethod
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"terminal", body(m)})
}

func (m EnvVarAuthMethod) MarshalJSON() ([]byte, error) {
	type body EnvVarAuthMethod
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"env_var", body(m)})
}

// MarshalJSON returns Raw unchanged.
func (m UnknownAuthMethod) MarshalJSON() ([]byte, error) {
	return marshalRaw(m.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		}{m.Type, m.ID, m.Name})
	})
}

// MarshalJSON writes no "type": v1 stdio servers have none.
func (s McpServerStdio) MarshalJSON() ([]byte, error) {
	type body McpServerStdio
	s.Args, s.Env = orEmpty(s.Args), orEmpty(s.Env)
	return json.Marshal(body(s))
}

func (s McpServerHTTP) MarshalJSON() ([]byte, error) {
	type body McpServerHTTP
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"http", body(s)})
}

func (s McpServerSSE) MarshalJSON() ([]byte, error) {
	type body McpServerSSE
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"sse", body(s)})
}

// MarshalJSON returns Raw unchanged.
func (s UnknownMcpServer) MarshalJSON() ([]byte, error) {
	return marshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{s.Type})
	})
}

func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type body NewSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type body LoadSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r ResumeSessionRequest) MarshalJSON() ([]byte, error) {
	type body ResumeSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type body ListSessionsResponse
	r.Sessions = orEmpty(r.Sessions)
	return json.Marshal(body(r))
}

func (s SessionModeState) MarshalJSON() ([]byte, error) {
	type body SessionModeState
	s.AvailableModes = orEmpty(s.AvailableModes)
	return json.Marshal(body(s))
}

func (o SelectConfigOption) MarshalJSON() ([]byte, error) {
	type body SelectConfigOption
	var opts any = orEmpty(o.Options)
	if len(o.Groups) > 0 {
		opts = o.Groups
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		body
		Options any `json:"options"`
	}{"select", body(o), opts})
}

func (g SelectGroup) MarshalJSON() ([]byte, error) {
	type body SelectGroup
	g.Options = orEmpty(g.Options)
	return json.Marshal(body(g))
}

func (o BooleanConfigOption) MarshalJSON() ([]byte, error) {
	type body BooleanConfigOption
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"boolean", body(o)})
}

// MarshalJSON returns Raw unchanged.
func (o UnknownConfigOption) MarshalJSON() ([]byte, error) {
	return marshalRaw(o.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}{o.Type, o.ID})
	})
}

// MarshalJSON sends a select value without "type" and a boolean value with
// "type":"boolean" (see the type's doc).
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	if r.Boolean != nil {
		return json.Marshal(struct {
			SessionID string          `json:"sessionId"`
			ConfigID  string          `json:"configId"`
			Type      string          `json:"type"`
			Value     bool            `json:"value"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}{r.SessionID, r.ConfigID, "boolean", *r.Boolean, r.Meta})
	}
	return json.Marshal(struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     string          `json:"value"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}{r.SessionID, r.ConfigID, r.Value, r.Meta})
}

func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type body SetSessionConfigOptionResponse
	r.ConfigOptions = orEmpty(r.ConfigOptions)
	return json.Marshal(body(r))
}

func (r PromptRequest) MarshalJSON() ([]byte, error) {
	for i, c := range r.Prompt {
		if c == nil {
			return nil, fmt.Errorf("acp: prompt request: Prompt[%d] is nil", i)
		}
	}
	type body PromptRequest
	r.Prompt = orEmpty(r.Prompt)
	return json.Marshal(body(r))
}

// MarshalJSON writes the tool call without a "sessionUpdate" key and the
// options as [] when nil.
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type toolCall ToolCallUpdate
	return json.Marshal(struct {
		SessionID string             `json:"sessionId"`
		ToolCall  toolCall           `json:"toolCall"`
		Options   []PermissionOption `json:"options"`
		Meta      json.RawMessage    `json:"_meta,omitempty"`
	}{r.SessionID, toolCall(r.ToolCall), orEmpty(r.Options), r.Meta})
}

func (r CancelRequestNotification) MarshalJSON() ([]byte, error) {
	type body CancelRequestNotification
	if len(r.RequestID) == 0 {
		r.RequestID = json.RawMessage("null")
	}
	return json.Marshal(body(r))
}

// =====================================================================
// decoding
// =====================================================================

// decodeMetaOnly decodes a type that has nothing but _meta. It never fails:
// agents answer null, {} or, in doc examples, other shapes for empty results.
func decodeMetaOnly(b []byte) json.RawMessage {
	var w struct {
		Meta wireMeta `json:"_meta"`
	}
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	return w.Meta.raw()
}

// UnmarshalJSON never fails (a _meta-only result).
func (r *AuthenticateResponse) UnmarshalJSON(b []byte) error {
	*r = AuthenticateResponse{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON never fails.
func (r *LogoutRequest) UnmarshalJSON(b []byte) error {
	*r = LogoutRequest{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON never fails (a _meta-only result).
func (r *LogoutResponse) UnmarshalJSON(b []byte) error {
	*r = LogoutResponse{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON never fails (a _meta-only result).
func (r *CloseSessionResponse) UnmarshalJSON(b []byte) error {
	*r = CloseSessionResponse{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON never fails (a _meta-only result).
func (r *DeleteSessionResponse) UnmarshalJSON(b []byte) error {
	*r = DeleteSessionResponse{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON never fails (a _meta-only result).
func (r *SetSessionModeResponse) UnmarshalJSON(b []byte) error {
	*r = SetSessionModeResponse{Meta: decodeMetaOnly(b)}
	return nil
}

// UnmarshalJSON fails only for a non-object, so an enclosing optional
// marker reads as nil.
func (c *Capability) UnmarshalJSON(b []byte) error {
	var w struct {
		Meta wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("capability", err)
	}
	*c = Capability{Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name and version are required; title is lenient.
func (i *Implementation) UnmarshalJSON(b []byte) error {
	var w struct {
		Name    wireStr  `json:"name"`
		Title   wireStr  `json:"title"`
		Version wireStr  `json:"version"`
		Meta    wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("implementation", err)
	}
	if !w.Name.ok {
		return errMissing("implementation", "name")
	}
	if !w.Version.ok {
		return errMissing("implementation", "version")
	}
	*i = Implementation{Name: w.Name.v, Title: w.Title.v, Version: w.Version.v, Meta: w.Meta.raw()}
	return nil
}

// The capability decoders fail only when given a non-object, so that the
// enclosing field reads as its default; inside, every member is lenient.

func (c *ClientCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		FS          wireOpt[FileSystemCapabilities]    `json:"fs"`
		Terminal    wireOpt[bool]                      `json:"terminal"`
		Session     wireOpt[ClientSessionCapabilities] `json:"session"`
		Auth        wireOpt[AuthCapabilities]          `json:"auth"`
		Elicitation wireOpt[ElicitationCapabilities]   `json:"elicitation"`
		Meta        wireMeta                           `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("client capabilities", err)
	}
	*c = ClientCapabilities{FS: w.FS.v, Terminal: w.Terminal.v, Session: w.Session.ptr(),
		Auth: w.Auth.v, Elicitation: w.Elicitation.ptr(), Meta: w.Meta.raw()}
	return nil
}

func (c *FileSystemCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		ReadTextFile  wireOpt[bool] `json:"readTextFile"`
		WriteTextFile wireOpt[bool] `json:"writeTextFile"`
		Meta          wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("fs capabilities", err)
	}
	*c = FileSystemCapabilities{ReadTextFile: w.ReadTextFile.v, WriteTextFile: w.WriteTextFile.v, Meta: w.Meta.raw()}
	return nil
}

func (c *AuthCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		Terminal wireOpt[bool] `json:"terminal"`
		Meta     wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("auth capabilities", err)
	}
	*c = AuthCapabilities{Terminal: w.Terminal.v, Meta: w.Meta.raw()}
	return nil
}

func (c *ElicitationCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		Form wireOpt[Capability] `json:"form"`
		URL  wireOpt[Capability] `json:"url"`
		Meta wireMeta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("elicitation capabilities", err)
	}
	*c = ElicitationCapabilities{Form: w.Form.ptr(), URL: w.URL.ptr(), Meta: w.Meta.raw()}
	return nil
}

func (c *ClientSessionCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		ConfigOptions wireOpt[SessionConfigOptionsCapabilities] `json:"configOptions"`
		Meta          wireMeta                                  `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session capabilities", err)
	}
	*c = ClientSessionCapabilities{ConfigOptions: w.ConfigOptions.ptr(), Meta: w.Meta.raw()}
	return nil
}

func (c *SessionConfigOptionsCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		Boolean wireOpt[Capability] `json:"boolean"`
		Meta    wireMeta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("config options capabilities", err)
	}
	*c = SessionConfigOptionsCapabilities{Boolean: w.Boolean.ptr(), Meta: w.Meta.raw()}
	return nil
}

func (c *AgentCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		LoadSession         wireOpt[bool]                  `json:"loadSession"`
		PromptCapabilities  wireOpt[PromptCapabilities]    `json:"promptCapabilities"`
		McpCapabilities     wireOpt[McpCapabilities]       `json:"mcpCapabilities"`
		SessionCapabilities wireOpt[SessionCapabilities]   `json:"sessionCapabilities"`
		Auth                wireOpt[AgentAuthCapabilities] `json:"auth"`
		Meta                wireMeta                       `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("agent capabilities", err)
	}
	*c = AgentCapabilities{LoadSession: w.LoadSession.v, PromptCapabilities: w.PromptCapabilities.v,
		McpCapabilities: w.McpCapabilities.v, SessionCapabilities: w.SessionCapabilities.v,
		Auth: w.Auth.v, Meta: w.Meta.raw()}
	return nil
}

func (c *PromptCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		Image           wireOpt[bool] `json:"image"`
		Audio           wireOpt[bool] `json:"audio"`
		EmbeddedContext wireOpt[bool] `json:"embeddedContext"`
		Meta            wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("prompt capabilities", err)
	}
	*c = PromptCapabilities{Image: w.Image.v, Audio: w.Audio.v, EmbeddedContext: w.EmbeddedContext.v, Meta: w.Meta.raw()}
	return nil
}

func (c *McpCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		HTTP wireOpt[bool] `json:"http"`
		SSE  wireOpt[bool] `json:"sse"`
		Meta wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("mcp capabilities", err)
	}
	*c = McpCapabilities{HTTP: w.HTTP.v, SSE: w.SSE.v, Meta: w.Meta.raw()}
	return nil
}

func (c *SessionCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		List                  wireOpt[Capability] `json:"list"`
		Delete                wireOpt[Capability] `json:"delete"`
		AdditionalDirectories wireOpt[Capability] `json:"additionalDirectories"`
		Resume                wireOpt[Capability] `json:"resume"`
		Close                 wireOpt[Capability] `json:"close"`
		Meta                  wireMeta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session capabilities", err)
	}
	*c = SessionCapabilities{List: w.List.ptr(), Delete: w.Delete.ptr(),
		AdditionalDirectories: w.AdditionalDirectories.ptr(), Resume: w.Resume.ptr(),
		Close: w.Close.ptr(), Meta: w.Meta.raw()}
	return nil
}

func (c *AgentAuthCapabilities) UnmarshalJSON(b []byte) error {
	var w struct {
		Logout wireOpt[Capability] `json:"logout"`
		Meta   wireMeta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("agent auth capabilities", err)
	}
	*c = AgentAuthCapabilities{Logout: w.Logout.ptr(), Meta: w.Meta.raw()}
	return nil
}

// wireProtocolVersion reads the uint16 protocol version strictly.
func wireProtocolVersion(typ string, w wireOpt[int]) (int, error) {
	if !w.ok || w.v < 0 || w.v > 65535 {
		return 0, errMissing(typ, "protocolVersion")
	}
	return w.v, nil
}

// UnmarshalJSON: protocolVersion is required; the rest is lenient.
func (r *InitializeRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		ProtocolVersion    wireOpt[int]                `json:"protocolVersion"`
		ClientCapabilities wireOpt[ClientCapabilities] `json:"clientCapabilities"`
		ClientInfo         wireOpt[Implementation]     `json:"clientInfo"`
		Meta               wireMeta                    `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("initialize request", err)
	}
	v, err := wireProtocolVersion("initialize request", w.ProtocolVersion)
	if err != nil {
		return err
	}
	*r = InitializeRequest{ProtocolVersion: v, ClientCapabilities: w.ClientCapabilities.v,
		ClientInfo: w.ClientInfo.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: protocolVersion is required; the rest is lenient.
func (r *InitializeResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		ProtocolVersion   wireOpt[int]               `json:"protocolVersion"`
		AgentCapabilities wireOpt[AgentCapabilities] `json:"agentCapabilities"`
		AuthMethods       wireList[authMethodField]  `json:"authMethods"`
		AgentInfo         wireOpt[Implementation]    `json:"agentInfo"`
		Meta              wireMeta                   `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("initialize response", err)
	}
	v, err := wireProtocolVersion("initialize response", w.ProtocolVersion)
	if err != nil {
		return err
	}
	var methods []AuthMethod
	if w.AuthMethods.ok {
		methods = make([]AuthMethod, len(w.AuthMethods.v))
		for i, f := range w.AuthMethods.v {
			methods[i] = f.v
		}
	}
	*r = InitializeResponse{ProtocolVersion: v, AgentCapabilities: w.AgentCapabilities.v,
		AuthMethods: methods, AgentInfo: w.AgentInfo.ptr(), Meta: w.Meta.raw()}
	return nil
}

// authMethodCommon is what every auth method shares.
type authMethodCommon struct {
	ID          wireStr  `json:"id"`
	Name        wireStr  `json:"name"`
	Description wireStr  `json:"description"`
	Meta        wireMeta `json:"_meta"`
}

func (c authMethodCommon) check() error {
	if !c.ID.ok {
		return errMissing("auth method", "id")
	}
	if !c.Name.ok {
		return errMissing("auth method", "name")
	}
	return nil
}

// unmarshalAuthMethod decodes an auth method: no "type" (or null) is an
// agent method; "terminal" and "env_var" are known; any other string type is
// unknown. id and name are required for every variant.
func unmarshalAuthMethod(data []byte) (AuthMethod, error) {
	raw, found, err := jsonFindKey(data, "type")
	if err != nil {
		return nil, errDecode("auth method", err)
	}
	typ := ""
	if found && !jsonIsNull(raw) {
		s, ok := jsonString(raw)
		if !ok {
			return nil, errMissing("auth method", "type")
		}
		typ = s
	}
	switch typ {
	case "":
		var m AgentAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &m, nil
	case "terminal":
		var m TerminalAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &m, nil
	case "env_var":
		var m EnvVarAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &m, nil
	}
	var c authMethodCommon
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, errDecode("auth method", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &UnknownAuthMethod{Type: typ, ID: c.ID.v, Name: c.Name.v, Raw: rawCopy(data)}, nil
}

type authMethodField struct{ v AuthMethod }

func (f *authMethodField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalAuthMethod(b)
	return err
}

// UnmarshalJSON: id and name are required.
func (m *AgentAuthMethod) UnmarshalJSON(b []byte) error {
	var c authMethodCommon
	if err := json.Unmarshal(b, &c); err != nil {
		return errDecode("auth method", err)
	}
	if err := c.check(); err != nil {
		return err
	}
	*m = AgentAuthMethod{ID: c.ID.v, Name: c.Name.v, Description: c.Description.v, Meta: c.Meta.raw()}
	return nil
}

// UnmarshalJSON: id and name are required; bad args items are dropped, a
// malformed env reads as empty.
func (m *TerminalAuthMethod) UnmarshalJSON(b []byte) error {
	var w struct {
		authMethodCommon
		Args wireList[string]           `json:"args"`
		Env  wireOpt[map[string]string] `json:"env"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("auth method", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	*m = TerminalAuthMethod{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Args: w.Args.v, Env: w.Env.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: id and name are required; bad vars are dropped.
func (m *EnvVarAuthMethod) UnmarshalJSON(b []byte) error {
	var w struct {
		authMethodCommon
		Vars wireList[EnvVarSpec] `json:"vars"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("auth method", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	*m = EnvVarAuthMethod{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Vars: w.Vars.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name is required; the rest is lenient.
func (v *EnvVarSpec) UnmarshalJSON(b []byte) error {
	var w struct {
		Name     wireStr       `json:"name"`
		Label    wireStr       `json:"label"`
		Secret   wireOpt[bool] `json:"secret"`
		Optional wireOpt[bool] `json:"optional"`
		Meta     wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("env var", err)
	}
	if !w.Name.ok {
		return errMissing("env var", "name")
	}
	*v = EnvVarSpec{Name: w.Name.v, Label: w.Label.v, Secret: w.Secret.ptr(),
		Optional: w.Optional.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: methodId is required.
func (r *AuthenticateRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		MethodID wireStr  `json:"methodId"`
		Meta     wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("authenticate request", err)
	}
	if !w.MethodID.ok {
		return errMissing("authenticate request", "methodId")
	}
	*r = AuthenticateRequest{MethodID: w.MethodID.v, Meta: w.Meta.raw()}
	return nil
}

// unmarshalMcpServer decodes an MCP server config: no "type" (or "stdio")
// is stdio, "http" and "sse" are known, any other type is unknown.
func unmarshalMcpServer(data []byte) (McpServer, error) {
	raw, found, err := jsonFindKey(data, "type")
	if err != nil {
		return nil, errDecode("mcp server", err)
	}
	typ := ""
	if found && !jsonIsNull(raw) {
		s, ok := jsonString(raw)
		if !ok {
			return nil, errMissing("mcp server", "type")
		}
		typ = s
	}
	var s interface {
		McpServer
		json.Unmarshaler
	}
	switch typ {
	case "", "stdio":
		s = new(McpServerStdio)
	case "http":
		s = new(McpServerHTTP)
	case "sse":
		s = new(McpServerSSE)
	default:
		if err := jsonObject(data); err != nil {
			return nil, errDecode("mcp server", err)
		}
		return &UnknownMcpServer{Type: typ, Raw: rawCopy(data)}, nil
	}
	if err := s.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return s, nil
}

type mcpServerField struct{ v McpServer }

func (f *mcpServerField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalMcpServer(b)
	return err
}

func mcpServers(l wireList[mcpServerField]) []McpServer {
	if !l.ok {
		return nil
	}
	out := make([]McpServer, len(l.v))
	for i, f := range l.v {
		out[i] = f.v
	}
	return out
}

// UnmarshalJSON: name, command, args and env are required (strict, as in
// the schema).
func (s *McpServerStdio) UnmarshalJSON(b []byte) error {
	var w struct {
		Name    wireStr                `json:"name"`
		Command wireStr                `json:"command"`
		Args    wireOpt[[]string]      `json:"args"`
		Env     wireOpt[[]EnvVariable] `json:"env"`
		Meta    wireMeta               `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("mcp server", err)
	}
	switch {
	case !w.Name.ok:
		return errMissing("mcp server", "name")
	case !w.Command.ok:
		return errMissing("mcp server", "command")
	case !w.Args.ok:
		return errMissing("mcp server", "args")
	case !w.Env.ok:
		return errMissing("mcp server", "env")
	}
	*s = McpServerStdio{Name: w.Name.v, Command: w.Command.v, Args: w.Args.v, Env: w.Env.v, Meta: w.Meta.raw()}
	return nil
}

type mcpRemoteWire struct {
	Name    wireStr               `json:"name"`
	URL     wireStr               `json:"url"`
	Headers wireOpt[[]HTTPHeader] `json:"headers"`
	Meta    wireMeta              `json:"_meta"`
}

func decodeMcpRemote(b []byte) (mcpRemoteWire, error) {
	var w mcpRemoteWire
	if err := json.Unmarshal(b, &w); err != nil {
		return w, errDecode("mcp server", err)
	}
	switch {
	case !w.Name.ok:
		return w, errMissing("mcp server", "name")
	case !w.URL.ok:
		return w, errMissing("mcp server", "url")
	case !w.Headers.ok:
		return w, errMissing("mcp server", "headers")
	}
	return w, nil
}

// UnmarshalJSON: name, url and headers are required.
func (s *McpServerHTTP) UnmarshalJSON(b []byte) error {
	w, err := decodeMcpRemote(b)
	if err != nil {
		return err
	}
	*s = McpServerHTTP{Name: w.Name.v, URL: w.URL.v, Headers: w.Headers.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name, url and headers are required.
func (s *McpServerSSE) UnmarshalJSON(b []byte) error {
	w, err := decodeMcpRemote(b)
	if err != nil {
		return err
	}
	*s = McpServerSSE{Name: w.Name.v, URL: w.URL.v, Headers: w.Headers.v, Meta: w.Meta.raw()}
	return nil
}

type nameValueWire struct {
	Name  wireStr  `json:"name"`
	Value wireStr  `json:"value"`
	Meta  wireMeta `json:"_meta"`
}

func decodeNameValue(typ string, b []byte) (nameValueWire, error) {
	var w nameValueWire
	if err := json.Unmarshal(b, &w); err != nil {
		return w, errDecode(typ, err)
	}
	if !w.Name.ok {
		return w, errMissing(typ, "name")
	}
	if !w.Value.ok {
		return w, errMissing(typ, "value")
	}
	return w, nil
}

// UnmarshalJSON: name and value are required.
func (e *EnvVariable) UnmarshalJSON(b []byte) error {
	w, err := decodeNameValue("env variable", b)
	if err != nil {
		return err
	}
	*e = EnvVariable{Name: w.Name.v, Value: w.Value.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name and value are required.
func (h *HTTPHeader) UnmarshalJSON(b []byte) error {
	w, err := decodeNameValue("http header", b)
	if err != nil {
		return err
	}
	*h = HTTPHeader{Name: w.Name.v, Value: w.Value.v, Meta: w.Meta.raw()}
	return nil
}

// sessionSetupWire is the shape shared by the new/load/resume requests.
type sessionSetupWire struct {
	SessionID             wireStr                  `json:"sessionId"`
	Cwd                   wireStr                  `json:"cwd"`
	McpServers            wireList[mcpServerField] `json:"mcpServers"`
	AdditionalDirectories wireList[string]         `json:"additionalDirectories"`
	Meta                  wireMeta                 `json:"_meta"`
}

func decodeSessionSetup(typ string, b []byte, needSession, needServers bool) (sessionSetupWire, error) {
	var w sessionSetupWire
	if err := json.Unmarshal(b, &w); err != nil {
		return w, errDecode(typ, err)
	}
	switch {
	case needSession && !w.SessionID.ok:
		return w, errMissing(typ, "sessionId")
	case !w.Cwd.ok:
		return w, errMissing(typ, "cwd")
	case needServers && !w.McpServers.seen:
		return w, errMissing(typ, "mcpServers")
	}
	return w, nil
}

// UnmarshalJSON: cwd and mcpServers are required; invalid servers are
// dropped.
func (r *NewSessionRequest) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionSetup("new session request", b, false, true)
	if err != nil {
		return err
	}
	*r = NewSessionRequest{Cwd: w.Cwd.v, McpServers: mcpServers(w.McpServers),
		AdditionalDirectories: w.AdditionalDirectories.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId, cwd and mcpServers are required.
func (r *LoadSessionRequest) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionSetup("load session request", b, true, true)
	if err != nil {
		return err
	}
	*r = LoadSessionRequest{SessionID: w.SessionID.v, Cwd: w.Cwd.v, McpServers: mcpServers(w.McpServers),
		AdditionalDirectories: w.AdditionalDirectories.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId and cwd are required.
func (r *ResumeSessionRequest) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionSetup("resume session request", b, true, false)
	if err != nil {
		return err
	}
	*r = ResumeSessionRequest{SessionID: w.SessionID.v, Cwd: w.Cwd.v, McpServers: mcpServers(w.McpServers),
		AdditionalDirectories: w.AdditionalDirectories.v, Meta: w.Meta.raw()}
	return nil
}

// sessionStateWire is the shape shared by the new/load/resume results.
type sessionStateWire struct {
	SessionID     wireStr                     `json:"sessionId"`
	Modes         wireOpt[SessionModeState]   `json:"modes"`
	ConfigOptions wireList[configOptionField] `json:"configOptions"`
	Meta          wireMeta                    `json:"_meta"`
}

func decodeSessionState(typ string, b []byte) (sessionStateWire, error) {
	var w sessionStateWire
	if err := json.Unmarshal(b, &w); err != nil {
		return w, errDecode(typ, err)
	}
	return w, nil
}

// UnmarshalJSON: sessionId is required; modes and configOptions are
// lenient.
func (r *NewSessionResponse) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionState("new session response", b)
	if err != nil {
		return err
	}
	if !w.SessionID.ok {
		return errMissing("new session response", "sessionId")
	}
	*r = NewSessionResponse{SessionID: w.SessionID.v, Modes: w.Modes.ptr(),
		ConfigOptions: configOptions(w.ConfigOptions), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON accepts null and {}; modes and configOptions are lenient.
func (r *LoadSessionResponse) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionState("load session response", b)
	if err != nil {
		return err
	}
	*r = LoadSessionResponse{Modes: w.Modes.ptr(), ConfigOptions: configOptions(w.ConfigOptions), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON accepts null and {}; modes and configOptions are lenient.
func (r *ResumeSessionResponse) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionState("resume session response", b)
	if err != nil {
		return err
	}
	*r = ResumeSessionResponse{Modes: w.Modes.ptr(), ConfigOptions: configOptions(w.ConfigOptions), Meta: w.Meta.raw()}
	return nil
}

type sessionIDWire struct {
	SessionID wireStr  `json:"sessionId"`
	Meta      wireMeta `json:"_meta"`
}

func decodeSessionID(typ string, b []byte) (sessionIDWire, error) {
	var w sessionIDWire
	if err := json.Unmarshal(b, &w); err != nil {
		return w, errDecode(typ, err)
	}
	if !w.SessionID.ok {
		return w, errMissing(typ, "sessionId")
	}
	return w, nil
}

// UnmarshalJSON: sessionId is required.
func (r *CloseSessionRequest) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionID("close session request", b)
	if err != nil {
		return err
	}
	*r = CloseSessionRequest{SessionID: w.SessionID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId is required.
func (r *DeleteSessionRequest) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionID("delete session request", b)
	if err != nil {
		return err
	}
	*r = DeleteSessionRequest{SessionID: w.SessionID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId is required.
func (r *CancelNotification) UnmarshalJSON(b []byte) error {
	w, err := decodeSessionID("cancel notification", b)
	if err != nil {
		return err
	}
	*r = CancelNotification{SessionID: w.SessionID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: everything is optional.
func (r *ListSessionsRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		Cwd    wireStr  `json:"cwd"`
		Cursor wireStr  `json:"cursor"`
		Meta   wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("list sessions request", err)
	}
	*r = ListSessionsRequest{Cwd: w.Cwd.v, Cursor: w.Cursor.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessions must be present (a non-array reads as empty);
// invalid entries are dropped; a malformed nextCursor reads as none.
func (r *ListSessionsResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Sessions   wireList[SessionInfo] `json:"sessions"`
		NextCursor wireStr               `json:"nextCursor"`
		Meta       wireMeta              `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("list sessions response", err)
	}
	if !w.Sessions.seen {
		return errMissing("list sessions response", "sessions")
	}
	*r = ListSessionsResponse{Sessions: orEmpty(w.Sessions.v), NextCursor: w.NextCursor.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId and cwd are required; the rest is lenient.
func (s *SessionInfo) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID             wireStr          `json:"sessionId"`
		Cwd                   wireStr          `json:"cwd"`
		AdditionalDirectories wireList[string] `json:"additionalDirectories"`
		Title                 wireStr          `json:"title"`
		UpdatedAt             wireStr          `json:"updatedAt"`
		Meta                  wireMeta         `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session info", err)
	}
	if !w.SessionID.ok {
		return errMissing("session info", "sessionId")
	}
	if !w.Cwd.ok {
		return errMissing("session info", "cwd")
	}
	*s = SessionInfo{SessionID: w.SessionID.v, Cwd: w.Cwd.v, AdditionalDirectories: w.AdditionalDirectories.v,
		Title: w.Title.ptr(), UpdatedAt: w.UpdatedAt.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: currentModeId and availableModes are required; invalid
// modes are dropped.
func (s *SessionModeState) UnmarshalJSON(b []byte) error {
	var w struct {
		CurrentModeID  wireStr               `json:"currentModeId"`
		AvailableModes wireList[SessionMode] `json:"availableModes"`
		Meta           wireMeta              `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session mode state", err)
	}
	if !w.CurrentModeID.ok {
		return errMissing("session mode state", "currentModeId")
	}
	if !w.AvailableModes.seen {
		return errMissing("session mode state", "availableModes")
	}
	*s = SessionModeState{CurrentModeID: w.CurrentModeID.v, AvailableModes: orEmpty(w.AvailableModes.v), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: id and name are required.
func (m *SessionMode) UnmarshalJSON(b []byte) error {
	var w struct {
		ID          wireStr  `json:"id"`
		Name        wireStr  `json:"name"`
		Description wireStr  `json:"description"`
		Meta        wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session mode", err)
	}
	if !w.ID.ok {
		return errMissing("session mode", "id")
	}
	if !w.Name.ok {
		return errMissing("session mode", "name")
	}
	*m = SessionMode{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId and modeId are required.
func (r *SetSessionModeRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID wireStr  `json:"sessionId"`
		ModeID    wireStr  `json:"modeId"`
		Meta      wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("set session mode request", err)
	}
	if !w.SessionID.ok {
		return errMissing("set session mode request", "sessionId")
	}
	if !w.ModeID.ok {
		return errMissing("set session mode request", "modeId")
	}
	*r = SetSessionModeRequest{SessionID: w.SessionID.v, ModeID: w.ModeID.v, Meta: w.Meta.raw()}
	return nil
}

// configOptionCommon is what every config option shares.
type configOptionCommon struct {
	ID          wireStr  `json:"id"`
	Name        wireStr  `json:"name"`
	Description wireStr  `json:"description"`
	Category    wireStr  `json:"category"`
	Meta        wireMeta `json:"_meta"`
}

func (c configOptionCommon) check() error {
	if !c.ID.ok {
		return errMissing("config option", "id")
	}
	if !c.Name.ok {
		return errMissing("config option", "name")
	}
	return nil
}

// unmarshalConfigOption decodes a config option: "select" and "boolean" are
// known, other string types are kept as unknown; "type", id and name are
// required.
func unmarshalConfigOption(data []byte) (SessionConfigOption, error) {
	t, found, err := jsonDiscriminator(data, "type")
	if err != nil {
		return nil, errDecode("config option", err)
	}
	if !found {
		return nil, errMissing("config option", "type")
	}
	switch string(t) {
	case "select":
		var o SelectConfigOption
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &o, nil
	case "boolean":
		var o BooleanConfigOption
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &o, nil
	}
	var c configOptionCommon
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, errDecode("config option", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &UnknownConfigOption{Type: string(t), ID: c.ID.v, Raw: rawCopy(data)}, nil
}

type configOptionField struct{ v SessionConfigOption }

func (f *configOptionField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalConfigOption(b)
	return err
}

func configOptions(l wireList[configOptionField]) []SessionConfigOption {
	if !l.ok {
		return nil
	}
	out := make([]SessionConfigOption, len(l.v))
	for i, f := range l.v {
		out[i] = f.v
	}
	return out
}

// UnmarshalJSON: id, name, currentValue and options (an array) are
// required. Options are grouped when any element has a "group" key; invalid
// options and groups are dropped.
func (o *SelectConfigOption) UnmarshalJSON(b []byte) error {
	var w struct {
		configOptionCommon
		CurrentValue wireStr                    `json:"currentValue"`
		Options      wireOpt[[]json.RawMessage] `json:"options"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("select config option", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	if !w.CurrentValue.ok {
		return errMissing("select config option", "currentValue")
	}
	if !w.Options.ok {
		return errMissing("select config option", "options")
	}
	*o = SelectConfigOption{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Category: w.Category.v, CurrentValue: w.CurrentValue.v, Meta: w.Meta.raw()}
	grouped := false
	for _, e := range w.Options.v {
		if _, ok, _ := jsonFindKey(e, "group"); ok {
			grouped = true
			break
		}
	}
	if grouped {
		o.Groups = make([]SelectGroup, 0, len(w.Options.v))
		for _, e := range w.Options.v {
			var g SelectGroup
			if g.UnmarshalJSON(e) == nil {
				o.Groups = append(o.Groups, g)
			}
		}
		if len(o.Groups) > 0 {
			return nil
		}
		// No valid group left: "[]" cannot say "grouped", so read it as an
		// empty flat list, which is what re-encoding it would give.
		o.Groups = nil
	}
	o.Options = make([]SelectOption, 0, len(w.Options.v))
	for _, e := range w.Options.v {
		var v SelectOption
		if v.UnmarshalJSON(e) == nil {
			o.Options = append(o.Options, v)
		}
	}
	return nil
}

// UnmarshalJSON: value and name are required.
func (v *SelectOption) UnmarshalJSON(b []byte) error {
	var w struct {
		Value       wireStr  `json:"value"`
		Name        wireStr  `json:"name"`
		Description wireStr  `json:"description"`
		Meta        wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("select option", err)
	}
	if !w.Value.ok {
		return errMissing("select option", "value")
	}
	if !w.Name.ok {
		return errMissing("select option", "name")
	}
	*v = SelectOption{Value: w.Value.v, Name: w.Name.v, Description: w.Description.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: group, name and options are required; invalid options are
// dropped.
func (g *SelectGroup) UnmarshalJSON(b []byte) error {
	var w struct {
		Group   wireStr                `json:"group"`
		Name    wireStr                `json:"name"`
		Options wireList[SelectOption] `json:"options"`
		Meta    wireMeta               `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("select group", err)
	}
	switch {
	case !w.Group.ok:
		return errMissing("select group", "group")
	case !w.Name.ok:
		return errMissing("select group", "name")
	case !w.Options.seen:
		return errMissing("select group", "options")
	}
	*g = SelectGroup{Group: w.Group.v, Name: w.Name.v, Options: orEmpty(w.Options.v), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: id, name and a boolean currentValue are required.
func (o *BooleanConfigOption) UnmarshalJSON(b []byte) error {
	var w struct {
		configOptionCommon
		CurrentValue wireOpt[bool] `json:"currentValue"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("boolean config option", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	if !w.CurrentValue.ok {
		return errMissing("boolean config option", "currentValue")
	}
	*o = BooleanConfigOption{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Category: w.Category.v, CurrentValue: w.CurrentValue.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId, configId and value are required; "type":"boolean"
// with a boolean value sets Boolean, anything else must be a string value.
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(b []byte) error {
	const typ = "set config option request"
	var w struct {
		SessionID wireStr  `json:"sessionId"`
		ConfigID  wireStr  `json:"configId"`
		Type      wireStr  `json:"type"`
		Value     wireRaw  `json:"value"`
		Meta      wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode(typ, err)
	}
	if !w.SessionID.ok {
		return errMissing(typ, "sessionId")
	}
	if !w.ConfigID.ok {
		return errMissing(typ, "configId")
	}
	*r = SetSessionConfigOptionRequest{SessionID: w.SessionID.v, ConfigID: w.ConfigID.v, Meta: w.Meta.raw()}
	if w.Type.v == "boolean" {
		var v bool
		if json.Unmarshal(w.Value.v, &v) != nil {
			return errMissing(typ, "value")
		}
		r.Boolean = &v
		return nil
	}
	s, ok := jsonString(w.Value.v)
	if !ok {
		return errMissing(typ, "value")
	}
	r.Value = s
	return nil
}

// UnmarshalJSON: configOptions must be present (a non-array reads as
// empty); invalid options are dropped.
func (r *SetSessionConfigOptionResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		ConfigOptions wireList[configOptionField] `json:"configOptions"`
		Meta          wireMeta                    `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("set config option response", err)
	}
	if !w.ConfigOptions.seen {
		return errMissing("set config option response", "configOptions")
	}
	*r = SetSessionConfigOptionResponse{ConfigOptions: orEmpty(configOptions(w.ConfigOptions)), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name and description are required; a malformed input
// reads as nil.
func (c *AvailableCommand) UnmarshalJSON(b []byte) error {
	var w struct {
		Name        wireStr                        `json:"name"`
		Description wireStr                        `json:"description"`
		Input       wireOpt[AvailableCommandInput] `json:"input"`
		Meta        wireMeta                       `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("available command", err)
	}
	if !w.Name.ok {
		return errMissing("available command", "name")
	}
	if !w.Description.ok {
		return errMissing("available command", "description")
	}
	*c = AvailableCommand{Name: w.Name.v, Description: w.Description.v, Input: w.Input.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: hint is required.
func (in *AvailableCommandInput) UnmarshalJSON(b []byte) error {
	var w struct {
		Hint wireStr  `json:"hint"`
		Meta wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("command input", err)
	}
	if !w.Hint.ok {
		return errMissing("command input", "hint")
	}
	*in = AvailableCommandInput{Hint: w.Hint.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: content, priority and status are required strings.
func (e *PlanEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		Content  wireStr  `json:"content"`
		Priority wireStr  `json:"priority"`
		Status   wireStr  `json:"status"`
		Meta     wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("plan entry", err)
	}
	switch {
	case !w.Content.ok:
		return errMissing("plan entry", "content")
	case !w.Priority.ok:
		return errMissing("plan entry", "priority")
	case !w.Status.ok:
		return errMissing("plan entry", "status")
	}
	*e = PlanEntry{Content: w.Content.v, Priority: PlanEntryPriority(w.Priority.v),
		Status: PlanEntryStatus(w.Status.v), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId and prompt are required; every block must decode
// (unknown types are kept).
func (r *PromptRequest) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID wireStr                      `json:"sessionId"`
		Prompt    wireOpt[[]contentBlockField] `json:"prompt"`
		Meta      wireMeta                     `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("prompt request", err)
	}
	if !w.SessionID.ok {
		return errMissing("prompt request", "sessionId")
	}
	if !w.Prompt.ok {
		return errMissing("prompt request", "prompt")
	}
	prompt := make([]ContentBlock, len(w.Prompt.v))
	for i, f := range w.Prompt.v {
		prompt[i] = f.v
	}
	*r = PromptRequest{SessionID: w.SessionID.v, Prompt: prompt, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: stopReason is a required string (unknown values are kept);
// a malformed usage reads as nil.
func (r *PromptResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		StopReason wireStr        `json:"stopReason"`
		Usage      wireOpt[Usage] `json:"usage"`
		Meta       wireMeta       `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("prompt response", err)
	}
	if !w.StopReason.ok {
		return errMissing("prompt response", "stopReason")
	}
	*r = PromptResponse{StopReason: StopReason(w.StopReason.v), Usage: w.Usage.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: the three totals are required; the optional counts are
// lenient.
func (u *Usage) UnmarshalJSON(b []byte) error {
	var w struct {
		TotalTokens       wireOpt[uint64] `json:"totalTokens"`
		InputTokens       wireOpt[uint64] `json:"inputTokens"`
		OutputTokens      wireOpt[uint64] `json:"outputTokens"`
		ThoughtTokens     wireOpt[uint64] `json:"thoughtTokens"`
		CachedReadTokens  wireOpt[uint64] `json:"cachedReadTokens"`
		CachedWriteTokens wireOpt[uint64] `json:"cachedWriteTokens"`
		Meta              wireMeta        `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("usage", err)
	}
	switch {
	case !w.TotalTokens.ok:
		return errMissing("usage", "totalTokens")
	case !w.InputTokens.ok:
		return errMissing("usage", "inputTokens")
	case !w.OutputTokens.ok:
		return errMissing("usage", "outputTokens")
	}
	*u = Usage{TotalTokens: w.TotalTokens.v, InputTokens: w.InputTokens.v, OutputTokens: w.OutputTokens.v,
		ThoughtTokens: w.ThoughtTokens.ptr(), CachedReadTokens: w.CachedReadTokens.ptr(),
		CachedWriteTokens: w.CachedWriteTokens.ptr(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: requestId is required (null is a valid id and is kept).
func (r *CancelRequestNotification) UnmarshalJSON(b []byte) error {
	var w struct {
		RequestID wireAny  `json:"requestId"`
		Meta      wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("cancel request notification", err)
	}
	if !w.RequestID.seen {
		return errMissing("cancel request notification", "requestId")
	}
	*r = CancelRequestNotification{RequestID: w.RequestID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: sessionId, toolCall and options are required and strict.
func (r *RequestPermissionRequest) UnmarshalJSON(b []byte) error {
	const typ = "request permission request"
	var w struct {
		SessionID wireStr         `json:"sessionId"`
		ToolCall  json.RawMessage `json:"toolCall"`
		Options   json.RawMessage `json:"options"`
		Meta      wireMeta        `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode(typ, err)
	}
	if !w.SessionID.ok {
		return errMissing(typ, "sessionId")
	}
	var tc ToolCallUpdate
	if len(w.ToolCall) == 0 || jsonIsNull(w.ToolCall) {
		return errMissing(typ, "toolCall")
	}
	if err := tc.UnmarshalJSON(w.ToolCall); err != nil {
		return errDecode(typ, err)
	}
	var opts []PermissionOption
	if len(w.Options) == 0 || jsonIsNull(w.Options) {
		return errMissing(typ, "options")
	}
	if err := json.Unmarshal(w.Options, &opts); err != nil {
		return errDecode(typ, err)
	}
	*r = RequestPermissionRequest{SessionID: w.SessionID.v, ToolCall: tc, Options: orEmpty(opts), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: optionId, name and kind are required strings (an unknown
// kind is kept).
func (o *PermissionOption) UnmarshalJSON(b []byte) error {
	var w struct {
		OptionID wireStr  `json:"optionId"`
		Name     wireStr  `json:"name"`
		Kind     wireStr  `json:"kind"`
		Meta     wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("permission option", err)
	}
	switch {
	case !w.OptionID.ok:
		return errMissing("permission option", "optionId")
	case !w.Name.ok:
		return errMissing("permission option", "name")
	case !w.Kind.ok:
		return errMissing("permission option", "kind")
	}
	*o = PermissionOption{OptionID: w.OptionID.v, Name: w.Name.v, Kind: PermissionOptionKind(w.Kind.v), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: outcome is required.
func (r *RequestPermissionResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Outcome json.RawMessage `json:"outcome"`
		Meta    wireMeta        `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("request permission response", err)
	}
	if len(w.Outcome) == 0 {
		return errMissing("request permission response", "outcome")
	}
	var o PermissionOutcome
	if err := o.UnmarshalJSON(w.Outcome); err != nil {
		return err
	}
	*r = RequestPermissionResponse{Outcome: o, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: outcome is a required string; optionId is required with
// "selected". Unknown outcomes are kept.
func (o *PermissionOutcome) UnmarshalJSON(b []byte) error {
	var w struct {
		Outcome  wireStr  `json:"outcome"`
		OptionID wireStr  `json:"optionId"`
		Meta     wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("permission outcome", err)
	}
	if !w.Outcome.ok {
		return errMissing("permission outcome", "outcome")
	}
	if w.Outcome.v == OutcomeSelected && !w.OptionID.ok {
		return errMissing("permission outcome", "optionId")
	}
	*o = PermissionOutcome{Outcome: w.Outcome.v, OptionID: w.OptionID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: see [CreateElicitationRequest] for what is required.
func (r *CreateElicitationRequest) UnmarshalJSON(b []byte) error {
	const typ = "create elicitation request"
	var w struct {
		Message         wireStr  `json:"message"`
		Mode            wireStr  `json:"mode"`
		SessionID       wireStr  `json:"sessionId"`
		ToolCallID      wireStr  `json:"toolCallId"`
		RequestID       wireAny  `json:"requestId"`
		RequestedSchema wireRaw  `json:"requestedSchema"`
		ElicitationID   wireStr  `json:"elicitationId"`
		URL             wireStr  `json:"url"`
		Meta            wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode(typ, err)
	}
	switch {
	case !w.Message.ok:
		return errMissing(typ, "message")
	case !w.Mode.ok:
		return errMissing(typ, "mode")
	case w.Mode.v == ElicitationModeForm && (len(w.RequestedSchema.v) == 0 || w.RequestedSchema.v[0] != '{'):
		return errMissing(typ, "requestedSchema")
	case w.Mode.v == ElicitationModeURL && !w.ElicitationID.ok:
		return errMissing(typ, "elicitationId")
	case w.Mode.v == ElicitationModeURL && !w.URL.ok:
		return errMissing(typ, "url")
	}
	*r = CreateElicitationRequest{Message: w.Message.v, Mode: w.Mode.v, SessionID: w.SessionID.v,
		ToolCallID: w.ToolCallID.v, RequestID: w.RequestID.v, RequestedSchema: w.RequestedSchema.v,
		ElicitationID: w.ElicitationID.v, URL: w.URL.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: action is a required string (unknown actions are kept);
// content is kept raw when it is an object.
func (r *CreateElicitationResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Action  wireStr  `json:"action"`
		Content wireMeta `json:"content"`
		Meta    wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("create elicitation response", err)
	}
	if !w.Action.ok {
		return errMissing("create elicitation response", "action")
	}
	*r = CreateElicitationResponse{Action: w.Action.v, Content: w.Content.raw(), Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: elicitationId is required.
func (n *CompleteElicitationNotification) UnmarshalJSON(b []byte) error {
	var w struct {
		ElicitationID wireStr  `json:"elicitationId"`
		Meta          wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("complete elicitation notification", err)
	}
	if !w.ElicitationID.ok {
		return errMissing("complete elicitation notification", "elicitationId")
	}
	*n = CompleteElicitationNotification{ElicitationID: w.ElicitationID.v, Meta: w.Meta.raw()}
	return nil
}
