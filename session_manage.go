package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
)

// Session archive, status and title (schema 1.29.0, unstable): the work
// of the Client and Session methods in client_unstable.go; the wire types
// are in protocol_session_manage.go.
//
// Unstable: follows schema.unstable.json; may change.

// archiveSession implements [Client.ArchiveSession].
func (c *Client) archiveSession(ctx context.Context, req *schema.ArchiveSessionRequest) (*schema.ArchiveSessionResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Archive == nil {
		return nil, notSupported(schema.MethodSessionArchive, "sessionCapabilities.archive")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionArchive, errors.New("a session id is required"))
	}
	var res schema.ArchiveSessionResponse
	if err := c.call(ctx, schema.MethodSessionArchive, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// unarchiveSession implements [Client.UnarchiveSession].
func (c *Client) unarchiveSession(ctx context.Context, req *schema.UnarchiveSessionRequest) (*schema.UnarchiveSessionResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Archive == nil {
		return nil, notSupported(schema.MethodSessionUnarchive, "sessionCapabilities.archive")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionUnarchive, errors.New("a session id is required"))
	}
	var res schema.UnarchiveSessionResponse
	if err := c.call(ctx, schema.MethodSessionUnarchive, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// sessionStatus implements [Client.SessionStatus].
func (c *Client) sessionStatus(ctx context.Context, req *schema.SessionStatusRequest) (*schema.SessionStatusResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Status == nil {
		return nil, notSupported(schema.MethodSessionStatus, "sessionCapabilities.status")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionStatus, errors.New("a session id is required"))
	}
	var res schema.SessionStatusResponse
	if err := c.call(ctx, schema.MethodSessionStatus, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// setSessionTitle implements [Client.SetSessionTitle]. When the session is
// open on this client, the stored title becomes its state's Title, as a
// local session_info_update on its feed.
func (c *Client) setSessionTitle(ctx context.Context, req *schema.SetSessionTitleRequest) (*schema.SetSessionTitleResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Title == nil {
		return nil, notSupported(schema.MethodSessionSetTitle, "sessionCapabilities.title")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionSetTitle, errors.New("a session id is required"))
	}
	var res schema.SetSessionTitleResponse
	if err := c.call(ctx, schema.MethodSessionSetTitle, req, &res); err != nil {
		return nil, err
	}
	if s := c.Session(req.SessionID); s != nil {
		s.mu.Lock()
		mark := &schema.SessionInfoUpdate{Title: schema.SetField(res.Title)}
		foldSessionUpdate(&s.state, mark)
		s.logLocked(sentry{kind: entLocal, u: mark})
		s.notifyLocked()
		s.mu.Unlock()
	}
	return &res, nil
}
