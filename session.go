package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/wsroot"
	"github.com/acpclient/acp/schema"
)

// Session is one ACP session on a connection. It holds the session's folded
// state, fed by the agent's session/update notifications in wire order, and
// starts prompt turns. It is safe for concurrent use.
type Session struct {
	c     *Client
	id    string
	roots []string // cwd first, then additional directories

	// mu guards the rest, the session's parts, each owned by the feature
	// in the file it names. It is taken after the client's mu, never
	// before.
	mu      sync.Mutex
	state   SessionState        // the session-level fold (fold_session.go)
	history fold                // updates outside any turn (fold.go)
	turn    *Turn               // the running turn, nil between turns
	turns   []*Turn             // the turns not released, in order
	started int                 // turns started
	closed  bool                // Release or Close: forgotten on this client
	loading bool                // a session/load replay is in progress
	changed notifier            // fired at every change: Changes and Events wait on it
	perms   map[string]*inbound // pending permission requests by request id (permission.go)

	log      sessionLog     // the session's events (session_feed.go)
	retained retainedTurns  // the ended turns' logs and bytes kept (retain.go)
	outside  byteBudget     // what arrived outside turns, against Limits.MaxTurnBytes (session_apply.go)
	restore  sessionRestore // what a restart needs to bring the session back (restore.go)
	sub      sessionTree    // the session's place among subagents (subagents.go)
}

// sessionLog holds the session's events (Session.Events), the latest of
// them (see logLocked), and the sum of the cost of those it keeps.
type sessionLog struct {
	eventLog[sentry]
	bytes int64
}

// retainedTurns is what the session keeps of its ended turns (retain.go):
// those whose log is kept, oldest first, within Limits.TurnLogs, and the
// kept bytes of the ended turns not released, against
// Limits.MaxEndedTurnBytes.
type retainedTurns struct {
	logged []*Turn
	bytes  int64
}

// sessionRestore is what a restart needs to bring a session back
// (restore.go): the request that opened it, the client's own choices
// since, the reconciler of a restart's replay (nil otherwise), the state at
// the restore's answer, why the session was lost (ErrSessionLost), if it
// was, the cursor LoadSession replayed from (resume_v2.go), and how the
// restart attempt under way brought it back, told on its feed only once
// the attempt succeeds. Guarded by the session's mu.
type sessionRestore struct {
	origin     sessionOrigin
	chosen     sessionChoices
	recon      *reconciler
	atAnswer   SessionState
	lost       error
	replay     *schema.ReplayCursor
	restoredBy *SessionRestart
}

// sessionTree is a session's place among subagents (subagents.go): a
// child's parent (nil otherwise; set before the child is registered,
// never changed), the children announced on this session, and what the
// parent's latest subagent_update granted. budget is, on a child, the
// budget of the children under the session the client opened
// (Limits.MaxSubagentBytes), set before the child is registered; charged
// is what this child was charged against it. kids is that budget on the
// root session itself, set at its first child's announcement under c.mu
// (the root's own updates are not charged to it).
type sessionTree struct {
	parent   *Session
	children []*Session
	subCaps  *schema.SubagentSessionCapabilities
	budget   *subtreeBudget
	charged  int64
	kids     *subtreeBudget
}

func newSession(c *Client, id, cwd string, addDirs []string) *Session {
	s := &Session{c: c, id: id, perms: map[string]*inbound{}}
	s.log.growFirst = true
	s.roots = append([]string{cwd}, addDirs...)
	s.state.SessionID = id
	s.state.Cwd = cwd
	s.state.AdditionalDirectories = addDirs
	s.logLocked(sentry{kind: entSetup, setup: &SessionSetup{SessionID: id, Cwd: cwd, AdditionalDirectories: addDirs}})
	return s
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Client returns the connection the session belongs to.
func (s *Session) Client() *Client { return s.c }

// Turns returns the session's turns, oldest first, except those released.
func (s *Session) Turns() []*Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.turns)
}

// Changes returns an iterator that yields once now and then each time the
// session's state may have changed, until ctx ends or the connection closes.
// Consecutive changes may be coalesced; a slow consumer never slows the
// connection. Call State to see what changed.
func (s *Session) Changes(ctx context.Context) iter.Seq[struct{}] {
	return func(yield func(struct{}) bool) {
		for {
			s.mu.Lock()
			ch := s.changedLocked()
			s.mu.Unlock()
			if !yield(struct{}{}) {
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			case <-s.c.life.done:
				return
			}
		}
	}
}

// changedLocked returns a channel closed at the next change.
func (s *Session) changedLocked() chan struct{} { return s.changed.wait() }

func (s *Session) notifyLocked() { s.changed.fire() }

// adopt records what a session/new, load or resume result says.
func (s *Session) adopt(modes *schema.SessionModeState, opts []schema.SessionConfigOption, models *schema.SessionModelState, meta json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if modes != nil {
		s.state.Modes = modes
	}
	if opts != nil {
		s.state.ConfigOptions = opts
	}
	if models != nil {
		s.state.Models = models
	}
	if meta != nil {
		s.state.Meta = meta
	}
	s.logLocked(sentry{kind: entSetup, setup: &SessionSetup{Modes: modes, ConfigOptions: opts, Models: models, Meta: meta}})
	s.notifyLocked()
}

// Updates for a session id not registered yet are kept in Client.orphans:
// agents send available_commands_update before they answer session/new.

// Session returns the session with the given id created, loaded or resumed
// on this connection, or nil — also once it was closed or released.
func (c *Client) Session(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.routing.sessions[id]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return s
}

// lookup returns the session that gets the agent's traffic for id: a
// released session keeps it until its cancelled turn ends.
func (c *Client) lookup(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.routing.sessions[id]
}

// NewSession creates a session (session/new). A nil req, or an empty Cwd,
// means the current directory. MCPServers is sent as [] when empty.
//
// The session is registered as soon as the agent's answer is read, before
// the line after it: a request the agent writes for the new session right
// after answering (terminal/create, fs/*, a permission request) finds it
// and its roots. An answer naming a session already open on this client
// fails with an error wrapping [ErrDuplicateSessionID] and leaves that
// session as it was.
func (c *Client) NewSession(ctx context.Context, req *schema.NewSessionRequest) (*Session, error) {
	if err := c.checkSessionBaseline(schema.MethodSessionNew); err != nil {
		return nil, err
	}
	r := schema.NewSessionRequest{}
	if req != nil {
		r = *req
	}
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError(schema.MethodSessionNew, err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs(schema.MethodSessionNew, &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(schema.MethodSessionNew, r.SystemPrompt); err != nil {
		return nil, err
	}
	c.mcp.declare(r.MCPServers)
	s, err := c.createSession(ctx, schema.MethodSessionNew, &r)
	if s != nil {
		s.setOrigin(r.MCPServers, r.SystemPrompt)
	}
	return s, err
}

// LoadSession loads a session with its history (session/load; needs the
// agent's loadSession capability, else ErrNotSupported and nothing is sent).
// The agent replays the conversation as updates before it answers; they are
// folded into the session's History, marked Replay, before LoadSession
// returns.
func (c *Client) LoadSession(ctx context.Context, req *schema.LoadSessionRequest) (*Session, error) {
	if !c.agent().AgentCapabilities.LoadSession {
		return nil, notSupported(schema.MethodSessionLoad, "loadSession")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionLoad, errors.New("a session id is required"))
	}
	if err := c.checkNotChild(schema.MethodSessionLoad, req.SessionID); err != nil {
		return nil, err
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError(schema.MethodSessionLoad, err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs(schema.MethodSessionLoad, &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(schema.MethodSessionLoad, r.SystemPrompt); err != nil {
		return nil, err
	}
	if err := c.checkReplayFrom(r.ReplayFrom); err != nil {
		return nil, err
	}
	// Register first: the replay arrives before the answer and must land in
	// this session, in order.
	s := newSession(c, r.SessionID, r.Cwd, r.AdditionalDirectories)
	s.loading = true
	s.restore.origin = sessionOrigin{mcp: r.MCPServers, systemPrompt: r.SystemPrompt}
	c.register(s)
	var res schema.LoadSessionResponse
	c.mcp.declare(r.MCPServers)
	err = c.loadCall(ctx, s, &r, &res) // v1 session/load or v2 session/resume (resume_v2.go)
	s.mu.Lock()
	s.loading = false
	s.mu.Unlock()
	if err != nil {
		c.unregister(s)
		return nil, err
	}
	s.adopt(res.Modes, res.ConfigOptions, res.Models, res.Meta)
	return s, nil
}

// ResumeSession resumes a session without replaying its history
// (session/resume; needs sessionCapabilities.resume).
func (c *Client) ResumeSession(ctx context.Context, req *schema.ResumeSessionRequest) (*Session, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Resume == nil {
		return nil, notSupported(schema.MethodSessionResume, "sessionCapabilities.resume")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError(schema.MethodSessionResume, errors.New("a session id is required"))
	}
	if err := c.checkNotChild(schema.MethodSessionResume, req.SessionID); err != nil {
		return nil, err
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError(schema.MethodSessionResume, err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs(schema.MethodSessionResume, &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	if err := c.checkSystemPrompt(schema.MethodSessionResume, r.SystemPrompt); err != nil {
		return nil, err
	}
	s := newSession(c, r.SessionID, r.Cwd, r.AdditionalDirectories)
	s.restore.origin = sessionOrigin{mcp: r.MCPServers, systemPrompt: r.SystemPrompt}
	c.register(s)
	c.mcp.declare(r.MCPServers)
	var res schema.ResumeSessionResponse
	if err := c.call(ctx, schema.MethodSessionResume, &r, &res); err != nil {
		c.unregister(s)
		return nil, err
	}
	s.adopt(res.Modes, res.ConfigOptions, res.Models, res.Meta)
	return s, nil
}

func (c *Client) unregister(s *Session) {
	c.mu.Lock()
	if c.routing.sessions[s.id] == s {
		c.routing.deleteLocked(s.id)
		if s.sub.parent != nil {
			c.subs.registered--
			s.mu.Lock()
			n := s.sub.charged
			s.sub.charged = 0
			s.mu.Unlock()
			s.sub.budget.charged.Add(-n)
			// The parent forgets it too (c.mu before s.mu, as everywhere).
			p := s.sub.parent
			p.mu.Lock()
			p.sub.children = slices.DeleteFunc(p.sub.children, func(k *Session) bool { return k == s })
			p.forgetSubagentLocked(s.id) // subagents.go
			p.mu.Unlock()
		}
	}
	c.mu.Unlock()
}

// checkAddDirs validates a request's additional directories and replaces
// *dirs with a cleaned copy (the caller's slice is left alone), as absCwd
// does for cwd. Cleaning makes what the agent is told and what the
// handlers confine to the same directory: "/ws/a/../.." is "/", which
// must not pass for something under /ws/a.
func (c *Client) checkAddDirs(method string, dirs *[]string) error {
	if len(*dirs) > 0 && c.agent().AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		return notSupported(method+" with additionalDirectories", "sessionCapabilities.additionalDirectories")
	}
	if len(*dirs) == 0 {
		return nil
	}
	clean := make([]string, len(*dirs))
	for i, d := range *dirs {
		var err error
		if clean[i], err = wsroot.Clean(d); err != nil {
			return callError(method, fmt.Errorf("additional directory: %w", err))
		}
	}
	*dirs = clean
	return nil
}

// checkSystemPrompt refuses, before anything is sent, a system prompt the
// agent did not advertise (sessionCapabilities.systemPrompt, and its
// mode.override for SystemPromptOverride) and one the schema forbids
// clients to send: no content, or content other than text (agents need
// accept only text until a capability says more).
func (c *Client) checkSystemPrompt(method string, sp *schema.SystemPrompt) error {
	if sp == nil {
		return nil
	}
	caps := c.agent().AgentCapabilities.SessionCapabilities.SystemPrompt
	switch {
	case caps == nil:
		return notSupported(method+" with systemPrompt", "sessionCapabilities.systemPrompt")
	case sp.Mode == schema.SystemPromptAppend:
	case sp.Mode == schema.SystemPromptOverride:
		if caps.Mode == nil || caps.Mode.Override == nil {
			return notSupported(method+" with an override systemPrompt", "sessionCapabilities.systemPrompt.mode.override")
		}
	default:
		return notSupported(method+" with systemPrompt mode "+agenttext.Quote(string(sp.Mode)), "that mode")
	}
	if len(sp.Content) == 0 {
		return callError(method, errors.New("a system prompt needs content"))
	}
	for i, b := range sp.Content {
		if _, ok := b.(*schema.TextContent); !ok {
			return callError(method, fmt.Errorf("system prompt block %d is %T: a system prompt holds text blocks only", i, b))
		}
	}
	return nil
}

func notSupported(what, capability string) error {
	return callError(what, fmt.Errorf("%w (the agent did not advertise %s)", ErrNotSupported, capability))
}

// ListSessions lists the agent's sessions (session/list; needs
// sessionCapabilities.list), one page per iteration, following nextCursor
// until the agent gives none. A failed page is yielded as the error and ends
// the iteration.
func (c *Client) ListSessions(ctx context.Context, req *schema.ListSessionsRequest) iter.Seq2[*schema.ListSessionsResponse, error] {
	return func(yield func(*schema.ListSessionsResponse, error) bool) {
		if c.agent().AgentCapabilities.SessionCapabilities.List == nil {
			yield(nil, notSupported(schema.MethodSessionList, "sessionCapabilities.list"))
			return
		}
		r := schema.ListSessionsRequest{}
		if req != nil {
			r = *req
		}
		if r.Archived != "" && c.agent().AgentCapabilities.SessionCapabilities.Archive == nil {
			yield(nil, notSupported(schema.MethodSessionList+" with the archived filter", "sessionCapabilities.archive"))
			return
		}
		seen := map[string]bool{}
		for {
			var res schema.ListSessionsResponse
			if err := c.call(ctx, schema.MethodSessionList, &r, &res); err != nil {
				yield(nil, err)
				return
			}
			if !yield(&res, nil) || res.NextCursor == "" {
				return
			}
			if seen[res.NextCursor] {
				yield(nil, callError(schema.MethodSessionList, fmt.Errorf("the agent repeated cursor %s", agenttext.Quote(res.NextCursor))))
				return
			}
			seen[res.NextCursor] = true
			r.Cursor = res.NextCursor
		}
	}
}

// DeleteSession deletes a session (session/delete; needs
// sessionCapabilities.delete).
func (c *Client) DeleteSession(ctx context.Context, req *schema.DeleteSessionRequest) (*schema.DeleteSessionResponse, error) {
	if c.agent().AgentCapabilities.SessionCapabilities.Delete == nil {
		return nil, notSupported(schema.MethodSessionDelete, "sessionCapabilities.delete")
	}
	var res schema.DeleteSessionResponse
	if err := c.call(ctx, schema.MethodSessionDelete, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Authenticate runs an agent-driven auth method (authenticate). Terminal
// methods are not passed to the agent (the spec forbids it): run their
// login command instead, see [schema.TerminalAuthMethod].
func (c *Client) Authenticate(ctx context.Context, req *schema.AuthenticateRequest) (*schema.AuthenticateResponse, error) {
	if req == nil || req.MethodID == "" {
		return nil, callError(schema.MethodAuthenticate, errors.New("a method id is required"))
	}
	for _, m := range c.agent().AuthMethods {
		if m.MethodID() != req.MethodID {
			continue
		}
		if _, ok := m.(*schema.TerminalAuthMethod); ok {
			return nil, callError(schema.MethodAuthenticate, fmt.Errorf("%q is a terminal method: run its login command, then reconnect", req.MethodID))
		}
	}
	var res schema.AuthenticateResponse
	method := schema.MethodAuthenticate
	if c.version == 2 {
		method = methodAuthLogin
	}
	if err := c.call(ctx, method, req, &res); err != nil {
		return nil, err
	}
	r := *req
	c.mu.Lock()
	c.lastAuth = &r
	c.mu.Unlock()
	return &res, nil
}

// Logout ends the authenticated state (logout; needs auth.logout).
func (c *Client) Logout(ctx context.Context, req *schema.LogoutRequest) (*schema.LogoutResponse, error) {
	if c.agent().AgentCapabilities.Auth.Logout == nil {
		return nil, notSupported(schema.MethodLogout, "auth.logout")
	}
	if req == nil {
		req = &schema.LogoutRequest{}
	}
	var res schema.LogoutResponse
	method := schema.MethodLogout
	if c.version == 2 {
		method = methodAuthLogout
	}
	if err := c.call(ctx, method, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetMode switches the session's mode (session/set_mode). The mode must be
// one the agent offered; the session state follows on success.
func (s *Session) SetMode(ctx context.Context, modeID string) error {
	if err := s.checkOpen(schema.MethodSessionSetMode); err != nil {
		return err
	}
	if s.c.version == 2 {
		// v2 has no session modes: agents offer them as a config option
		// of category "mode" (SetConfigOption).
		return notSupported(schema.MethodSessionSetMode, "session modes (ACP v2 has none; use the config option of category mode)")
	}
	s.mu.Lock()
	modes := s.state.Modes
	s.mu.Unlock()
	if modes == nil || len(modes.AvailableModes) == 0 {
		return notSupported(schema.MethodSessionSetMode, "modes for this session")
	}
	if !slices.ContainsFunc(modes.AvailableModes, func(m schema.SessionMode) bool { return m.ID == modeID }) {
		return callError(schema.MethodSessionSetMode, fmt.Errorf("unknown mode %s (valid: %s)", agenttext.Quote(modeID), modeIDs(modes.AvailableModes)))
	}
	if err := s.c.call(ctx, schema.MethodSessionSetMode, &schema.SetSessionModeRequest{SessionID: s.id, ModeID: modeID}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	s.restore.chosen.mode = modeID
	mark := &schema.CurrentModeUpdate{CurrentModeID: modeID}
	foldSessionUpdate(&s.state, mark)
	s.logLocked(sentry{kind: entLocal, u: mark})
	s.notifyLocked()
	s.mu.Unlock()
	return nil
}

func modeIDs(ms []schema.SessionMode) string {
	return strings.Join(agenttext.List(len(ms), func(i int) string { return ms[i].ID }), ", ")
}

// SetConfigOption sets a select config option to one of its values
// (session/set_config_option) and returns the agent's complete, updated
// list, which also becomes the session's.
func (s *Session) SetConfigOption(ctx context.Context, configID, value string) ([]schema.SessionConfigOption, error) {
	return s.setConfig(ctx, &schema.SetSessionConfigOptionRequest{SessionID: s.id, ConfigID: configID, Value: value})
}

// SetConfigBool sets a boolean config option (needs
// ClientOptions.BooleanConfigOptions, which advertises them).
func (s *Session) SetConfigBool(ctx context.Context, configID string, value bool) ([]schema.SessionConfigOption, error) {
	return s.setConfig(ctx, &schema.SetSessionConfigOptionRequest{SessionID: s.id, ConfigID: configID, Boolean: &value})
}

func (s *Session) setConfig(ctx context.Context, req *schema.SetSessionConfigOptionRequest) ([]schema.SessionConfigOption, error) {
	if err := s.checkOpen(schema.MethodSessionSetConfigOption); err != nil {
		return nil, err
	}
	if err := s.checkConfig(req); err != nil {
		return nil, callError(schema.MethodSessionSetConfigOption, err)
	}
	var res schema.SetSessionConfigOptionResponse
	var params any = req
	if s.c.version == 2 && req.Boolean == nil {
		// v2 requires the value's type beside it ("id" for a select's
		// value, schema v2 SetSessionConfigOptionRequest); v1 sends it
		// only for booleans.
		params = struct {
			SessionID string          `json:"sessionId"`
			ConfigID  string          `json:"configId"`
			Type      string          `json:"type"`
			Value     string          `json:"value"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}{req.SessionID, req.ConfigID, "id", req.Value, req.Meta}
	}
	if err := s.c.call(ctx, schema.MethodSessionSetConfigOption, params, &res); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.restore.chosen.setConfig(req)
	mark := &schema.ConfigOptionUpdate{ConfigOptions: res.ConfigOptions}
	foldSessionUpdate(&s.state, mark)
	s.logLocked(sentry{kind: entLocal, u: mark})
	s.notifyLocked()
	s.mu.Unlock()
	return res.ConfigOptions, nil
}

// checkConfig validates a set against what the agent offered, so a typo is
// a clear local error naming the valid choices.
func (s *Session) checkConfig(req *schema.SetSessionConfigOptionRequest) error {
	s.mu.Lock()
	opts := s.state.ConfigOptions
	s.mu.Unlock()
	var ids []string
	for _, o := range opts {
		ids = append(ids, o.OptionID())
		if o.OptionID() != req.ConfigID {
			continue
		}
		switch o := o.(type) {
		case *schema.SelectConfigOption:
			if req.Boolean != nil {
				return fmt.Errorf("config option %s is a select option, not a boolean", agenttext.Quote(req.ConfigID))
			}
			vals := o.Values()
			if slices.ContainsFunc(vals, func(v schema.SelectOption) bool { return v.Value == req.Value }) {
				return nil
			}
			return fmt.Errorf("config option %s has no value %s (valid: %v)", agenttext.Quote(req.ConfigID), agenttext.Quote(req.Value),
				agenttext.List(len(vals), func(i int) string { return vals[i].Value }))
		case *schema.BooleanConfigOption:
			if req.Boolean == nil {
				return fmt.Errorf("config option %s is boolean: use SetConfigBool", agenttext.Quote(req.ConfigID))
			}
			return nil
		default:
			return nil // an option kind we cannot check: let the agent judge
		}
	}
	return fmt.Errorf("unknown config option %s (valid: %v)", agenttext.Quote(req.ConfigID), agenttext.List(len(ids), func(i int) string { return ids[i] }))
}

// Close closes the session on the agent's side (session/close; needs
// sessionCapabilities.close, else ErrNotSupported and nothing changes),
// which cancels its running turn, ends the session's terminals and forgets
// the session on this client, as [Session.Release] does, whether or not the
// agent answered. The running turn is cancelled locally first, exactly as by
// [Turn.Cancel]: its pending permission requests are answered cancelled,
// which an agent may be waiting for before it can stop. Closing a session
// twice fails with ErrSessionClosed.
func (s *Session) Close(ctx context.Context) error {
	if s.c.agent().AgentCapabilities.SessionCapabilities.Close == nil {
		return notSupported(schema.MethodSessionClose, "sessionCapabilities.close")
	}
	if err := s.checkOpen(schema.MethodSessionClose); err != nil {
		return err
	}
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.Cancel()
	}
	err := s.c.call(ctx, schema.MethodSessionClose, &schema.CloseSessionRequest{SessionID: s.id}, nil)
	s.c.closeSessionResources(s.id)
	s.Release()
	return err
}

// checkOpen fails with ErrSessionClosed once the session was released,
// and with ErrSubagentRestricted on a child session: every caller is a
// mutation the schema reserves to the child's agent.
func (s *Session) checkOpen(method string) error {
	if err := s.checkMutable(method); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		if s.restore.lost != nil {
			return callError(method, s.restore.lost)
		}
		return callError(method, ErrSessionClosed)
	}
	return nil
}

// closeSessionResources ends what the client's handlers hold for a session.
func (c *Client) closeSessionResources(id string) {
	if h := c.opts.Terminal.CloseSession; h != nil {
		h(id)
	}
}
