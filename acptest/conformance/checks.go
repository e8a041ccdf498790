// This file holds the checks run on every frame of every scenario's
// connections once the scenario ends: framing, response ids, the sessions
// updates name, tool calls, permission requests, the capabilities gating
// fs and terminal requests, and the v1 turn and v2 lifecycle rules.

package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpclient/acp"
)

// update is the part of a session/update the checks read.
type update struct {
	SessionID  string
	Kind       string
	State      string
	StopReason string
	MessageID  *string
	ToolCallID *string
	Title      *string
	Status     *string
	ToolKind   *string
	// v2 background work: a state_update's list (nil when absent), a
	// terminal_update's terminal and exit status.
	Background json.RawMessage
	TerminalID *string
	ExitStatus json.RawMessage
}

func updateOf(f *frame) (update, bool) {
	if f.dir != '<' || !f.ok || f.msg.Method != "session/update" {
		return update{}, false
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string          `json:"sessionUpdate"`
			State         string          `json:"state"`
			StopReason    string          `json:"stopReason"`
			MessageID     *string         `json:"messageId"`
			ToolCallID    *string         `json:"toolCallId"`
			Title         *string         `json:"title"`
			Status        *string         `json:"status"`
			Kind          *string         `json:"kind"`
			Background    json.RawMessage `json:"background"`
			TerminalID    *string         `json:"terminalId"`
			ExitStatus    json.RawMessage `json:"exitStatus"`
		} `json:"update"`
	}
	if json.Unmarshal(f.msg.Params, &p) != nil {
		return update{}, false
	}
	u := p.Update
	return update{p.SessionID, u.SessionUpdate, u.State, u.StopReason, u.MessageID, u.ToolCallID, u.Title, u.Status, u.Kind,
		u.Background, u.TerminalID, u.ExitStatus}, true
}

// historyKinds are the updates that make up a conversation's history.
var historyKinds = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"user_message": true, "agent_message": true, "agent_thought": true,
	"tool_call": true, "tool_call_update": true, "plan": true,
}

var messageKinds = map[string]bool{
	"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"user_message": true, "agent_message": true, "agent_thought": true,
}

var stopReasons = map[string]bool{"end_turn": true, "max_tokens": true, "max_turn_requests": true, "refusal": true, "cancelled": true}

var toolStatuses = map[string]bool{"pending": true, "in_progress": true, "completed": true, "failed": true}

var toolKinds = map[string]bool{"read": true, "edit": true, "delete": true, "move": true, "search": true,
	"execute": true, "think": true, "fetch": true, "switch_mode": true, "other": true}

var permissionKinds = map[string]bool{"allow_once": true, "allow_always": true, "reject_once": true, "reject_always": true}

// pending is a request the client sent that has no response yet.
type pending struct {
	method string
	params json.RawMessage
}

// turnState follows one session's v1 turns: whether a prompt is open,
// and how the last one ended.
type turnState struct {
	open      bool
	ended     bool // a prompt was answered and no new one sent
	cancelled bool // ... with stopReason cancelled
	loading   bool
}

// checkFrames grades the rules observed on every frame of a connection.
func (r *runner) checkFrames(s *scene, fs []frame) {
	if len(fs) == 0 {
		return
	}
	v := r.version
	out := map[string]pending{} // id -> request of the client's
	known := map[string]bool{}
	// Session ids answered anywhere on the connection: an update may
	// precede the session/new response that names its session.
	answered := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		if f.dir == '<' && f.ok && f.msg.isResponse() && f.msg.Result != nil {
			var res struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(f.msg.Result, &res) == nil && res.SessionID != "" {
				answered[res.SessionID] = true
			}
		}
	}
	turns := map[string]*turnState{}
	turnOf := func(id string) *turnState {
		if turns[id] == nil {
			turns[id] = &turnState{}
		}
		return turns[id]
	}
	announced := map[string]bool{}
	promptMsg := map[string]string{} // v2: messageId answered -> session
	userMsgs := map[string]bool{}    // v2: messageIds of user message updates
	v2turns := map[string]string{}   // v2: session -> "" | "running" | "idle" after a prompt
	closed := map[string]bool{}      // v2: sessions session/close closed
	bg := newBackgroundCheck(r)
	var fromAgent, updates, tools, perms, answeredPrompts int
	bad := func(id, msg string, f *frame) { r.fail(id, msg, f) }

	for i := range fs {
		f := &fs[i]
		if f.dir == '>' {
			if f.ok && f.msg.isRequest() {
				out[idKey(f.msg.ID)] = pending{f.msg.Method, f.msg.Params}
				var p struct {
					SessionID string `json:"sessionId"`
				}
				json.Unmarshal(f.msg.Params, &p)
				switch f.msg.Method {
				case "session/load", "session/resume":
					known[p.SessionID] = true
					turnOf(p.SessionID).loading = f.msg.Method == "session/load"
					delete(closed, p.SessionID)
				case "session/prompt":
					t := turnOf(p.SessionID)
					t.open, t.ended, t.cancelled = true, false, false
					v2turns[p.SessionID] = "sent"
				}
			}
			continue
		}
		fromAgent++
		if !f.ok {
			what := "a line that is not a JSON object"
			if len(strings.TrimSpace(string(f.line))) == 0 {
				what = "a blank line"
			}
			bad("jsonrpc.lines", "the agent wrote "+what+" to its output", f)
			continue
		}
		if f.msg.JSONRPC != "2.0" {
			bad("jsonrpc.lines", `a message without "jsonrpc":"2.0"`, f)
		}
		switch {
		case f.msg.isResponse():
			req, ok := out[idKey(f.msg.ID)]
			if !ok {
				bad("jsonrpc.responses", "a response with id "+idKey(f.msg.ID)+", which names no request of the client's awaiting an answer", f)
				continue
			}
			delete(out, idKey(f.msg.ID))
			if (f.msg.Result == nil) == (f.msg.Error == nil) {
				bad("jsonrpc.responses", "a response must have exactly one of result and error", f)
			}
			if e, isErr := errorOf(f); isErr && (e.Code == nil || e.Message == nil) {
				bad("jsonrpc.responses", "an error without an integer code and a string message", f)
			}
			var p struct {
				SessionID string `json:"sessionId"`
			}
			json.Unmarshal(req.params, &p)
			switch req.method {
			case "session/new":
				var res struct {
					SessionID string `json:"sessionId"`
				}
				if json.Unmarshal(f.msg.Result, &res) == nil && res.SessionID != "" {
					known[res.SessionID] = true
				}
			case "session/load":
				turnOf(p.SessionID).loading = false
			case "session/close":
				if v == 2 && f.msg.Result != nil {
					closed[p.SessionID] = true
				}
			case "session/prompt":
				if closed[p.SessionID] && f.msg.Result != nil {
					bad("v2.close", "a session/prompt for session "+p.SessionID+" was accepted after session/close closed it", f)
				}
				t := turnOf(p.SessionID)
				t.open = false
				if f.msg.Error != nil {
					// A refused v2 prompt starts no foreground work of
					// its own: no running/idle is owed unless running came.
					if v2turns[p.SessionID] == "sent" {
						delete(v2turns, p.SessionID)
					}
					continue
				}
				if v == 1 {
					var res struct {
						StopReason string `json:"stopReason"`
					}
					json.Unmarshal(f.msg.Result, &res)
					t.ended, t.cancelled = true, res.StopReason == "cancelled"
					answeredPrompts++
					if !stopReasons[res.StopReason] {
						bad("prompt.stop-reason", fmt.Sprintf("stopReason %q is not one of the schema's", res.StopReason), f)
					} else {
						r.pass("prompt.stop-reason", "every turn ended with a valid stop reason")
					}
				} else {
					var res struct {
						MessageID string `json:"messageId"`
					}
					json.Unmarshal(f.msg.Result, &res)
					if res.MessageID == "" {
						bad("v2.prompt-accepted", "the session/prompt result has no messageId", f)
					} else {
						promptMsg[res.MessageID] = p.SessionID
						r.pass("v2.prompt-accepted", "session/prompt answered a messageId")
					}
				}
			}
		case f.msg.isRequest():
			var p struct {
				SessionID string `json:"sessionId"`
				ToolCall  *struct {
					ToolCallID *string `json:"toolCallId"`
				} `json:"toolCall"`
				Title   *string `json:"title"`
				Subject *struct {
					Type     string `json:"type"`
					ToolCall *struct {
						ToolCallID *string `json:"toolCallId"`
					} `json:"toolCall"`
				} `json:"subject"`
				Options *[]struct {
					OptionID *string `json:"optionId"`
					Name     *string `json:"name"`
					Kind     *string `json:"kind"`
				} `json:"options"`
			}
			json.Unmarshal(f.msg.Params, &p)
			if p.SessionID != "" && !known[p.SessionID] {
				bad("session.updates-known", "a "+f.msg.Method+" request for session "+p.SessionID+", which the agent did not open on this connection", f)
			}
			switch {
			case strings.HasPrefix(f.msg.Method, "fs/") && !s.fs:
				bad("caps.fs", f.msg.Method+" although the client offered no fs capability", f)
			case strings.HasPrefix(f.msg.Method, "terminal/"):
				bad("caps.terminal", f.msg.Method+" although the client offered no terminal capability", f)
			case f.msg.Method == "session/request_permission":
				perms++
				switch {
				case v == 1 && (p.ToolCall == nil || p.ToolCall.ToolCallID == nil || *p.ToolCall.ToolCallID == ""):
					bad("permission.request", "the request has no toolCall.toolCallId", f)
				case v == 2 && p.Title == nil:
					bad("permission.request", "the request has no title", f)
				case v == 2 && p.Subject != nil && p.Subject.Type == "tool_call" &&
					(p.Subject.ToolCall == nil || p.Subject.ToolCall.ToolCallID == nil || *p.Subject.ToolCall.ToolCallID == ""):
					bad("permission.request", "the request's tool_call subject has no toolCall.toolCallId", f)
				case p.Options == nil || len(*p.Options) == 0:
					bad("permission.request", "the request has no options", f)
				default:
					for _, o := range *p.Options {
						if o.OptionID == nil || *o.OptionID == "" || o.Name == nil || o.Kind == nil ||
							!permissionKinds[*o.Kind] && !(v == 2 && strings.HasPrefix(*o.Kind, "_")) {
							bad("permission.request", "an option lacks an optionId or name, or has a kind not in the schema", f)
							break
						}
					}
				}
			}
		case f.msg.isNotification() && f.msg.Method == "session/update":
			u, _ := updateOf(f)
			updates++
			if !known[u.SessionID] && !answered[u.SessionID] {
				bad("session.updates-known", "a session/update for session "+u.SessionID+", which the agent did not open on this connection", f)
			}
			if v == 2 && closed[u.SessionID] {
				bad("v2.close", "a "+u.Kind+" update for session "+u.SessionID+" after session/close closed it", f)
			}
			if v == 2 {
				bg.update(u, f)
			}
			t := turnOf(u.SessionID)
			if v == 1 && historyKinds[u.Kind] && t.ended && !t.open && !t.loading {
				if t.cancelled {
					bad("cancel.no-late-updates", "a "+u.Kind+" update after the cancelled prompt was answered", f)
				} else {
					bad("prompt.updates-in-turn", "a "+u.Kind+" update after the prompt was answered", f)
				}
			}
			if v == 2 && messageKinds[u.Kind] {
				if u.MessageID == nil || *u.MessageID == "" {
					bad("v2.message-ids", "a "+u.Kind+" update without a messageId", f)
				} else if strings.HasPrefix(u.Kind, "user_message") {
					userMsgs[*u.MessageID] = true
				}
			}
			if v == 2 && u.Kind == "state_update" {
				switch u.State {
				case "running", "requires_action":
					if v2turns[u.SessionID] == "sent" {
						v2turns[u.SessionID] = "running"
					}
				case "idle":
					if v2turns[u.SessionID] == "running" {
						v2turns[u.SessionID] = "idle"
						r.pass("v2.state-lifecycle", "the turn reported running, then idle")
						switch {
						case u.StopReason == "":
						case stopReasons[u.StopReason] || strings.HasPrefix(u.StopReason, "_"):
							r.pass("prompt.stop-reason", "every turn ended with a valid stop reason")
						default:
							bad("prompt.stop-reason", fmt.Sprintf("stopReason %q is not one of the schema's and does not start with _", u.StopReason), f)
						}
					} else if v2turns[u.SessionID] == "sent" {
						bad("v2.state-lifecycle", "idle after a prompt without running first", f)
						v2turns[u.SessionID] = "idle"
					}
				}
			}
			switch u.Kind {
			case "tool_call", "tool_call_update":
				tools++
				if u.ToolCallID == nil || *u.ToolCallID == "" {
					bad("tools.shape", "a "+u.Kind+" without a toolCallId", f)
					continue
				}
				if v == 1 && u.Kind == "tool_call" && (u.Title == nil) {
					bad("tools.shape", "a tool_call without a title", f)
				}
				if u.Status != nil && !toolStatuses[*u.Status] && !(v == 2 && *u.Status == "cancelled") {
					bad("tools.shape", fmt.Sprintf("tool call status %q is not one of the schema's", *u.Status), f)
				}
				if u.ToolKind != nil && !toolKinds[*u.ToolKind] {
					bad("tools.shape", fmt.Sprintf("tool kind %q is not one of the schema's", *u.ToolKind), f)
				}
				if u.Kind == "tool_call" {
					announced[*u.ToolCallID] = true
				} else if v == 1 {
					if !announced[*u.ToolCallID] && !turnOf(u.SessionID).loading {
						bad("tools.known-ids", "a tool_call_update for "+*u.ToolCallID+", which no tool_call announced", f)
					} else {
						r.pass("tools.known-ids", "every tool_call_update named an announced tool call")
					}
				}
			}
		}
	}
	if fromAgent > 0 {
		r.pass("jsonrpc.lines", "every line was one JSON-RPC 2.0 object")
		r.pass("jsonrpc.responses", "every response answered one request of the client's")
		r.pass("session.updates-known", "every update named a session opened on the connection")
	}
	if v == 1 && !s.fs && fromAgent > 0 {
		r.pass("caps.fs", "no fs request while fs was not offered")
	}
	if v == 1 && fromAgent > 0 {
		r.pass("caps.terminal", "no terminal request")
	}
	if answeredPrompts > 0 {
		r.pass("prompt.updates-in-turn", "no turn output after a prompt was answered")
	}
	if tools > 0 {
		r.pass("tools.shape", fmt.Sprintf("%d tool call updates had valid ids, kinds and statuses", tools))
	}
	if perms > 0 {
		r.pass("permission.request", fmt.Sprintf("%d permission requests had the schema's shape", perms))
	}
	if v == 2 {
		for id, sess := range promptMsg {
			if userMsgs[id] {
				r.pass("v2.user-message", "the user message was reported with the prompt's messageId")
			} else {
				r.fail("v2.user-message", "no user_message update with messageId "+id+" (the prompt's) for session "+sess)
			}
		}
		for sess, st := range v2turns {
			if st == "sent" {
				r.fail("v2.state-lifecycle", "a prompt on session "+sess+" never reported running and idle")
			}
		}
		if updates > 0 {
			r.pass("v2.message-ids", "every message update carried a messageId")
		}
		bg.done()
	}
}

// checkDiagnostics grades what the acp client reported it tolerated.
func (r *runner) checkDiagnostics(s *scene) {
	s.mu.Lock()
	diags := append([]acp.Diagnostic(nil), s.diags...)
	s.mu.Unlock()
	for _, d := range diags {
		f := &frame{dir: '<', line: []byte(d.Line)}
		switch d.Kind {
		case acp.DiagBadUpdate, acp.DiagBadNotification, acp.DiagBadRequest:
			r.fail("prompt.updates-valid", fmt.Sprintf("the client reported %s: %s", d.Kind, d.Message), f)
		case acp.DiagUnknownUpdate:
			r.warn("prompt.updates-valid", fmt.Sprintf("the client reported %s: %s", d.Kind, d.Message), f)
		case acp.DiagJunkLine, acp.DiagBlankLine, acp.DiagLineTooLong:
			r.fail("jsonrpc.lines", fmt.Sprintf("the client reported %s: %s", d.Kind, d.Message), f)
		case acp.DiagDuplicateID, acp.DiagOrphanError:
			r.fail("jsonrpc.responses", fmt.Sprintf("the client reported %s: %s", d.Kind, d.Message), f)
		}
	}
	for _, c := range s.conns {
		for _, f := range c.log.all() {
			if _, ok := updateOf(&f); ok {
				r.pass("prompt.updates-valid", "the client decoded every update and request")
				return
			}
		}
	}
}
