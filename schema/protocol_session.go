package schema

import "encoding/json"

// Wire types of sessions, modes and config options; see protocol.go for
// how they decode.

// ---- sessions ----

// NewSessionRequest is the params of session/new. MCPServers is always sent
// ([] when nil). AdditionalDirectories needs
// sessionCapabilities.additionalDirectories and is left out when empty.
type NewSessionRequest struct {
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// NewSessionResponse is the result of session/new. SessionID is required;
// malformed modes read as nil, invalid config options are dropped.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	// Models is the legacy model selection (see SessionModelState).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   json.RawMessage    `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load (needs loadSession).
type LoadSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
	// ReplayFrom is where the replay begins: the zero value is the start,
	// all retained history. A v2 agent gets it as session/resume's
	// replayFrom, as given; v1's session/load always replays from the
	// start, so another cursor is refused there (ErrNotSupported). Not
	// part of v1's session/load params. Unstable: ACP v2 is in Preview.
	ReplayFrom ReplayCursor `json:"-"`
}

// LoadSessionResponse is the result of session/load; a null result decodes
// as the zero value.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	// Models is the legacy model selection (see SessionModelState).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   json.RawMessage    `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume (needs
// sessionCapabilities.resume). MCPServers is optional in the schema but the
// docs require it, so it is always sent.
type ResumeSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of session/resume; null decodes as the
// zero value.
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	// Models is the legacy model selection (see SessionModelState).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   json.RawMessage    `json:"_meta,omitempty"`
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
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	// Archived filters by archive state; "" means the agent's default
	// (ArchiveExclude). Only for an agent advertising
	// sessionCapabilities.archive. Unstable: follows schema.unstable.json;
	// may change.
	Archived SessionArchiveFilter `json:"archived,omitempty"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
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
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitzero"`
	Title                 *string  `json:"title,omitempty"`
	UpdatedAt             *string  `json:"updatedAt,omitempty"`
	// Archived is whether the session is archived (nil: not reported).
	// Unstable: follows schema.unstable.json; may change.
	Archived *bool           `json:"archived,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
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

// ForkSessionRequest is the params of session/fork (needs
// sessionCapabilities.fork): a new session that starts from the history of
// SessionID. MCPServers is sent as [] when empty.
//
// Unstable: follows schema.unstable.json; may change.
type ForkSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt   `json:"systemPrompt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ForkSessionResponse is the result of session/fork: the new session's id
// and its initial modes, config options and (legacy) models.
//
// Unstable: follows schema.unstable.json; may change.
type ForkSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitzero"`
	// Models is the legacy model selection (see SessionModelState).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   json.RawMessage    `json:"_meta,omitempty"`
}
