package schema

import "encoding/json"

// Wire types of authentication and MCP servers; see protocol.go for how
// they decode.

// ---- authentication ----

// AuthMethod is one way to authenticate offered in InitializeResponse:
//
//   - *AgentAuthMethod (no "type", or null, "", or "agent", the schema's
//     name for the default): call authenticate with its ID
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
// (see [AuthMethod]). Link, when set, is a page where the user can obtain
// the credentials.
type EnvVarAuthMethod struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Link        string          `json:"link,omitempty"`
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

// MCPServer is an MCP server the agent should connect to:
//
//   - *MCPServerStdio (no "type" on the v1 wire; null, "" and "stdio" are
//     accepted)
//   - *MCPServerHTTP ("http", needs mcpCapabilities.http)
//   - *MCPServerSSE ("sse", needs mcpCapabilities.sse)
//   - *MCPServerACP ("acp", needs mcpCapabilities.acp; unstable)
//   - *UnknownMCPServer (any other "type"; raw JSON kept)
type MCPServer interface {
	isMCPServer()
}

func (*MCPServerStdio) isMCPServer()   {}
func (*MCPServerHTTP) isMCPServer()    {}
func (*MCPServerSSE) isMCPServer()     {}
func (*UnknownMCPServer) isMCPServer() {}

// MCPServerStdio is launched by the agent as a subprocess. Command should be
// an absolute path. Args and Env are always sent, as [] when empty.
type MCPServerStdio struct {
	Name    string          `json:"name"`
	Command string          `json:"command"`
	Args    []string        `json:"args"`
	Env     []EnvVariable   `json:"env"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MCPServerHTTP is reached over streamable HTTP. Headers is always sent.
type MCPServerHTTP struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HTTPHeader    `json:"headers"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MCPServerSSE is reached over SSE (deprecated by MCP). Headers is always
// sent.
type MCPServerSSE struct {
	Name    string          `json:"name"`
	URL     string          `json:"url"`
	Headers []HTTPHeader    `json:"headers"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnknownMCPServer is a server config of a type this package does not know.
type UnknownMCPServer struct {
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
