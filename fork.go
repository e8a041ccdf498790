package acp

import (
	"context"
	"encoding/json"
	"errors"
)

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

// forkSession implements [Client.ForkSession].
func (c *Client) forkSession(ctx context.Context, req *ForkSessionRequest) (*Session, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Fork == nil {
		return nil, notSupported(MethodSessionFork, "sessionCapabilities.fork")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(MethodSessionFork, errors.New("a session id is required"))
	}
	if err := c.checkNotChild(MethodSessionFork, req.SessionID); err != nil {
		return nil, err
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError(MethodSessionFork, err)
	}
	r.Cwd = cwd
	if r.MCPServers == nil {
		r.MCPServers = []MCPServer{}
	}
	if err := c.checkAddDirs(MethodSessionFork, &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(MethodSessionFork, r.SystemPrompt); err != nil {
		return nil, err
	}
	c.mcp.declare(r.MCPServers)
	s, err := c.createSession(ctx, MethodSessionFork, &r)
	if s != nil {
		s.setOrigin(r.MCPServers, r.SystemPrompt)
	}
	return s, err
}

// fork implements [Session.Fork].
func (s *Session) fork(ctx context.Context, req *ForkSessionRequest) (*Session, error) {
	r := ForkSessionRequest{}
	if req != nil {
		r = *req
	}
	r.SessionID = s.id
	if r.Cwd == "" {
		r.Cwd = s.roots[0]
	}
	return s.c.ForkSession(ctx, &r)
}
