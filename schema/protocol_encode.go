package schema

import (
	"encoding/json"
	"fmt"
)

// How the wire types of protocol*.go encode: unset optional fields are
// left out, required lists are sent as [] rather than null, and the
// variants of unions carry their discriminator.

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
func (s MCPServerStdio) MarshalJSON() ([]byte, error) {
	type body MCPServerStdio
	s.Args, s.Env = orEmpty(s.Args), orEmpty(s.Env)
	return json.Marshal(body(s))
}

func (s MCPServerHTTP) MarshalJSON() ([]byte, error) {
	type body MCPServerHTTP
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"http", body(s)})
}

func (s MCPServerSSE) MarshalJSON() ([]byte, error) {
	type body MCPServerSSE
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"sse", body(s)})
}

// MarshalJSON returns Raw unchanged.
func (s UnknownMCPServer) MarshalJSON() ([]byte, error) {
	return marshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{s.Type})
	})
}

func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type body NewSessionRequest
	r.MCPServers = orEmpty(r.MCPServers)
	return json.Marshal(body(r))
}

func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type body LoadSessionRequest
	r.MCPServers = orEmpty(r.MCPServers)
	return json.Marshal(body(r))
}

func (r ResumeSessionRequest) MarshalJSON() ([]byte, error) {
	type body ResumeSessionRequest
	r.MCPServers = orEmpty(r.MCPServers)
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
