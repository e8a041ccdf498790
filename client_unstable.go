package acp

import (
	"context"
	"github.com/acpclient/acp/schema"
)

// The Client and Session methods of the unstable features, kept together so
// that the stable API reads apart from them: session fork, archive, status
// and title, the legacy model switch and the auth status. What they send
// and receive follows schema.unstable.json, pinned in schema/, and may
// change in any release; see the package doc's "Unstable features".
// Each method's work is done beside its feature (fork.go, models.go,
// session_manage.go, auth_status.go). Next-edit suggestions and document
// sync are package nes, written over Client's public API.

// ForkSession forks a session (session/fork): the agent creates a new
// session starting from the history of req.SessionID, which need not be
// open on this client. It needs the agent's sessionCapabilities.fork, else
// ErrNotSupported and nothing is sent. An empty Cwd means the current
// directory. The new session is registered and returned as NewSession's
// is; updates the agent sends for it before answering are kept for it.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) ForkSession(ctx context.Context, req *schema.ForkSessionRequest) (*Session, error) {
	return c.forkSession(ctx, req)
}

// Fork forks this session (see Client.ForkSession). A nil req, or an empty
// Cwd, means this session's cwd; req.SessionID is ignored.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Fork(ctx context.Context, req *schema.ForkSessionRequest) (*Session, error) {
	return s.fork(ctx, req)
}

// SetModel switches the session's model with the legacy session/set_model.
// It needs the agent to have offered models for this session (else
// ErrNotSupported and nothing is sent), and modelID must be one of them
// (else an error naming the valid choices, and nothing is sent). On
// success SessionState.Models.CurrentModelID follows.
//
// Unstable: session/set_model is in no schema any more; agents that offer
// config options of category "model" should be driven through
// SetConfigOption instead.
func (s *Session) SetModel(ctx context.Context, modelID string) error {
	return s.setModel(ctx, modelID)
}

// ArchiveSession hides a session from the default session/list, keeping it
// and its history (session/archive; needs sessionCapabilities.archive, else
// ErrNotSupported and nothing is sent). An open session stays open.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) ArchiveSession(ctx context.Context, req *schema.ArchiveSessionRequest) (*schema.ArchiveSessionResponse, error) {
	return c.archiveSession(ctx, req)
}

// UnarchiveSession returns an archived session to the default session/list
// (session/unarchive; needs sessionCapabilities.archive).
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) UnarchiveSession(ctx context.Context, req *schema.UnarchiveSessionRequest) (*schema.UnarchiveSessionResponse, error) {
	return c.unarchiveSession(ctx, req)
}

// SessionStatus asks whether the agent has a session in memory
// (session/status; needs sessionCapabilities.status). The answer is a
// snapshot; see [SessionStatus.IsOpen].
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) SessionStatus(ctx context.Context, req *schema.SessionStatusRequest) (*schema.SessionStatusResponse, error) {
	return c.sessionStatus(ctx, req)
}

// SetSessionTitle sets a session's title (session/set_title; needs
// sessionCapabilities.title) and returns the title the agent stored, which
// may be normalized. When the session is open on this client its state's
// Title becomes that title, with a local session_info_update on its feed.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) SetSessionTitle(ctx context.Context, req *schema.SetSessionTitleRequest) (*schema.SetSessionTitleResponse, error) {
	return c.setSessionTitle(ctx, req)
}

// AuthStatus asks the agent for its auth status (auth/status; needs
// auth.status). Statuses the agent notifies reach
// ClientOptions.OnAuthStatus.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) AuthStatus(ctx context.Context) (*schema.AuthStatus, error) {
	return c.authStatus(ctx)
}
