package acp

import (
	"context"
	"errors"
)

// Session archive, status and title (schema 1.29.0, unstable): the work
// of the Client and Session methods in client_unstable.go; the wire types
// are in protocol_session_manage.go.
//
// Unstable: follows schema.unstable.json; may change.

// archiveSession implements [Client.ArchiveSession].
func (c *Client) archiveSession(ctx context.Context, req *ArchiveSessionRequest) (*ArchiveSessionResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Archive == nil {
		return nil, notSupported(MethodSessionArchive, "sessionCapabilities.archive")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(MethodSessionArchive, errors.New("a session id is required"))
	}
	var res ArchiveSessionResponse
	if err := c.call(ctx, MethodSessionArchive, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// unarchiveSession implements [Client.UnarchiveSession].
func (c *Client) unarchiveSession(ctx context.Context, req *UnarchiveSessionRequest) (*UnarchiveSessionResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Archive == nil {
		return nil, notSupported(MethodSessionUnarchive, "sessionCapabilities.archive")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(MethodSessionUnarchive, errors.New("a session id is required"))
	}
	var res UnarchiveSessionResponse
	if err := c.call(ctx, MethodSessionUnarchive, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// sessionStatus implements [Client.SessionStatus].
func (c *Client) sessionStatus(ctx context.Context, req *SessionStatusRequest) (*SessionStatusResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Status == nil {
		return nil, notSupported(MethodSessionStatus, "sessionCapabilities.status")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(MethodSessionStatus, errors.New("a session id is required"))
	}
	var res SessionStatusResponse
	if err := c.call(ctx, MethodSessionStatus, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// setSessionTitle implements [Client.SetSessionTitle]. When the session is
// open on this client, the stored title becomes its state's Title, as a
// local session_info_update on its feed.
func (c *Client) setSessionTitle(ctx context.Context, req *SetSessionTitleRequest) (*SetSessionTitleResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Title == nil {
		return nil, notSupported(MethodSessionSetTitle, "sessionCapabilities.title")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(MethodSessionSetTitle, errors.New("a session id is required"))
	}
	var res SetSessionTitleResponse
	if err := c.call(ctx, MethodSessionSetTitle, req, &res); err != nil {
		return nil, err
	}
	if s := c.Session(req.SessionID); s != nil {
		s.mu.Lock()
		mark := &SessionInfoUpdate{Title: SetField(res.Title)}
		foldSessionUpdate(&s.state, mark)
		s.logLocked(sentry{kind: entLocal, u: mark})
		s.notifyLocked()
		s.mu.Unlock()
	}
	return &res, nil
}
