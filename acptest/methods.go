package acptest

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/acpclient/acp/schema"
)

// builtin returns the handler of a client→agent request the agent
// implements itself, or one that hands it to OnExtMethod.
func (c *Conn) builtin(method string, params json.RawMessage) func(ctx context.Context) (any, error) {
	var f func(json.RawMessage) (any, error)
	switch method {
	case "initialize":
		f = c.initialize
	case "authenticate":
		f = c.authenticate
	case "logout", "auth/logout":
		f = func(json.RawMessage) (any, error) { c.a.SetAuthenticated(false); return nil, nil }
	case "auth/login":
		f = c.authenticate
	case schema.MethodSessionLoad:
		if !c.a.opts.Restore.load() {
			break
		}
		f = func(p json.RawMessage) (any, error) { return c.loadSession(p, true) }
	case schema.MethodSessionResume:
		if !c.a.opts.Restore.resume() {
			break
		}
		// v2 has no session/load: resume with replayFrom replays.
		f = func(p json.RawMessage) (any, error) {
			var r struct {
				ReplayFrom json.RawMessage `json:"replayFrom"`
			}
			_ = json.Unmarshal(p, &r)
			replay := c.isV2() && len(r.ReplayFrom) > 0 && string(r.ReplayFrom) != "null"
			return c.loadSession(p, replay)
		}
	case schema.MethodSessionList:
		f = c.listSessions
	case schema.MethodSessionClose:
		f = c.closeSession
	case schema.MethodSessionDelete:
		f = c.deleteSession
	case schema.MethodSessionSetMode:
		f = c.setMode
	case schema.MethodSessionSetConfigOption:
		f = c.setConfigOption
	}
	if f == nil {
		return func(ctx context.Context) (any, error) {
			if h := c.a.opts.OnExtMethod; h != nil {
				return h(ctx, c, method, params)
			}
			return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found",
				Data: mustJSON(map[string]string{"method": method})}
		}
	}
	return func(context.Context) (any, error) { return f(params) }
}

func (c *Conn) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	c.mu.Lock()
	c.clientCaps = p.ClientCapabilities
	c.mu.Unlock()

	o := &c.a.opts
	if o.AnyVersion {
		var v struct {
			ProtocolVersion int `json:"protocolVersion"`
		}
		_ = json.Unmarshal(params, &v)
		c.mu.Lock()
		c.version = 1
		if v.ProtocolVersion >= 2 {
			c.version = 2
		}
		c.mu.Unlock()
	}
	if c.isV2() {
		return c.initializeV2(params)
	}
	res := map[string]any{
		"protocolVersion":   1,
		"agentCapabilities": o.Capabilities,
		"authMethods":       o.AuthMethods,
		"agentInfo":         o.AgentInfo,
	}
	if o.ProtocolVersion != 0 {
		res["protocolVersion"] = o.ProtocolVersion
	}
	if o.AuthMethods == nil {
		res["authMethods"] = []any{}
	}
	if o.AgentInfo == nil {
		res["agentInfo"] = map[string]any{"name": "acptest", "version": "0.0.0"}
	}
	if o.Capabilities == nil {
		caps := map[string]any{
			"loadSession":        true,
			"promptCapabilities": map[string]any{"image": true, "audio": true, "embeddedContext": true},
			"sessionCapabilities": map[string]any{
				"list": map[string]any{}, "resume": map[string]any{},
				"close": map[string]any{}, "delete": map[string]any{},
			},
		}
		if len(o.AuthMethods) > 0 {
			caps["auth"] = map[string]any{"logout": map[string]any{}}
		}
		o.Restore.apply(caps)
		res["agentCapabilities"] = caps
	}
	if c.a.subprocess {
		meta := map[string]any{"pid": os.Getpid()}
		if pid := c.a.grandchildPID; pid != 0 {
			meta["grandchildPid"] = pid
		}
		res["_meta"] = map[string]any{"acptest": meta}
	}
	return res, nil
}

func (c *Conn) authenticate(params json.RawMessage) (any, error) {
	var p struct {
		MethodID string `json:"methodId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	if f := c.a.opts.AcceptAuth; f != nil {
		if err := f(p.MethodID); err != nil {
			return nil, err
		}
	} else if !c.a.agentAuthMethod(p.MethodID) {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params",
			Data: mustJSON("unsupported authentication method")}
	}
	c.a.SetAuthenticated(true)
	return nil, nil
}

func (a *Agent) agentAuthMethod(id string) bool {
	for _, m := range a.opts.AuthMethods {
		mm := cloneJSON[map[string]any](m)
		if mm["id"] == id && (mm["type"] == nil || mm["type"] == "agent") {
			return true
		}
	}
	return false
}

func (c *Conn) checkAuth() error {
	if c.a.opts.RequireAuth && !c.a.Authenticated() {
		return &Error{Code: CodeAuthRequired, Message: "Authentication required"}
	}
	return nil
}

type sessionParams struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

// newSession creates the session at once (it runs on the read goroutine)
// and returns the handler that runs OnNewSession and answers.
func (c *Conn) newSession(params json.RawMessage) func(context.Context) (any, error) {
	fail := func(err error) func(context.Context) (any, error) {
		return func(context.Context) (any, error) { return nil, err }
	}
	if err := c.checkAuth(); err != nil {
		return fail(err)
	}
	var p sessionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return fail(invalidParams(err.Error()))
	}
	s := &Session{Conn: c, st: c.a.newSession(p.Cwd), params: params}
	return func(context.Context) (any, error) {
		if f := c.a.opts.OnNewSession; f != nil {
			f(s)
		}
		res := s.stateResult()
		res["sessionId"] = s.st.id
		return res, nil
	}
}

func (c *Conn) loadSession(params json.RawMessage, replay bool) (any, error) {
	if err := c.checkAuth(); err != nil {
		return nil, err
	}
	var p sessionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	st, err := c.a.openSession(p.SessionID, p.Cwd)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, notFound("session", p.SessionID)
	}
	c.a.mu.Lock()
	if p.Cwd != "" {
		st.cwd = p.Cwd
	}
	history := append([]json.RawMessage(nil), st.history...)
	c.a.mu.Unlock()
	c.mu.Lock()
	delete(c.closedIDs, p.SessionID)
	c.mu.Unlock()
	s := &Session{Conn: c, st: st, params: params}
	if replay {
		for i, u := range history {
			if f := c.a.opts.OnReplay; f != nil {
				f(s, i)
			}
			if err := s.send(u, false); err != nil {
				return nil, err
			}
		}
	}
	if f := c.a.opts.OnLoadSession; f != nil {
		f(s)
	}
	if c.isV2() {
		// v2 resume ends with the current-state snapshot, after any
		// replay and before the response (schema v2
		// ResumeSessionResponse): a replay has no end marker of its own.
		state := "idle"
		if s.runningTurnV2() != nil {
			state = "running"
		}
		if err := s.state(state, "", nil); err != nil {
			return nil, err
		}
	}
	return s.stateResult(), nil
}

// stateResult returns the modes and configOptions of a session result.
func (s *Session) stateResult() map[string]any {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	res := map[string]any{}
	if s.st.modes != nil {
		res["modes"] = cloneJSON[map[string]any](s.st.modes)
	}
	if s.st.config != nil {
		res["configOptions"] = s.Conn.configOut(cloneJSON[[]any](s.st.config))
	}
	return res
}

// configOut names each config option's id as the connection's version
// does: v1's SessionConfigOption has "id", v2's "configId". A script gives
// its options in either shape; the client receives its version's. It
// changes the maps of list, a copy the caller owns.
func (c *Conn) configOut(list []any) []any {
	from, to := "configId", "id"
	if c.isV2() {
		from, to = to, from
	}
	for _, o := range list {
		if m, ok := o.(map[string]any); ok {
			if id, has := m[from]; has {
				if _, both := m[to]; !both {
					m[to] = id
				}
				delete(m, from)
			}
		}
	}
	return list
}

func (c *Conn) listSessions(params json.RawMessage) (any, error) {
	if err := c.checkAuth(); err != nil {
		return nil, err
	}
	var p struct {
		Cwd    string `json:"cwd"`
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(err.Error())
		}
	}
	a := c.a
	a.mu.Lock()
	// A listed session opened since (OpenSession adds it to order) is
	// listed once, as it is now.
	inOrder := make(map[string]bool, len(a.order))
	for _, id := range a.order {
		inOrder[id] = true
	}
	var all []map[string]any
	for _, info := range a.listedSessions() {
		if id, _ := info["sessionId"].(string); !inOrder[id] {
			all = append(all, info)
		}
	}
	for _, id := range a.order {
		st := a.sessions[id]
		if st == nil {
			continue
		}
		info := map[string]any{"sessionId": st.id, "cwd": st.cwd}
		if st.title != "" {
			info["title"] = st.title
		}
		all = append(all, info)
	}
	a.mu.Unlock()

	var match []map[string]any
	for _, info := range all {
		if p.Cwd == "" || info["cwd"] == p.Cwd {
			match = append(match, info)
		}
	}
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "page-"))
		if !strings.HasPrefix(p.Cursor, "page-") || err != nil || n < 0 || n > len(match) {
			return nil, invalidParams("invalid cursor")
		}
		start = n
	}
	end := len(match)
	if ps := a.opts.PageSize; ps > 0 && start+ps < end {
		end = start + ps
	}
	res := map[string]any{"sessions": append([]map[string]any{}, match[start:end]...)}
	if end < len(match) {
		res["nextCursor"] = "page-" + strconv.Itoa(end)
	}
	return res, nil
}

func (c *Conn) closeSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	st := c.a.lookupSession(p.SessionID)
	if st == nil {
		return nil, notFound("session", p.SessionID)
	}
	c.a.cancelTurns(p.SessionID)
	if f := c.a.opts.OnCloseSession; f != nil {
		f(&Session{Conn: c, st: st, params: params})
	}
	c.mu.Lock()
	if c.closedIDs == nil {
		c.closedIDs = map[string]bool{}
	}
	c.closedIDs[p.SessionID] = true
	c.mu.Unlock()
	return nil, nil
}

func (c *Conn) deleteSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	c.a.cancelTurns(p.SessionID)
	c.a.mu.Lock()
	delete(c.a.sessions, p.SessionID)
	c.a.deleted[p.SessionID] = true
	c.a.mu.Unlock()
	return nil, nil
}

func (c *Conn) setMode(params json.RawMessage) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	st := c.a.lookupSession(p.SessionID)
	if st == nil {
		return nil, notFound("session", p.SessionID)
	}
	c.a.mu.Lock()
	defer c.a.mu.Unlock()
	modes, _ := st.modes["availableModes"].([]any)
	for _, m := range modes {
		if mm, ok := m.(map[string]any); ok && mm["id"] == p.ModeID {
			st.modes["currentModeId"] = p.ModeID
			return nil, nil
		}
	}
	return nil, invalidParams("unknown mode " + strconv.Quote(p.ModeID))
}

func (c *Conn) setConfigOption(params json.RawMessage) (any, error) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Type      string          `json:"type"`
		Value     json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	st := c.a.lookupSession(p.SessionID)
	if st == nil {
		return nil, notFound("session", p.SessionID)
	}
	c.a.mu.Lock()
	defer c.a.mu.Unlock()
	o := findOption(st.config, p.ConfigID)
	if o == nil {
		return nil, invalidParams("unknown config option " + strconv.Quote(p.ConfigID))
	}
	if o["type"] == "boolean" || p.Type == "boolean" {
		var b bool
		if o["type"] != "boolean" || p.Type != "boolean" || json.Unmarshal(p.Value, &b) != nil {
			return nil, invalidParams("boolean option needs type \"boolean\" and a boolean value")
		}
		o["currentValue"] = b
	} else {
		var v string
		if json.Unmarshal(p.Value, &v) != nil || !selectHas(o["options"], v) {
			return nil, invalidParams("invalid value for " + strconv.Quote(p.ConfigID))
		}
		o["currentValue"] = v
	}
	return map[string]any{"configOptions": c.configOut(cloneJSON[[]any](st.config))}, nil
}

// selectHas reports whether a select option's options (flat or grouped)
// offer value v.
func selectHas(options any, v string) bool {
	list, _ := options.([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m["value"] == v {
			return true
		}
		if sub, ok := m["options"]; ok && selectHas(sub, v) {
			return true
		}
	}
	return false
}

func invalidParams(msg string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: mustJSON(msg)}
}

func notFound(what, id string) *Error {
	return &Error{Code: CodeResourceNotFound, Message: "Resource not found: " + what + " " + id}
}

func mustJSON(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func itoa(n int) string { return strconv.Itoa(n) }
