package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// How a restart brings a session back (ClientOptions.Restart): on the new
// connection, session/resume where the agent offers it (v1: no replay),
// else session/load, whose replay is reconciled with what the session has
// folded (reconciler); in v2, session/resume replaying from the start,
// reconciled the same way. Then the client's own choices (mode, config
// options, model) are set again where the agent came back without them.
// A session that cannot be brought back ends with ErrSessionLost.

// sessionOrigin is what opened the session: what a restart sends again.
type sessionOrigin struct {
	mcp          []schema.MCPServer
	systemPrompt *schema.SystemPrompt
}

// setOrigin records the request that opened s (session/new, fork).
func (s *Session) setOrigin(mcp []schema.MCPServer, sp *schema.SystemPrompt) {
	s.mu.Lock()
	s.restore.origin = sessionOrigin{mcp: mcp, systemPrompt: sp}
	s.mu.Unlock()
}

// sessionChoices are the client's own choices on a session, set again
// after a restart when the agent came back without them.
type sessionChoices struct {
	mode   string
	model  string
	config []schema.SetSessionConfigOptionRequest // the latest per config id, in order
}

func (c *sessionChoices) setConfig(req *schema.SetSessionConfigOptionRequest) {
	c.config = slices.DeleteFunc(c.config, func(r schema.SetSessionConfigOptionRequest) bool { return r.ConfigID == req.ConfigID })
	c.config = append(c.config, *req)
}

// SessionRestart is what an EventRestarted says: the agent restarted and
// the session was brought back on connection Connection with Method
// (session/resume or session/load).
type SessionRestart struct {
	Connection int    `json:"connection"`
	Method     string `json:"method"`
}

// Err returns why the session ended, if it ended with the agent: an error
// wrapping ErrSessionLost when a restart could not bring it back; nil
// otherwise.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restore.lost
}

// restoreSessions brings every open session back on g, in id order, and
// returns the sessions restored and the ids of those lost. It stops early
// if g dies (the caller tries again with the next connection). The
// sessions restored learn it from the caller (Session.restored), once the
// whole attempt has succeeded.
func (c *Client) restoreSessions(ctx context.Context, g *agentConn) (restored []*Session, lost []string) {
	c.mu.Lock()
	var roots, children []*Session
	for _, s := range c.routing.sessions {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		switch {
		case closed:
		case s.sub.parent != nil:
			children = append(children, s)
		default:
			roots = append(roots, s)
		}
	}
	c.mu.Unlock()
	byID := func(a, b *Session) int { return strings.Compare(a.id, b.id) }
	slices.SortFunc(roots, byID)
	slices.SortFunc(children, byID)
	// A child session is the dead agent's subagent: the client cannot
	// open it (session/load and resume are for sessions the client
	// opened); its parent's replay may announce it again.
	for _, s := range children {
		s.loseWith(fmt.Errorf("%w: %s is a child session of the agent that died", ErrSessionLost, agenttext.Quote(s.id)))
		lost = append(lost, s.id)
	}
	for _, s := range roots {
		err := c.restoreSession(ctx, g, s)
		select {
		case <-g.done:
			return restored, lost
		default:
		}
		if ctx.Err() != nil {
			return restored, lost
		}
		if err != nil {
			s.loseWith(err)
			lost = append(lost, s.id)
			continue
		}
		restored = append(restored, s)
	}
	return restored, lost
}

// loseWith ends s with err (wrapping ErrSessionLost): it is released, and
// every later call on it fails with err.
func (s *Session) loseWith(err error) {
	s.mu.Lock()
	if s.restore.lost == nil {
		s.restore.lost = err
	}
	s.mu.Unlock()
	s.Release()
}

// restoreSession brings s back on g.
func (c *Client) restoreSession(ctx context.Context, g *agentConn, s *Session) error {
	// The turn that was running has failed (or fails now) with its
	// connection; the replay must not land in it.
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		select {
		case <-t.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	caps := g.init.AgentCapabilities
	s.mu.Lock()
	cwd, dirs := s.roots[0], slices.Clone(s.roots[1:])
	o := s.restore.origin
	s.mu.Unlock()
	mcp := o.mcp
	if mcp == nil {
		mcp = []schema.MCPServer{}
	}
	load := &schema.LoadSessionRequest{SessionID: s.id, Cwd: cwd, MCPServers: mcp, AdditionalDirectories: dirs, SystemPrompt: o.systemPrompt}
	var method string
	var params any
	replay := false
	switch {
	case c.version == 2 && caps.SessionCapabilities.Resume != nil:
		// Always from the start: the reconciler matches id-less chunks by
		// position, which needs the whole history (load.ReplayFrom is zero).
		method, params, replay = schema.MethodSessionResume, resumeWithReplay(load), true
	case c.version != 2 && caps.SessionCapabilities.Resume != nil:
		method, params = schema.MethodSessionResume, &schema.ResumeSessionRequest{SessionID: load.SessionID, Cwd: load.Cwd, MCPServers: load.MCPServers, AdditionalDirectories: load.AdditionalDirectories, SystemPrompt: load.SystemPrompt, Meta: load.Meta}
	case c.version != 2 && caps.LoadSession:
		method, params, replay = schema.MethodSessionLoad, load, true
	default:
		return fmt.Errorf("%w: %s: the restarted agent offers neither session/resume nor session/load", ErrSessionLost, agenttext.Quote(s.id))
	}
	pre := s.State()
	s.beginRestore(g.n, method, replay)
	c.mu.Lock()
	c.restoring = s
	c.mu.Unlock()
	var res schema.LoadSessionResponse
	_, err := c.callOn(ctx, g, method, params, &res)
	c.restoreAnswered() // if the answer never came
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSessionLost, agenttext.Quote(s.id), err)
	}
	s.mu.Lock()
	back := s.restore.atAnswer
	s.mu.Unlock()
	if res.Modes != nil {
		back.Modes = res.Modes
	}
	if res.ConfigOptions != nil {
		back.ConfigOptions = res.ConfigOptions
	}
	if res.Models != nil {
		back.Models = res.Models
	}
	s.adopt(res.Modes, res.ConfigOptions, res.Models, res.Meta)
	s.reapplyChoices(ctx, &pre, &back)
	return nil
}

// restoreAnswered ends the restore of the session being restored (if
// any) at the agent's answer to its session/load or session/resume, on
// the reader, in wire order: what the agent sends after the answer is
// neither replay nor reconciled, and the session's state at the answer is
// what the agent came back with (reapplyChoices), whatever it changes
// afterwards. Only the restart's goroutine calls session/load or
// session/resume on a connection being restored (other calls wait for
// it), one at a time, so the answer is that session's.
func (c *Client) restoreAnswered() {
	c.mu.Lock()
	s := c.restoring
	c.restoring = nil
	c.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	s.restore.recon = nil
	s.loading = false
	s.restore.atAnswer = s.stateLocked()
	s.mu.Unlock()
}

// beginRestore notes how the session is being brought back, for
// Session.restored, and, for a method that replays, starts reconciling
// what the agent replays with what the session has folded.
func (s *Session) beginRestore(n int, method string, replay bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restore.restoredBy = &SessionRestart{Connection: n, Method: method}
	if replay {
		s.restore.recon = newReconciler(s)
		s.loading = true
	}
}

// restored logs on the session's feed that the restart now over brought
// it back (EventRestarted, as beginRestore noted on the attempt that
// succeeded) and counts it in SessionState.Restarts, together, so that a
// fold of the feed says what State says. It is called once per restart
// and session, after the attempt that restored every session: an attempt
// that failed (its agent died restoring this session or a later one) has
// counted nothing, however far it got.
func (s *Session) restored() {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.restore.restoredBy
	s.restore.restoredBy = nil
	if r == nil {
		return
	}
	s.state.Restarts++
	s.logLocked(sentry{kind: entRestarted, restart: r})
}

// reapplyChoices sets the client's own choices again where the session
// had them before the restart (pre) and the restored session (back: as
// the agent's answer left it) does not:
// a choice the agent overrode before it died (its own mode switch) stays
// overridden, one it forgot in dying is set again. A choice the agent no
// longer offers, or refuses, is left: the state says what the agent has.
func (s *Session) reapplyChoices(ctx context.Context, pre, st *SessionState) {
	s.mu.Lock()
	ch := s.restore.chosen
	ch.config = slices.Clone(ch.config)
	s.mu.Unlock()
	if m := ch.mode; m != "" && s.c.version != 2 && pre.Modes != nil && pre.Modes.CurrentModeID == m &&
		st.Modes != nil && st.Modes.CurrentModeID != m {
		_ = s.SetMode(ctx, m)
	}
	for _, req := range ch.config {
		if !configHas(pre.ConfigOptions, &req) || configHas(st.ConfigOptions, &req) {
			continue
		}
		r := req
		_, _ = s.setConfig(ctx, &r)
	}
	if m := ch.model; m != "" && pre.Models != nil && pre.Models.CurrentModelID == m &&
		st.Models != nil && st.Models.CurrentModelID != m {
		_ = s.setModel(ctx, m)
	}
}

// configHas reports whether opts already has the value req sets.
func configHas(opts []schema.SessionConfigOption, req *schema.SetSessionConfigOptionRequest) bool {
	for _, o := range opts {
		if o.OptionID() != req.ConfigID {
			continue
		}
		switch o := o.(type) {
		case *schema.SelectConfigOption:
			return req.Boolean == nil && o.CurrentValue == req.Value
		case *schema.BooleanConfigOption:
			return req.Boolean != nil && o.CurrentValue == *req.Boolean
		}
		return true // a kind this package cannot compare: leave it
	}
	return false // not offered
}

// errNoRestore is never returned; it keeps errors imported for later use.
var _ = errors.New
