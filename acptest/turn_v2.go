package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/schema"
)

// ACP v2 (Options.Version 2): the same scenario API, the v2 wire. See
// Options.Version for what changes.

// initializeV2 answers initialize the v2 way.
func (c *Conn) initializeV2(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion    int             `json:"protocolVersion"`
		Capabilities       json.RawMessage `json:"capabilities"`
		ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams(err.Error())
	}
	if p.ProtocolVersion < 2 {
		return nil, &Error{Code: -32022, Message: "Unsupported protocol version",
			Data: mustJSON(map[string]any{"requested": p.ProtocolVersion, "supported": []int{2}})}
	}
	c.mu.Lock()
	c.clientCaps = p.Capabilities
	c.mu.Unlock()
	o := &c.a.opts
	res := map[string]any{"protocolVersion": 2, "info": o.AgentInfo, "capabilities": o.Capabilities}
	if o.AgentInfo == nil {
		res["info"] = map[string]any{"name": "acptest", "version": "0.0.0"}
	}
	if o.Capabilities == nil {
		res["capabilities"] = map[string]any{"session": map[string]any{
			"prompt": map[string]any{"image": map[string]any{}, "audio": map[string]any{}, "embeddedContext": map[string]any{}},
			"mcp":    map[string]any{"stdio": map[string]any{}, "http": map[string]any{}},
			"delete": map[string]any{},
		}}
	}
	methods := []any{}
	for _, m := range o.AuthMethods {
		mm := cloneJSON[map[string]any](m)
		if id, ok := mm["id"]; ok {
			mm["methodId"] = id
			delete(mm, "id")
		}
		if mm["type"] == nil {
			mm["type"] = "agent"
		}
		methods = append(methods, mm)
	}
	if len(methods) > 0 {
		res["authMethods"] = methods
	}
	return res, nil
}

// userMessageID is the id of a v2 turn's user message (its chunks get
// the same, see v2Form).
func (t *Turn) userMessageID() string { return fmt.Sprintf("t%d-u", t.number) }

// acceptV2 is the session/prompt handler of a v2 turn: running, the
// prompt's echo as a user_message, then the answer {messageId}. The script
// runs after the answer is written (runV2).
func (t *Turn) acceptV2() func(context.Context) (any, error) {
	t.v2 = true
	t.script = t.a.opts.OnPrompt
	return func(context.Context) (any, error) {
		if err := t.state("running", "", nil); err != nil {
			return nil, err
		}
		var blocks []json.RawMessage
		_ = json.Unmarshal(t.prompt, &blocks)
		if err := t.Update(map[string]any{"sessionUpdate": "user_message", "messageId": t.userMessageID(), "content": blocks}); err != nil {
			return nil, err
		}
		return map[string]any{"messageId": t.userMessageID()}, nil
	}
}

// runV2 runs the script of a v2 turn once its prompt was accepted and ends
// it with the idle state: the script's stop reason, or "error" with its
// error. It runs on the request's goroutine.
func (t *Turn) runV2() {
	defer t.finish(true)
	var stop schema.StopReason
	var err error
	if t.script != nil {
		stop, err = callScript(t)
	}
	if err != nil {
		_ = t.state("idle", schema.StopReasonError, errorObject(err))
		return
	}
	if stop == "" {
		stop = schema.StopReasonEndTurn
		if t.IsCancelled() {
			stop = schema.StopReasonCancelled
		}
	}
	_ = t.state("idle", stop, nil)
}

func callScript(t *Turn) (stop schema.StopReason, err error) {
	defer func() {
		if p := recover(); p != nil {
			stop, err = "", &Error{Code: CodeInternalError, Message: fmt.Sprintf("acptest: script panicked: %v", p)}
		}
	}()
	return t.script(t)
}

// state sends a state_update snapshot (never remembered as history).
func (t *Turn) state(st string, stop schema.StopReason, e any) error {
	return t.Session.state(st, stop, e)
}

// state sends a state_update snapshot on the session.
func (s *Session) state(st string, stop schema.StopReason, e any) error {
	s.a.mu.Lock()
	bg := append([]any{}, s.st.background...)
	s.a.mu.Unlock()
	u := map[string]any{"sessionUpdate": "state_update", "state": st, "background": bg}
	if stop != "" {
		u["stopReason"] = stop
	}
	if e != nil {
		u["error"] = e
	}
	b, err := marshal(u)
	if err != nil {
		return err
	}
	return s.send(b, false)
}

// SetBackground sets the session's background work, the v2
// state_update.background list every later snapshot carries (none sends
// []): entries such as {"type":"terminal","terminalId":ID}, each announced
// first (a terminal_update, a tool call update) and, before the list that
// drops it, ended (exitStatus, a final status), as the schema asks. While
// a turn runs the list goes out with its next state_update; otherwise at
// once, in an idle snapshot without a stop reason (no foreground work
// ended). On a v1 connection it only records the list. Unstable: ACP v2
// is in Preview; may change.
func (s *Session) SetBackground(items ...any) error {
	s.a.mu.Lock()
	s.st.background = append([]any(nil), items...)
	s.a.mu.Unlock()
	if !s.isV2() || s.runningTurnV2() != nil {
		return nil
	}
	return s.state("idle", "", nil)
}

// v2Form puts an update a script wrote in v1 form into v2 form: tool_call
// becomes the tool_call_update upsert, and a chunk without a messageId
// gets the default one of its kind (v2 requires it). Anything else, or
// what does not parse, goes out as written.
func (s *Session) v2Form(update []byte) []byte {
	var u map[string]json.RawMessage
	if json.Unmarshal(update, &u) != nil {
		return update
	}
	var kind string
	_ = json.Unmarshal(u["sessionUpdate"], &kind)
	changed := false
	switch kind {
	case "tool_call":
		u["sessionUpdate"] = json.RawMessage(`"tool_call_update"`)
		changed = true
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		if id, ok := u["messageId"]; !ok || string(id) == `""` || string(id) == "null" {
			s.a.mu.Lock()
			n := s.st.prompts
			s.a.mu.Unlock()
			u["messageId"] = mustJSON(fmt.Sprintf("t%d-%s", n, map[string]string{
				"agent_message_chunk": "m", "agent_thought_chunk": "th", "user_message_chunk": "u"}[kind]))
			changed = true
		}
	}
	if !changed {
		return update
	}
	b, err := json.Marshal(u)
	if err != nil {
		return update
	}
	return b
}

// requestPermissionV2 sends the v2 session/request_permission: a title
// (the tool call's, else its id), the tool call as the subject, options.
// It does what the real v2 agents do (docs/V2.md): while a turn runs, it
// reports requires_action before the request and running once answered
// (unless the turn was cancelled meanwhile), and a session/cancel
// withdraws the pending request with $/cancel_request
// (withdrawPermissions); the client's answer after that still returns.
func (s *Session) requestPermissionV2(toolCall, options any) (json.RawMessage, error) {
	tc := cloneJSON[map[string]any](toolCall)
	id, _ := tc["toolCallId"].(string)
	title, _ := tc["title"].(string)
	if title == "" {
		title = id
	}
	turn := s.runningTurnV2()
	if turn != nil {
		if err := turn.state("requires_action", "", nil); err != nil {
			return nil, err
		}
	}
	// Registered before it is written: the client may read it and send
	// session/cancel before Start returns.
	p := &pendingPerm{}
	s.a.mu.Lock()
	if s.st.perms == nil {
		s.st.perms = map[*pendingPerm]struct{}{}
	}
	s.st.perms[p] = struct{}{}
	s.a.mu.Unlock()
	defer func() {
		s.a.mu.Lock()
		delete(s.st.perms, p)
		s.a.mu.Unlock()
	}()
	r, err := s.Start(schema.MethodSessionRequestPermission, map[string]any{
		"sessionId": s.st.id, "title": title,
		"subject": map[string]any{"type": "tool_call", "toolCall": map[string]any{"toolCallId": id}},
		"options": options,
	})
	if err != nil {
		return nil, err
	}
	s.a.mu.Lock()
	p.r = r
	withdraw := p.withdrawn
	s.a.mu.Unlock()
	if withdraw {
		_ = r.Cancel()
	}
	res, err := r.Wait(s.ctx)
	if s.ctx.Err() != nil && err == s.ctx.Err() {
		r.forget()
	}
	if err != nil {
		return nil, err
	}
	if turn != nil && !turn.IsCancelled() {
		if err := turn.state("running", "", nil); err != nil {
			return nil, err
		}
	}
	var out struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.Outcome == nil {
		return nil, errors.New("acptest: permission reply without outcome: " + string(res))
	}
	return out.Outcome, nil
}

// runningTurnV2 returns a v2 turn of the session that runs and is not
// cancelled, or nil.
func (s *Session) runningTurnV2() *Turn {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	for t := range s.st.turns {
		if t.v2 && !t.IsCancelled() {
			return t
		}
	}
	return nil
}

// withdrawPermissions is a v2 agent's answer to session/cancel for the
// permission requests still pending on the session: $/cancel_request for
// each (what codex-acp and claude-agent-acp do; the TypeScript SDK's
// stopWaitingOnCancel).
func (a *Agent) withdrawPermissions(sessionID string) {
	a.mu.Lock()
	var reqs []*Request
	if st := a.sessions[sessionID]; st != nil {
		for p := range st.perms {
			if p.r == nil {
				p.withdrawn = true // being written: withdrawn once it is
			} else if !p.withdrawn {
				p.withdrawn = true
				reqs = append(reqs, p.r)
			}
		}
	}
	a.mu.Unlock()
	for _, r := range reqs {
		_ = r.Cancel()
	}
}
