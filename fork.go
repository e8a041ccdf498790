package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
)

// session/fork on the client's side: the new session is registered at the
// agent's answer (session_create.go). The wire types are in
// protocol_session.go.

// forkSession implements [Client.ForkSession].
func (c *Client) forkSession(ctx context.Context, req *schema.ForkSessionRequest) (*Session, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Fork == nil {
		return nil, notSupported(schema.MethodSessionFork, "sessionCapabilities.fork")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionFork, errors.New("a session id is required"))
	}
	if err := c.checkNotChild(schema.MethodSessionFork, req.SessionID); err != nil {
		return nil, err
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError(schema.MethodSessionFork, err)
	}
	r.Cwd = cwd
	if r.MCPServers == nil {
		r.MCPServers = []schema.MCPServer{}
	}
	if err := c.checkAddDirs(schema.MethodSessionFork, &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(schema.MethodSessionFork, r.SystemPrompt); err != nil {
		return nil, err
	}
	c.mcp.declare(r.MCPServers)
	s, err := c.createSession(ctx, schema.MethodSessionFork, &r)
	if s != nil {
		s.setOrigin(r.MCPServers, r.SystemPrompt)
	}
	return s, err
}

// fork implements [Session.Fork].
func (s *Session) fork(ctx context.Context, req *schema.ForkSessionRequest) (*Session, error) {
	r := schema.ForkSessionRequest{}
	if req != nil {
		r = *req
	}
	r.SessionID = s.id
	if r.Cwd == "" {
		r.Cwd = s.roots[0]
	}
	return s.c.ForkSession(ctx, &r)
}
