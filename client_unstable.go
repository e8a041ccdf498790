package acp

import "context"

// The Client and Session methods of the unstable features, kept together so
// that the stable API reads apart from them: next-edit suggestions (NES),
// document sync, session fork and the legacy model switch. What they send
// and receive follows schema.unstable.json, pinned in schema/, and may
// change in any release; see the package doc's "Unstable features".
// Each method's work is done beside its feature (nes.go, document.go,
// fork.go, models.go).

// PositionEncoding returns the encoding Positions use in NES: the agent's
// positionEncoding when the client offered it, else utf-16, which both
// sides assume when either says nothing. (An agent's choice the client did
// not offer is not honoured.)
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) PositionEncoding() PositionEncodingKind { return c.positionEncoding() }

// StartNES opens an NES session (nes/start).
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) StartNES(ctx context.Context, req *StartNESRequest) (*StartNESResponse, error) {
	return c.startNES(ctx, req)
}

// SuggestNES asks for suggestions at a position (nes/suggest); an empty
// TriggerKind is sent as manual.
//
// Each suggestion is screened on its own, so one bad suggestion costs only
// itself: one that does not decode (a known kind with a missing or
// malformed field, or a value that is not an object) is dropped with a
// [DiagBadSuggestion]; one for a document other than req.URI is dropped
// with a [DiagForeignSuggestion] unless req.AllowURI allows it. Kinds of
// suggestion this package does not know are kept as
// *UnknownNESSuggestion, screened by their top-level "uri" if they have
// one. Only an answer whose "suggestions" is missing or not an array fails
// the call.
//
// "The document asked about" is req.URI as an exact string: a uri that
// differs in any byte (case, percent-encoding, a trailing slash, "..") is
// another document. Normalizing would need the editor's own rules for its
// URIs, and any gap between those and a normalizer here would let a
// suggestion through for a file the editor resolves differently; with an
// exact match, every suggestion kept names the document in the very words
// the editor used for it.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) SuggestNES(ctx context.Context, req *SuggestNESRequest) (*SuggestNESResponse, error) {
	return c.suggestNES(ctx, req)
}

// AcceptNES tells the agent a suggestion was accepted (nes/accept).
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) AcceptNES(ctx context.Context, sessionID, suggestionID string) error {
	return c.acceptNES(ctx, sessionID, suggestionID)
}

// RejectNES tells the agent a suggestion was not taken (nes/reject); reason
// may be "".
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) RejectNES(ctx context.Context, sessionID, suggestionID string, reason NESRejectReason) error {
	return c.rejectNES(ctx, sessionID, suggestionID, reason)
}

// CloseNES closes an NES session (nes/close).
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) CloseNES(ctx context.Context, sessionID string) error {
	return c.closeNES(ctx, sessionID)
}

// DidOpenDocument sends document/didOpen.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) DidOpenDocument(ctx context.Context, n *DidOpenDocumentNotification) error {
	return c.didOpenDocument(ctx, n)
}

// DidChangeDocument sends document/didChange. When the agent asked for
// full sync, there must be exactly one change, without a range (the whole
// new text); otherwise the call fails and nothing is sent.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) DidChangeDocument(ctx context.Context, n *DidChangeDocumentNotification) error {
	return c.didChangeDocument(ctx, n)
}

// DidCloseDocument sends document/didClose.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) DidCloseDocument(ctx context.Context, n *DidCloseDocumentNotification) error {
	return c.didCloseDocument(ctx, n)
}

// DidSaveDocument sends document/didSave.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) DidSaveDocument(ctx context.Context, n *DidSaveDocumentNotification) error {
	return c.didSaveDocument(ctx, n)
}

// DidFocusDocument sends document/didFocus.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) DidFocusDocument(ctx context.Context, n *DidFocusDocumentNotification) error {
	return c.didFocusDocument(ctx, n)
}

// ForkSession forks a session (session/fork): the agent creates a new
// session starting from the history of req.SessionID, which need not be
// open on this client. It needs the agent's sessionCapabilities.fork, else
// ErrNotSupported and nothing is sent. An empty Cwd means the current
// directory. The new session is registered and returned as NewSession's
// is; updates the agent sends for it before answering are kept for it.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) ForkSession(ctx context.Context, req *ForkSessionRequest) (*Session, error) {
	return c.forkSession(ctx, req)
}

// Fork forks this session (see Client.ForkSession). A nil req, or an empty
// Cwd, means this session's cwd; req.SessionID is ignored.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Fork(ctx context.Context, req *ForkSessionRequest) (*Session, error) {
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
func (c *Client) ArchiveSession(ctx context.Context, req *ArchiveSessionRequest) (*ArchiveSessionResponse, error) {
	return c.archiveSession(ctx, req)
}

// UnarchiveSession returns an archived session to the default session/list
// (session/unarchive; needs sessionCapabilities.archive).
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) UnarchiveSession(ctx context.Context, req *UnarchiveSessionRequest) (*UnarchiveSessionResponse, error) {
	return c.unarchiveSession(ctx, req)
}

// SessionStatus asks whether the agent has a session in memory
// (session/status; needs sessionCapabilities.status). The answer is a
// snapshot; see [SessionStatus.IsOpen].
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) SessionStatus(ctx context.Context, req *SessionStatusRequest) (*SessionStatusResponse, error) {
	return c.sessionStatus(ctx, req)
}

// SetSessionTitle sets a session's title (session/set_title; needs
// sessionCapabilities.title) and returns the title the agent stored, which
// may be normalized. When the session is open on this client its state's
// Title becomes that title, with a local session_info_update on its feed.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) SetSessionTitle(ctx context.Context, req *SetSessionTitleRequest) (*SetSessionTitleResponse, error) {
	return c.setSessionTitle(ctx, req)
}

// AuthStatus asks the agent for its auth status (auth/status; needs
// auth.status). The answer also becomes LastAuthStatus.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) AuthStatus(ctx context.Context) (*AuthStatus, error) {
	return c.authStatus(ctx)
}

// LastAuthStatus returns the latest auth status the agent sent, in an
// auth/status_update (or _auth/status_update) notification or an
// auth/status answer, or nil if it sent none. Agents such as codex-acp
// notify it right after initialize.
//
// Unstable: follows schema.unstable.json; may change.
func (c *Client) LastAuthStatus() *AuthStatus { return c.lastAuthStatus() }
