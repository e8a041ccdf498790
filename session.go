package acp

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
)

// Session is one ACP session on a connection. It holds the session's folded
// state, fed by the agent's session/update notifications in wire order, and
// starts prompt turns. It is safe for concurrent use.
type Session struct {
	c     *Client
	id    string
	roots []string // cwd first, then additional directories

	mu      sync.Mutex
	state   SessionState
	history fold    // updates outside any turn
	turn    *Turn   // the running turn, nil between turns
	turns   []*Turn // every turn, in order
	loading bool    // a session/load replay is in progress
	changed chan struct{}
	perms   map[string]*inbound // pending permission requests by request id
}

// SessionState is a snapshot of what the agent told about the session as a
// whole. Snapshots are values: safe to keep and to compare with cmp.Diff.
type SessionState struct {
	SessionID             string                `json:"sessionId"`
	Cwd                   string                `json:"cwd"`
	AdditionalDirectories []string              `json:"additionalDirectories,omitempty"`
	Modes                 *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions         []SessionConfigOption `json:"configOptions,omitempty"`
	Commands              []AvailableCommand    `json:"commands,omitempty"`
	Title                 string                `json:"title,omitempty"`
	UpdatedAt             string                `json:"updatedAt,omitempty"`
	// Usage is the latest usage_update (context window use and cost).
	Usage *UsageUpdate `json:"usage,omitempty"`
	// Plan is the latest plan, whichever turn sent it.
	Plan []PlanEntry `json:"plan,omitempty"`
	// Turns counts the turns started in this session.
	Turns int `json:"turns"`

	// History folds the updates that arrived outside any turn: a
	// session/load replay, and updates an agent sent between turns.
	History TurnState `json:"history"`
	// Outside lists those updates in wire order, each marked as replayed
	// (during session/load) or late (after a turn had ended).
	Outside []OutsideUpdate `json:"-"`
}

// OutsideUpdate is an update that arrived while no turn was running.
type OutsideUpdate struct {
	Update Update
	// Replay: it arrived during session/load.
	Replay bool
	// Late: it arrived after the session's last turn had ended (an agent
	// still talking after its answer).
	Late bool
}

func newSession(c *Client, id, cwd string, addDirs []string) *Session {
	s := &Session{c: c, id: id, perms: map[string]*inbound{}}
	s.roots = append([]string{cwd}, addDirs...)
	s.state.SessionID = id
	s.state.Cwd = cwd
	s.state.AdditionalDirectories = addDirs
	return s
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Client returns the connection the session belongs to.
func (s *Session) Client() *Client { return s.c }

// State returns a snapshot of the session's folded state.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	st.AdditionalDirectories = slices.Clip(st.AdditionalDirectories)
	if st.Modes != nil {
		m := *st.Modes
		st.Modes = &m
	}
	st.ConfigOptions = slices.Clip(st.ConfigOptions)
	st.Commands = slices.Clip(st.Commands)
	st.Plan = slices.Clip(st.Plan)
	st.Turns = len(s.turns)
	st.History = s.history.state()
	st.Outside = slices.Clip(st.Outside)
	return st
}

// Turns returns the session's turns, oldest first.
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
			case <-s.c.done:
				return
			}
		}
	}
}

// changedLocked returns a channel closed at the next change.
func (s *Session) changedLocked() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

func (s *Session) notifyLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// apply folds one update, in wire order, on the reader goroutine.
func (s *Session) apply(u Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyLocked(u)
}

func (s *Session) applyLocked(u Update) {
	switch u := u.(type) {
	case *AvailableCommandsUpdate:
		s.state.Commands = u.AvailableCommands
	case *CurrentModeUpdate:
		if s.state.Modes == nil {
			s.state.Modes = &SessionModeState{}
		} else {
			m := *s.state.Modes
			s.state.Modes = &m
		}
		s.state.Modes.CurrentModeID = u.CurrentModeID
	case *ConfigOptionUpdate:
		s.state.ConfigOptions = u.ConfigOptions
	case *SessionInfoUpdate:
		if u.Title.Present {
			s.state.Title = derefOr(u.Title.Value)
		}
		if u.UpdatedAt.Present {
			s.state.UpdatedAt = derefOr(u.UpdatedAt.Value)
		}
	case *UsageUpdate:
		s.state.Usage = u
	case *Plan:
		s.state.Plan = u.Entries
	}
	if t := s.turn; t != nil {
		t.applyLocked(u)
	} else {
		s.state.Outside = append(s.state.Outside, OutsideUpdate{Update: u, Replay: s.loading, Late: !s.loading && len(s.turns) > 0})
		s.history.apply(u)
	}
	s.notifyLocked()
}

func derefOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// adopt records what a session/new, load or resume result says.
func (s *Session) adopt(modes *SessionModeState, opts []SessionConfigOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if modes != nil {
		s.state.Modes = modes
	}
	if opts != nil {
		s.state.ConfigOptions = opts
	}
	s.notifyLocked()
}

// Updates for a session id not registered yet are kept in Client.orphans:
// agents send available_commands_update before they answer session/new.

// maxOrphans bounds what is kept for a session id that is never registered
// (an agent talking about a session from session/list, say).
const maxOrphans = 10000

// onUpdate is the wire's hook for session/update, on the reader goroutine.
func (c *Client) onUpdate(params []byte) {
	sid, u, err := decodeNotification(params)
	if err != nil {
		c.diag("bad_update", "kept a session/update that did not decode as unknown: "+err.Error(), params)
	}
	if u == nil {
		return
	}
	if uu, ok := u.(*UnknownUpdate); ok {
		c.diag("unknown_update", "kept an update of unknown kind "+uu.Kind, nil)
	}
	c.mu.Lock()
	s := c.sessions[sid]
	if s == nil {
		if len(c.orphans[sid]) < maxOrphans {
			c.orphans[sid] = append(c.orphans[sid], u)
		} else {
			c.diag("dropped_update", "dropped an update for unknown session "+sid+": too many buffered", nil)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.apply(u)
}

// register makes a session known, applying updates that arrived for its id
// before it was (in their order, before any later update).
func (c *Client) register(s *Session) {
	c.mu.Lock()
	old := c.sessions[s.id]
	c.sessions[s.id] = s
	orphans := c.orphans[s.id]
	delete(c.orphans, s.id)
	if len(orphans) > 0 {
		// s is not visible to anyone yet, so taking its lock under c.mu
		// cannot invert the c.mu-before-s.mu order. Holding c.mu keeps
		// onUpdate from applying a newer update first.
		s.mu.Lock()
		for _, o := range orphans {
			s.applyLocked(o)
		}
		s.mu.Unlock()
	}
	c.mu.Unlock()
	if old != nil && old != s {
		// Loading a session again: the old handle gets no more updates;
		// wake whoever watches it.
		old.mu.Lock()
		old.notifyLocked()
		old.mu.Unlock()
	}
}

// Session returns the session with the given id created, loaded or resumed
// on this connection, or nil.
func (c *Client) Session(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

// NewSession creates a session (session/new). A nil req, or an empty Cwd,
// means the current directory. McpServers is sent as [] when empty.
func (c *Client) NewSession(ctx context.Context, req *NewSessionRequest) (*Session, error) {
	r := NewSessionRequest{}
	if req != nil {
		r = *req
	}
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError("session/new", err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs("session/new", &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	var res NewSessionResponse
	if err := c.call(ctx, "session/new", &r, &res); err != nil {
		return nil, err
	}
	if res.SessionID == "" {
		return nil, callError("session/new", errors.New("the agent answered without a sessionId"))
	}
	s := newSession(c, res.SessionID, r.Cwd, r.AdditionalDirectories)
	s.adopt(res.Modes, res.ConfigOptions)
	c.register(s)
	return s, nil
}

// LoadSession loads a session with its history (session/load; needs the
// agent's loadSession capability, else ErrNotSupported and nothing is sent).
// The agent replays the conversation as updates before it answers; they are
// folded into the session's History, marked Replay, before LoadSession
// returns.
func (c *Client) LoadSession(ctx context.Context, req *LoadSessionRequest) (*Session, error) {
	if !c.init.AgentCapabilities.LoadSession {
		return nil, notSupported("session/load", "loadSession")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError("session/load", errors.New("a session id is required"))
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError("session/load", err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs("session/load", &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	// Register first: the replay arrives before the answer and must land in
	// this session, in order.
	s := newSession(c, r.SessionID, r.Cwd, r.AdditionalDirectories)
	s.loading = true
	c.register(s)
	var res LoadSessionResponse
	err = c.call(ctx, "session/load", &r, &res)
	s.mu.Lock()
	s.loading = false
	s.mu.Unlock()
	if err != nil {
		c.unregister(s)
		return nil, err
	}
	s.adopt(res.Modes, res.ConfigOptions)
	return s, nil
}

// ResumeSession resumes a session without replaying its history
// (session/resume; needs sessionCapabilities.resume).
func (c *Client) ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*Session, error) {
	if c.init.AgentCapabilities.SessionCapabilities.Resume == nil {
		return nil, notSupported("session/resume", "sessionCapabilities.resume")
	}
	if req == nil || req.SessionID == "" {
		return nil, callError("session/resume", errors.New("a session id is required"))
	}
	r := *req
	cwd, err := absCwd(r.Cwd)
	if err != nil {
		return nil, callError("session/resume", err)
	}
	r.Cwd = cwd
	if err := c.checkAddDirs("session/resume", &r.AdditionalDirectories); err != nil {
		return nil, err
	}
	s := newSession(c, r.SessionID, r.Cwd, r.AdditionalDirectories)
	c.register(s)
	var res ResumeSessionResponse
	if err := c.call(ctx, "session/resume", &r, &res); err != nil {
		c.unregister(s)
		return nil, err
	}
	s.adopt(res.Modes, res.ConfigOptions)
	return s, nil
}

func (c *Client) unregister(s *Session) {
	c.mu.Lock()
	if c.sessions[s.id] == s {
		delete(c.sessions, s.id)
	}
	c.mu.Unlock()
}

// checkAddDirs validates a request's additional directories and replaces
// *dirs with a cleaned copy (the caller's slice is left alone), as absCwd
// does for cwd. Cleaning makes what the agent is told and what the
// handlers confine to the same directory: "/ws/a/../.." is "/", which
// must not pass for something under /ws/a.
func (c *Client) checkAddDirs(method string, dirs *[]string) error {
	if len(*dirs) > 0 && c.init.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		return notSupported(method+" with additionalDirectories", "sessionCapabilities.additionalDirectories")
	}
	if len(*dirs) == 0 {
		return nil
	}
	clean := make([]string, len(*dirs))
	for i, d := range *dirs {
		var err error
		if clean[i], err = cleanRoot(d); err != nil {
			return callError(method, fmt.Errorf("additional directory: %w", err))
		}
	}
	*dirs = clean
	return nil
}

func notSupported(what, capability string) error {
	return callError(what, fmt.Errorf("%w (the agent did not advertise %s)", ErrNotSupported, capability))
}

// ListSessions lists the agent's sessions (session/list; needs
// sessionCapabilities.list), one page per iteration, following nextCursor
// until the agent gives none. A failed page is yielded as the error and ends
// the iteration.
func (c *Client) ListSessions(ctx context.Context, req *ListSessionsRequest) iter.Seq2[*ListSessionsResponse, error] {
	return func(yield func(*ListSessionsResponse, error) bool) {
		if c.init.AgentCapabilities.SessionCapabilities.List == nil {
			yield(nil, notSupported("session/list", "sessionCapabilities.list"))
			return
		}
		r := ListSessionsRequest{}
		if req != nil {
			r = *req
		}
		seen := map[string]bool{}
		for {
			var res ListSessionsResponse
			if err := c.call(ctx, "session/list", &r, &res); err != nil {
				yield(nil, err)
				return
			}
			if !yield(&res, nil) || res.NextCursor == "" {
				return
			}
			if seen[res.NextCursor] {
				yield(nil, callError("session/list", fmt.Errorf("the agent repeated cursor %q", res.NextCursor)))
				return
			}
			seen[res.NextCursor] = true
			r.Cursor = res.NextCursor
		}
	}
}

// DeleteSession deletes a session (session/delete; needs
// sessionCapabilities.delete).
func (c *Client) DeleteSession(ctx context.Context, req *DeleteSessionRequest) (*DeleteSessionResponse, error) {
	if c.init.AgentCapabilities.SessionCapabilities.Delete == nil {
		return nil, notSupported("session/delete", "sessionCapabilities.delete")
	}
	var res DeleteSessionResponse
	if err := c.call(ctx, "session/delete", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Authenticate runs an agent-driven auth method (authenticate). Terminal
// methods are not passed to the agent (the spec forbids it): run their
// login command instead, see [TerminalAuthMethod].
func (c *Client) Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error) {
	if req == nil || req.MethodID == "" {
		return nil, callError("authenticate", errors.New("a method id is required"))
	}
	for _, m := range c.init.AuthMethods {
		if m.MethodID() != req.MethodID {
			continue
		}
		if _, ok := m.(*TerminalAuthMethod); ok {
			return nil, callError("authenticate", fmt.Errorf("%q is a terminal method: run its login command, then reconnect", req.MethodID))
		}
	}
	var res AuthenticateResponse
	if err := c.call(ctx, "authenticate", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Logout ends the authenticated state (logout; needs auth.logout).
func (c *Client) Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error) {
	if c.init.AgentCapabilities.Auth.Logout == nil {
		return nil, notSupported("logout", "auth.logout")
	}
	if req == nil {
		req = &LogoutRequest{}
	}
	var res LogoutResponse
	if err := c.call(ctx, "logout", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetMode switches the session's mode (session/set_mode). The mode must be
// one the agent offered; the session state follows on success.
func (s *Session) SetMode(ctx context.Context, modeID string) error {
	s.mu.Lock()
	modes := s.state.Modes
	s.mu.Unlock()
	if modes == nil || len(modes.AvailableModes) == 0 {
		return notSupported("session/set_mode", "modes for this session")
	}
	if !slices.ContainsFunc(modes.AvailableModes, func(m SessionMode) bool { return m.ID == modeID }) {
		return callError("session/set_mode", fmt.Errorf("unknown mode %q (valid: %s)", modeID, modeIDs(modes.AvailableModes)))
	}
	if err := s.c.call(ctx, "session/set_mode", &SetSessionModeRequest{SessionID: s.id, ModeID: modeID}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	m := *s.state.Modes
	m.CurrentModeID = modeID
	s.state.Modes = &m
	s.notifyLocked()
	s.mu.Unlock()
	return nil
}

func modeIDs(ms []SessionMode) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += ", "
		}
		out += m.ID
	}
	return out
}

// SetConfigOption sets a select config option to one of its values
// (session/set_config_option) and returns the agent's complete, updated
// list, which also becomes the session's.
func (s *Session) SetConfigOption(ctx context.Context, configID, value string) ([]SessionConfigOption, error) {
	return s.setConfig(ctx, &SetSessionConfigOptionRequest{SessionID: s.id, ConfigID: configID, Value: value})
}

// SetConfigBool sets a boolean config option (needs
// ClientOptions.BooleanConfigOptions, which advertises them).
func (s *Session) SetConfigBool(ctx context.Context, configID string, value bool) ([]SessionConfigOption, error) {
	return s.setConfig(ctx, &SetSessionConfigOptionRequest{SessionID: s.id, ConfigID: configID, Boolean: &value})
}

func (s *Session) setConfig(ctx context.Context, req *SetSessionConfigOptionRequest) ([]SessionConfigOption, error) {
	if err := s.checkConfig(req); err != nil {
		return nil, callError("session/set_config_option", err)
	}
	var res SetSessionConfigOptionResponse
	if err := s.c.call(ctx, "session/set_config_option", req, &res); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.state.ConfigOptions = res.ConfigOptions
	s.notifyLocked()
	s.mu.Unlock()
	return res.ConfigOptions, nil
}

// checkConfig validates a set against what the agent offered, so a typo is
// a clear local error naming the valid choices.
func (s *Session) checkConfig(req *SetSessionConfigOptionRequest) error {
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
		case *SelectConfigOption:
			if req.Boolean != nil {
				return fmt.Errorf("config option %q is a select option, not a boolean", req.ConfigID)
			}
			var vals []string
			for _, v := range o.Values() {
				if v.Value == req.Value {
					return nil
				}
				vals = append(vals, v.Value)
			}
			return fmt.Errorf("config option %q has no value %q (valid: %v)", req.ConfigID, req.Value, vals)
		case *BooleanConfigOption:
			if req.Boolean == nil {
				return fmt.Errorf("config option %q is boolean: use SetConfigBool", req.ConfigID)
			}
			return nil
		default:
			return nil // an option kind we cannot check: let the agent judge
		}
	}
	return fmt.Errorf("unknown config option %q (valid: %v)", req.ConfigID, ids)
}

// Close closes the session on the agent's side (session/close; needs
// sessionCapabilities.close), which cancels its running turn, and ends the
// session's terminals. The running turn is cancelled locally first, exactly
// as by [Turn.Cancel]: its pending permission requests are answered
// cancelled, which an agent may be waiting for before it can stop.
func (s *Session) Close(ctx context.Context) error {
	if s.c.init.AgentCapabilities.SessionCapabilities.Close == nil {
		return notSupported("session/close", "sessionCapabilities.close")
	}
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.Cancel()
	}
	err := s.c.call(ctx, "session/close", &CloseSessionRequest{SessionID: s.id}, nil)
	s.c.closeSessionResources(s.id)
	return err
}

// closeSessionResources ends what the client's handlers hold for a session.
func (c *Client) closeSessionResources(id string) {
	if h := c.opts.Terminal.CloseSession; h != nil {
		h(id)
	}
}
