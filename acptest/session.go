package acptest

import (
	"encoding/json"
	"errors"
)

// sessionState is a session as the agent remembers it, across connections.
// Guarded by Agent.mu.
type sessionState struct {
	id      string
	cwd     string
	title   string
	modes   map[string]any // SessionModeState, or nil
	config  []any          // SessionConfigOption list, or nil
	history []json.RawMessage
	turns   map[*Turn]struct{}
	prompts int
	// perms are a v2 agent's pending permission requests, which
	// session/cancel withdraws (withdrawPermissions). Guarded by a.mu.
	perms map[*pendingPerm]struct{}
	// background is the v2 background list every state_update carries
	// (Session.SetBackground); nil sends []. Guarded by a.mu.
	background []any
}

// pendingPerm is a v2 permission request from before it is written until
// answered: a session/cancel read while it is being written (r still nil)
// marks it, and it is withdrawn once written.
type pendingPerm struct {
	r         *Request
	withdrawn bool
}

// Session is a session as seen from one connection: the handle given to
// [Options.OnNewSession] and [Options.OnLoadSession], and embedded in
// [Turn]. It embeds the connection, so scripts can also send raw messages,
// make requests and inject faults through it.
type Session struct {
	*Conn
	st     *sessionState
	params json.RawMessage
}

// SessionID returns the session's id.
func (s *Session) SessionID() string { return s.st.id }

// Cwd returns the session's working directory as the client sent it.
func (s *Session) Cwd() string {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	return s.st.cwd
}

// Params returns the params of the request that opened the session on
// this connection (session/new, session/load or session/resume), or of the
// session/prompt for a [Turn].
func (s *Session) Params() json.RawMessage { return s.params }

// CurrentMode returns the session's current mode id ("" without modes).
func (s *Session) CurrentMode() string {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	id, _ := s.st.modes["currentModeId"].(string)
	return id
}

// ConfigValue returns the currentValue of the config option with the given
// id (a string for select options, a bool for boolean ones), or nil.
func (s *Session) ConfigValue(configID string) any {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if o := findOption(s.st.config, configID); o != nil {
		return o["currentValue"]
	}
	return nil
}

func (a *Agent) newSession(cwd string) *sessionState {
	var id string
	if f := a.opts.NewSessionID; f != nil {
		id = f()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if id == "" {
		a.nextSession++
		id = "sess-" + itoa(a.nextSession)
	}
	st := &sessionState{
		id:     id,
		cwd:    cwd,
		modes:  cloneJSON[map[string]any](a.opts.Modes),
		config: cloneJSON[[]any](a.opts.ConfigOptions),
		turns:  make(map[*Turn]struct{}),
	}
	a.sessions[st.id] = st
	a.order = append(a.order, st.id)
	return st
}

// openSession finds a session for session/load or session/resume: one
// created on this agent, one OpenSession finds, or one the options know
// (Sessions or History).
func (a *Agent) openSession(id, cwd string) (*sessionState, error) {
	a.mu.Lock()
	if st := a.sessions[id]; st != nil || a.deleted[id] {
		a.mu.Unlock()
		return st, nil
	}
	a.mu.Unlock()
	if f := a.opts.OpenSession; f != nil {
		stored, err := f(id)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = &Error{Code: CodeInternalError, Message: err.Error()}
			}
			return nil, e
		}
		if stored != nil {
			return a.addStored(id, cwd, stored), nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if st := a.sessions[id]; st != nil {
		return st, nil
	}
	_, known := a.opts.History[id]
	var title string
	for _, info := range a.listedSessions() {
		if info["sessionId"] == id {
			known = true
			title, _ = info["title"].(string)
		}
	}
	if !known {
		return nil, nil
	}
	st := &sessionState{
		title:  title,
		id:     id,
		cwd:    cwd,
		modes:  cloneJSON[map[string]any](a.opts.Modes),
		config: cloneJSON[[]any](a.opts.ConfigOptions),
		turns:  make(map[*Turn]struct{}),
	}
	for _, u := range a.opts.History[id] {
		if b, err := marshal(u); err == nil {
			st.history = append(st.history, b)
		}
	}
	a.sessions[id] = st
	return st, nil
}

// addStored makes a session OpenSession returned one of the agent's,
// unless a concurrent request did so first.
func (a *Agent) addStored(id, cwd string, stored *StoredSession) *sessionState {
	if cwd == "" {
		cwd = stored.Cwd
	}
	st := &sessionState{
		title:   stored.Title,
		id:      id,
		cwd:     cwd,
		modes:   cloneJSON[map[string]any](a.opts.Modes),
		config:  cloneJSON[[]any](a.opts.ConfigOptions),
		turns:   make(map[*Turn]struct{}),
		prompts: max(stored.Turns, 0),
	}
	for _, u := range stored.History {
		st.history = append(st.history, append(json.RawMessage(nil), u...))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cur := a.sessions[id]; cur != nil {
		return cur
	}
	a.sessions[id] = st
	a.order = append(a.order, id)
	return st
}

// History returns the conversation the session has recorded for replay
// (see [Options.History]): session/update params' update objects, in the
// form they were sent, oldest first. The slice is a copy.
func (s *Session) History() []json.RawMessage {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	out := make([]json.RawMessage, len(s.st.history))
	for i, u := range s.st.history {
		out[i] = append(json.RawMessage(nil), u...)
	}
	return out
}

// Title returns the session's title: the last one [Session.SessionInfo]
// sent, or the one it was listed or stored with ("" if none).
func (s *Session) Title() string {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	return s.st.title
}

func (a *Agent) lookupSession(id string) *sessionState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// listedSessions returns Options.Sessions decoded, minus deleted ones.
// Called with a.mu held.
func (a *Agent) listedSessions() []map[string]any {
	var out []map[string]any
	for _, s := range a.opts.Sessions {
		m := cloneJSON[map[string]any](s)
		if m == nil {
			continue
		}
		if id, _ := m["sessionId"].(string); a.deleted[id] {
			continue
		}
		out = append(out, m)
	}
	return out
}

// cancelTurns signals every active turn of the session, as session/cancel
// and session/close do.
func (a *Agent) cancelTurns(sessionID string) {
	a.mu.Lock()
	var turns []*Turn
	if st := a.sessions[sessionID]; st != nil {
		for t := range st.turns {
			turns = append(turns, t)
		}
	}
	a.mu.Unlock()
	for _, t := range turns {
		t.cancel()
	}
}

// remember appends a conversation update to the session's history, for
// replay on session/load. Only conversation entries are kept: state
// snapshots (commands, mode, usage, …) are not history.
func (s *Session) remember(update []byte) {
	var u struct {
		Kind string `json:"sessionUpdate"`
	}
	if json.Unmarshal(update, &u) != nil {
		return
	}
	switch u.Kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
		"user_message", "agent_message", "agent_thought", "tool_call_content_chunk": // and v2's
		s.a.mu.Lock()
		s.st.history = append(s.st.history, append([]byte(nil), update...))
		s.a.mu.Unlock()
	}
}

func findOption(opts []any, id string) map[string]any {
	for _, o := range opts {
		if m, ok := o.(map[string]any); ok && (m["id"] == id || m["configId"] == id) {
			return m
		}
	}
	return nil
}

// cloneJSON deep-copies v by a JSON round trip into T; it returns the zero
// T if v is nil or does not fit.
func cloneJSON[T any](v any) T {
	var out T
	if v == nil {
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return out
	}
	_ = json.Unmarshal(b, &out)
	return out
}
