package interop

// Raw JSON-line tests of tsagent/agent_v2.mjs, the scripted agent on the
// TypeScript SDK's experimental v2 API: the wire reference for the client's
// v2 (negotiation, the state_update lifecycle, upserts, permission
// withdrawal, resume with replay, background terminals).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

const tsagentV2 = "agent_v2.mjs"

// next returns the agent's next message, failing the test after 10 s.
func (c *rawClient) next(what string) rawMsg {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("%s: the agent closed stdout", what)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: nothing from the agent within 10 s", what)
	}
	panic("unreachable")
}

// session2 initializes with protocol version 2 and creates a session.
func (c *rawClient) session2() string {
	c.t.Helper()
	var ir struct {
		ProtocolVersion int             `json:"protocolVersion"`
		Info            json.RawMessage `json:"info"`
	}
	c.result("initialize", map[string]any{
		"protocolVersion": 2,
		"info":            map[string]string{"name": "acp-raw-test", "version": "0"},
		"capabilities":    map[string]any{},
	}, &ir, nil)
	if ir.ProtocolVersion != 2 || len(ir.Info) == 0 {
		c.t.Fatalf("initialize: protocolVersion %d, info %s", ir.ProtocolVersion, ir.Info)
	}
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	c.result("session/new", map[string]any{"cwd": "/tmp/acp-interop", "mcpServers": []any{}}, &ns, nil)
	if ns.SessionID == "" {
		c.t.Fatal("session/new: empty sessionId")
	}
	return ns.SessionID
}

// turn2 is what one v2 session/prompt produced up to the idle state that
// carries a stop reason.
type turn2 struct {
	messageID string    // the prompt response's messageId
	err       *rawError // the prompt's JSON-RPC error, if it failed
	idle      map[string]any
	updates   []map[string]any
	reports   []string // texts of the agent_message entries "t<turn>-r<n>"
	events    []string // "update:<kind>[:<state>]", "response", "<method>", in wire order
}

func (tr turn2) stopReason() string {
	s, _ := tr.idle["stopReason"].(string)
	return s
}

// isTurnEnd reports whether u is an idle state_update with a stop reason:
// the end of a v2 turn (an idle without one only says the background
// changed).
func isTurnEnd(u map[string]any) bool {
	return u["sessionUpdate"] == "state_update" && u["state"] == "idle" && u["stopReason"] != nil
}

// prompt2 sends a prompt and reads until the turn ended: the response came
// and, unless it was an error, an idle state with a stop reason. Agent
// requests and other notifications go to onReq (nil: none expected).
func (c *rawClient) prompt2(sessionID, text string, onReq func(rawMsg)) turn2 {
	c.t.Helper()
	id := c.nextID
	c.nextID++
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": map[string]any{
		"sessionId": sessionID,
		"prompt":    []any{map[string]string{"type": "text", "text": text}},
	}})
	var tr turn2
	answered := false
	for !answered || (tr.err == nil && tr.idle == nil) {
		m := c.next("session/prompt " + text)
		switch {
		case m.Method == "" && string(m.ID) == fmt.Sprint(id):
			answered = true
			tr.events = append(tr.events, "response")
			if m.Error != nil {
				tr.err = m.Error
				continue
			}
			var res struct {
				MessageID string `json:"messageId"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil {
				c.t.Fatalf("session/prompt result %s: %v", m.Result, err)
			}
			tr.messageID = res.MessageID
		case m.Method == "session/update":
			var u update
			if err := json.Unmarshal(m.Params, &u); err != nil {
				c.t.Fatalf("bad session/update %s: %v", m.Params, err)
			}
			if u.SessionID != sessionID {
				c.t.Errorf("session/update for %q, want %q", u.SessionID, sessionID)
			}
			tr.updates = append(tr.updates, u.Update)
			ev := fmt.Sprint("update:", u.Update["sessionUpdate"])
			if st, ok := u.Update["state"]; ok {
				ev += fmt.Sprint(":", st)
			}
			tr.events = append(tr.events, ev)
			if u.Update["sessionUpdate"] == "agent_message" {
				if id, _ := u.Update["messageId"].(string); strings.Contains(id, "-r") {
					tr.reports = append(tr.reports, entryText(u.Update))
				}
			}
			if isTurnEnd(u.Update) {
				tr.idle = u.Update
			}
		case onReq != nil:
			tr.events = append(tr.events, m.Method)
			onReq(m)
		case m.ID != nil:
			c.t.Fatalf("unexpected agent request %s %s", m.Method, m.Params)
		default:
			c.t.Logf("ignored %s %s", m.Method, m.Params)
		}
	}
	return tr
}

// entryText joins the text blocks of a whole message entry.
func entryText(u map[string]any) string {
	var b strings.Builder
	blocks, _ := u["content"].([]any)
	for _, bl := range blocks {
		if m, ok := bl.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func paramsMap(t *testing.T, m rawMsg) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("%s params %s: %v", m.Method, m.Params, err)
	}
	return p
}

// The SDK's v2 agent answers an offer of version 1 with -32022 and the
// versions it supports, and the connection stays usable: offering 2 next
// negotiates v2 with the v2 initialize shape (info, capabilities).
func TestTSAgentV2Negotiation(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	m := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	if m.Error == nil || m.Error.Code != -32022 {
		t.Fatalf("initialize offering 1: %s %+v; want error -32022", m.Result, m.Error)
	}
	var data struct {
		Requested int   `json:"requested"`
		Supported []int `json:"supported"`
	}
	if err := json.Unmarshal(m.Error.Data, &data); err != nil || data.Requested != 1 || !slices.Equal(data.Supported, []int{2}) {
		t.Errorf("-32022 data %s: want requested 1, supported [2]", m.Error.Data)
	}
	var ir struct {
		ProtocolVersion int `json:"protocolVersion"`
		Info            struct {
			Name string `json:"name"`
		} `json:"info"`
		Capabilities struct {
			Session map[string]json.RawMessage `json:"session"`
		} `json:"capabilities"`
		AuthMethods []map[string]any `json:"authMethods"`
		// v1 names that must be gone.
		AgentInfo         json.RawMessage `json:"agentInfo"`
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	}
	c.result("initialize", map[string]any{
		"protocolVersion": 2,
		"info":            map[string]string{"name": "acp-raw-test", "version": "0"},
	}, &ir, nil)
	if ir.ProtocolVersion != 2 || ir.Info.Name != "acp-interop-tsagent-v2" || ir.AgentInfo != nil || ir.AgentCapabilities != nil {
		t.Errorf("initialize offering 2: %+v", ir)
	}
	for _, k := range []string{"prompt", "mcp", "delete", "additionalDirectories"} {
		if _, ok := ir.Capabilities.Session[k]; !ok {
			t.Errorf("capabilities.session lacks %q: %v", k, ir.Capabilities.Session)
		}
	}
	if len(ir.AuthMethods) != 1 || ir.AuthMethods[0]["methodId"] != "token" || ir.AuthMethods[0]["type"] != "agent" {
		t.Errorf("authMethods %v, want one agent method with methodId token", ir.AuthMethods)
	}
	// An offer above 2 gets 2: the agent answers the version it picked.
	c2 := newRawClientScript(t, tsagentV2)
	c2.result("initialize", map[string]any{"protocolVersion": 3, "info": map[string]string{"name": "x", "version": "0"}}, &ir, nil)
	if ir.ProtocolVersion != 2 {
		t.Errorf("initialize offering 3: protocolVersion %d, want 2", ir.ProtocolVersion)
	}
}

// A v2 turn: running first, the prompt echoed as a whole user_message with
// the response's messageId, idle with the stop reason last; upserts keep
// omitted fields and carry null to clear.
func TestTSAgentV2Updates(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	tr := c.prompt2(sid, "updates", nil)
	if tr.err != nil || tr.stopReason() != "end_turn" {
		t.Fatalf("prompt: idle %v, error %+v; want end_turn", tr.idle, tr.err)
	}
	want := []string{
		"update:state_update:running", "update:user_message", "response",
		"update:agent_message_chunk", "update:agent_message_chunk", "update:agent_thought_chunk", "update:agent_thought",
		"update:tool_call_update", "update:tool_call_update", "update:tool_call_content_chunk", "update:tool_call_content_chunk",
		"update:tool_call_update", "update:plan_update", "update:available_commands_update", "update:config_option_update",
		"update:session_info_update", "update:session_info_update", "update:usage_update", "update:agent_message_chunk",
		"update:state_update:idle",
	}
	if !slices.Equal(tr.events, want) {
		t.Fatalf("events:\n got %v\nwant %v", tr.events, want)
	}
	u := tr.updates
	if tr.messageID == "" || u[1]["messageId"] != tr.messageID || entryText(u[1]) != "updates" {
		t.Errorf("user_message %v, response messageId %q", u[1], tr.messageID)
	}
	for _, i := range []int{2, 3, 4, 5, 17} {
		if u[i]["messageId"] == nil {
			t.Errorf("%v has no messageId (required in v2)", u[i])
		}
	}
	if _, ok := u[7]["title"]; ok {
		t.Errorf("second tool_call_update %v repeats fields: an upsert sends only what changes", u[7])
	}
	if v, ok := u[10]["locations"]; !ok || v != nil {
		t.Errorf("last tool_call_update %v: want locations null (cleared)", u[10])
	}
	if v, ok := u[15]["title"]; !ok || v != nil {
		t.Errorf("second session_info_update %v: want title null (cleared)", u[15])
	}
	if got := fmt.Sprint(u[9]["content"].(map[string]any)["type"]); got != "diff" {
		t.Errorf("second tool_call_content_chunk content type %s, want diff", got)
	}
	if bg, ok := tr.idle["background"].([]any); !ok || len(bg) != 0 {
		t.Errorf("idle background %v, want []", tr.idle["background"])
	}
}

func TestTSAgentV2Permission(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	for i, opt := range []string{"allow-once", "allow-always", "reject-once", "reject-always"} {
		tr := c.prompt2(sid, "permission", func(m rawMsg) {
			if m.Method != "session/request_permission" {
				t.Fatalf("unexpected agent request %s", m.Method)
			}
			p := paramsMap(t, m)
			subject, _ := p["subject"].(map[string]any)
			tc, _ := subject["toolCall"].(map[string]any)
			if p["sessionId"] != sid || p["title"] == nil || subject["type"] != "tool_call" || tc["toolCallId"] != fmt.Sprintf("t%d-perm", i+1) {
				t.Errorf("request_permission params %s", m.Params)
			}
			c.reply(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}})
		})
		want := []string{
			"update:state_update:running", "update:user_message", "response", "update:tool_call_update",
			"update:state_update:requires_action", "session/request_permission", "update:state_update:running",
			"update:tool_call_update", "update:agent_message", "update:state_update:idle",
		}
		if !slices.Equal(tr.events, want) {
			t.Errorf("%s: events\n got %v\nwant %v", opt, tr.events, want)
		}
		status := "completed"
		if strings.HasPrefix(opt, "reject") {
			status = "failed"
		}
		if got := tr.updates[len(tr.updates)-3]["status"]; got != status {
			t.Errorf("%s: tool call status %v, want %s", opt, got, status)
		}
		if tr.stopReason() != "end_turn" || !slices.Equal(tr.reports, []string{"outcome:selected:" + opt}) {
			t.Errorf("%s: stop %q reports %q error %+v", opt, tr.stopReason(), tr.reports, tr.err)
		}
	}
}

// On session/cancel with a permission request pending, the v2 agent
// withdraws the request itself ($/cancel_request naming it), stops waiting
// for the answer, and ends the turn idle "cancelled".
func TestTSAgentV2PermissionCancel(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	var req *rawMsg
	withdrawn := false
	tr := c.prompt2(sid, "cancel", func(m rawMsg) {
		switch m.Method {
		case "session/request_permission":
			req = &m
			c.notify("session/cancel", map[string]string{"sessionId": sid})
		case "$/cancel_request":
			p := paramsMap(t, m)
			if req == nil || fmt.Sprint(p["requestId"]) != string(req.ID) {
				t.Fatalf("$/cancel_request %s for request %v", m.Params, req)
			}
			withdrawn = true
			// What the client does with a withdrawn request: answer it
			// cancelled (the agent no longer waits for it).
			c.reply(*req, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}})
		default:
			t.Fatalf("unexpected %s", m.Method)
		}
	})
	if !withdrawn {
		t.Errorf("no $/cancel_request for the pending permission request")
	}
	if tr.err != nil || tr.stopReason() != "cancelled" {
		t.Fatalf("idle %v error %+v; want cancelled", tr.idle, tr.err)
	}
	if want := []string{"permission:error:-32800", "session/cancel:received"}; !slices.Equal(tr.reports, want) {
		t.Errorf("reports %q, want %q", tr.reports, want)
	}
	// The session takes the next prompt.
	if tr := c.prompt2(sid, "hello", nil); tr.stopReason() != "end_turn" || !slices.Equal(tr.reports, []string{"echo:hello"}) {
		t.Errorf("prompt after cancel: %+v", tr)
	}
}

// session/cancel while the agent streams: idle "cancelled", the text kept.
func TestTSAgentV2Cancel(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	id := c.nextID
	c.nextID++
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": map[string]any{
		"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "stall"}},
	}})
	var kinds []string
	answered, ended, cancelled := false, false, false
	for !answered || !ended {
		m := c.next("stall")
		if m.Method == "" {
			answered = true
			if m.Error != nil {
				t.Fatalf("prompt failed: %+v", m.Error)
			}
			continue
		}
		var u update
		json.Unmarshal(m.Params, &u)
		kinds = append(kinds, fmt.Sprint(u.Update["sessionUpdate"]))
		if u.Update["sessionUpdate"] == "agent_message_chunk" && !cancelled {
			// A second prompt while this one runs is refused.
			if m := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "x"}}}, nil); m.Error == nil || m.Error.Code != -32600 {
				t.Errorf("second prompt while one runs: %s %+v; want -32600", m.Result, m.Error)
			}
			c.notify("session/cancel", map[string]string{"sessionId": sid})
			cancelled = true
		}
		if isTurnEnd(u.Update) {
			ended = true
			if u.Update["stopReason"] != "cancelled" {
				t.Errorf("idle %v, want cancelled", u.Update)
			}
		}
	}
	if !slices.Contains(kinds, "agent_message_chunk") {
		t.Errorf("updates %v", kinds)
	}
}

// session/resume with replayFrom {"type":"start"} replays the session's
// entries, then sends the current state, then answers; without replayFrom
// it sends the state only.
func TestTSAgentV2Resume(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	c.prompt2(sid, "hello", nil)
	resume := func(sessionID string, replayFrom any) (events []string) {
		t.Helper()
		p := map[string]any{"sessionId": sessionID, "cwd": "/tmp/acp-interop", "mcpServers": []any{}}
		if replayFrom != nil {
			p["replayFrom"] = replayFrom
		}
		c.result("session/resume", p, nil, func(m rawMsg) {
			var u update
			json.Unmarshal(m.Params, &u)
			if u.SessionID != sessionID {
				t.Errorf("replay for %s, want %s", u.SessionID, sessionID)
			}
			ev := fmt.Sprint(u.Update["sessionUpdate"], " ", u.Update["messageId"])
			if u.Update["sessionUpdate"] == "state_update" {
				ev = fmt.Sprint("state_update ", u.Update["state"])
				if _, ok := u.Update["stopReason"]; ok {
					t.Errorf("the replay's state snapshot %v carries a stop reason: it would read as a second turn end", u.Update)
				}
			}
			events = append(events, ev)
		})
		return events
	}
	start := map[string]string{"type": "start"}
	if got, want := resume(sid, start), []string{"user_message t1-u", "agent_message t1-r1", "state_update idle"}; !slices.Equal(got, want) {
		t.Errorf("resume %s from start: %v, want %v", sid, got, want)
	}
	if got, want := resume(sid, nil), []string{"state_update idle"}; !slices.Equal(got, want) {
		t.Errorf("resume %s without replayFrom: %v, want %v", sid, got, want)
	}
	if got, want := resume("sess-2", start), []string{"user_message h-u1", "agent_message h-a1", "state_update idle"}; !slices.Equal(got, want) {
		t.Errorf("resume sess-2 from start: %v, want %v", got, want)
	}
	if m := c.call("session/resume", map[string]any{"sessionId": "nope", "cwd": "/tmp"}, nil); m.Error == nil || m.Error.Code != -32002 {
		t.Errorf("resume of an unknown session: %s %+v; want -32002", m.Result, m.Error)
	}
	if m := c.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/tmp", "replayFrom": map[string]string{"type": "later"}}, nil); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("resume with an unknown replayFrom: %s %+v; want -32602", m.Result, m.Error)
	}
}

// The error paths: a failure after acceptance is an idle "error" with the
// error; a refused prompt is a JSON-RPC error with no update; unknown
// sessions, terminals and auth methods are refused with their codes.
func TestTSAgentV2Errors(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	tr := c.prompt2(sid, "error", nil)
	if tr.err != nil || tr.messageID == "" || tr.stopReason() != "error" {
		t.Fatalf("error: %+v", tr)
	}
	e, _ := tr.idle["error"].(map[string]any)
	if e["code"] != -32603.0 || !strings.Contains(fmt.Sprint(e["data"]), "scenario:error") {
		t.Errorf("idle error %v", tr.idle)
	}
	tr = c.prompt2(sid, "reject", nil)
	if tr.err == nil || tr.err.Code != -32603 || !strings.Contains(string(tr.err.Data), `"scenario":"reject"`) || len(tr.updates) != 0 {
		t.Errorf("reject: error %+v, updates %v; want -32603 and no update", tr.err, tr.updates)
	}
	if m := c.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]string{"type": "text", "text": "x"}}}, nil); m.Error == nil || m.Error.Code != -32002 {
		t.Errorf("prompt to an unknown session: %s %+v; want -32002", m.Result, m.Error)
	}
	if m := c.call("terminal/cancel", map[string]string{"sessionId": sid, "terminalId": "nope"}, nil); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("terminal/cancel of an unknown terminal: %s %+v; want -32602", m.Result, m.Error)
	}
	if m := c.call("auth/login", map[string]string{"methodId": "nope"}, nil); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("auth/login with an unknown method: %s %+v; want -32602", m.Result, m.Error)
	}
	c.result("auth/login", map[string]string{"methodId": "token"}, nil, nil)
	c.result("auth/logout", map[string]any{}, nil, nil)
	// v1 methods are gone in v2.
	for _, method := range []string{"session/load", "session/set_mode", "authenticate"} {
		if m := c.call(method, map[string]any{"sessionId": sid, "cwd": "/tmp", "modeId": "x", "methodId": "token"}, nil); m.Error == nil || m.Error.Code != -32601 {
			t.Errorf("%s: %s %+v; want -32601", method, m.Result, m.Error)
		}
	}
	// The session still works.
	if tr := c.prompt2(sid, "hi", nil); tr.stopReason() != "end_turn" {
		t.Errorf("prompt after the errors: %+v", tr)
	}
}

// An agent-owned terminal outlives its turn: listed in the idle state's
// background, it keeps streaming until terminal/cancel, which is answered,
// confirmed by a terminal_update with exitStatus, and followed by an idle
// state without a stop reason and without the terminal.
func TestTSAgentV2BackgroundTerminal(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	tr := c.prompt2(sid, "terminal", nil)
	if tr.stopReason() != "end_turn" {
		t.Fatalf("terminal: %+v", tr)
	}
	bg, _ := json.Marshal(tr.idle["background"])
	if string(bg) != `[{"terminalId":"t1-term","type":"terminal"}]` {
		t.Fatalf("idle background %s, want the terminal", bg)
	}
	var out []string
	for _, u := range tr.updates {
		if u["sessionUpdate"] == "terminal_update" && (u["command"] != "watch" || u["capabilities"] == nil) {
			t.Errorf("terminal_update %v", u)
		}
	}
	// Output after the turn ended.
	decode := func(u map[string]any) string {
		b, err := base64.StdEncoding.DecodeString(fmt.Sprint(u["data"]))
		if err != nil {
			t.Fatalf("terminal_output_chunk data %v: %v", u["data"], err)
		}
		return string(b)
	}
	for len(out) < 2 {
		m := c.next("ticks")
		var u update
		json.Unmarshal(m.Params, &u)
		if u.Update["sessionUpdate"] != "terminal_output_chunk" || u.Update["terminalId"] != "t1-term" {
			t.Fatalf("after the turn: %s %s", m.Method, m.Params)
		}
		out = append(out, decode(u.Update))
	}
	if out[0] != "tick 1\n" || out[1] != "tick 2\n" {
		t.Errorf("background output %q", out)
	}
	// session/cancel does not stop background work.
	c.notify("session/cancel", map[string]string{"sessionId": sid})
	var after []string
	c.result("terminal/cancel", map[string]string{"sessionId": sid, "terminalId": "t1-term"}, nil, func(m rawMsg) {
		after = append(after, "tick") // output still streaming until the cancel is handled
	})
	for {
		m := c.next("terminal/cancel confirmation")
		var u update
		json.Unmarshal(m.Params, &u)
		kind := u.Update["sessionUpdate"]
		if kind == "terminal_output_chunk" {
			continue
		}
		if kind == "terminal_update" {
			exit, _ := u.Update["exitStatus"].(map[string]any)
			if exit["signal"] != "SIGTERM" {
				t.Errorf("terminal_update %v, want exitStatus signal SIGTERM", u.Update)
			}
			after = append(after, "terminal_update")
			continue
		}
		if kind != "state_update" || u.Update["state"] != "idle" || u.Update["stopReason"] != nil {
			t.Fatalf("after terminal/cancel: %v", u.Update)
		}
		if bg, ok := u.Update["background"].([]any); !ok || len(bg) != 0 {
			t.Errorf("idle background %v after terminal/cancel, want []", u.Update["background"])
		}
		break
	}
	if !slices.Contains(after, "terminal_update") {
		t.Errorf("no terminal_update with exitStatus before the idle state")
	}
	if m := c.call("terminal/cancel", map[string]string{"sessionId": sid, "terminalId": "t1-term"}, nil); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("second terminal/cancel: %s %+v; want -32602", m.Result, m.Error)
	}
}

// session/list pages, session/close and session/delete, and an extension
// request.
func TestTSAgentV2SessionMethods(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	var ids []string
	cursor := ""
	for range 3 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var lr struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		c.result("session/list", params, &lr, nil)
		for _, s := range lr.Sessions {
			ids = append(ids, s.SessionID)
		}
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(ids, []string{"sess-1", "sess-2", "sess-3"}) {
		t.Errorf("listed %v", ids)
	}
	var co struct {
		ConfigOptions []struct {
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.result("session/set_config_option", map[string]string{"sessionId": sid, "configId": "model", "type": "id", "value": "b"}, &co, nil)
	if len(co.ConfigOptions) != 1 || co.ConfigOptions[0].CurrentValue != "b" {
		t.Errorf("set_config_option %+v", co)
	}
	var pong struct {
		Pong bool `json:"pong"`
	}
	c.result("_acp/ping", map[string]int{"n": 1}, &pong, nil)
	if !pong.Pong {
		t.Errorf("_acp/ping: no pong")
	}
	c.result("session/close", map[string]string{"sessionId": sid}, nil, nil)
	if m := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": "x"}}}, nil); m.Error == nil || m.Error.Code != -32002 {
		t.Errorf("prompt to a closed session: %s %+v; want -32002", m.Result, m.Error)
	}
	c.result("session/delete", map[string]string{"sessionId": "sess-1"}, nil, nil)
}

// Extensions work in v2 as in v1: an extension notification, an extension
// request answered by the client, and the agent's own $/cancel_request for
// a request of its own.
func TestTSAgentV2Extensions(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	var order []string
	tr := c.prompt2(sid, "ext", func(m rawMsg) {
		order = append(order, m.Method)
		if m.ID != nil {
			c.reply(m, paramsMap(t, m))
		}
	})
	if want := fmt.Sprintf(`echo:{"sessionId":%q,"text":"ping"}`, sid); tr.stopReason() != "end_turn" || !slices.Equal(tr.reports, []string{want}) {
		t.Errorf("ext: stop %q reports %q, want %q", tr.stopReason(), tr.reports, want)
	}
	if !slices.Equal(order, []string{"_acp/note", "_acp/echo"}) {
		t.Errorf("ext messages %v", order)
	}
	var slow *rawMsg
	cancelled := false
	tr = c.prompt2(sid, "cancel_request", func(m rawMsg) {
		switch m.Method {
		case "_acp/slow":
			slow = &m
		case "$/cancel_request":
			p := paramsMap(t, m)
			if slow == nil || fmt.Sprint(p["requestId"]) != string(slow.ID) {
				t.Fatalf("$/cancel_request %s for request %v", m.Params, slow)
			}
			cancelled = true
			c.reply(*slow, &rawError{Code: -32800, Message: "Request cancelled"})
		}
	})
	if !cancelled || !slices.Equal(tr.reports, []string{"cancel_request:error:-32800"}) {
		t.Errorf("cancel_request: cancelled %v, reports %q", cancelled, tr.reports)
	}
}

// A background tool call: listed in the idle state's background after its
// turn, stopped by tool_call/cancel (answered, then a final
// tool_call_update, then an idle state without it and without a stop
// reason).
func TestTSAgentV2BackgroundToolCall(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2)
	sid := c.session2()
	tr := c.prompt2(sid, "bgtool", nil)
	bg, _ := json.Marshal(tr.idle["background"])
	if tr.stopReason() != "end_turn" || string(bg) != `[{"toolCallId":"t1-bg","type":"tool_call"}]` {
		t.Fatalf("bgtool: idle %v", tr.idle)
	}
	c.result("tool_call/cancel", map[string]string{"sessionId": sid, "toolCallId": "t1-bg"}, nil, nil)
	var got []string
	for len(got) < 2 {
		m := c.next("after tool_call/cancel")
		var u update
		json.Unmarshal(m.Params, &u)
		got = append(got, fmt.Sprintf("%v status=%v state=%v stop=%v background=%v", u.Update["sessionUpdate"], u.Update["status"], u.Update["state"], u.Update["stopReason"], u.Update["background"]))
	}
	if want := []string{
		"tool_call_update status=failed state=<nil> stop=<nil> background=<nil>",
		"state_update status=<nil> state=idle stop=<nil> background=[]",
	}; !slices.Equal(got, want) {
		t.Errorf("after tool_call/cancel: %q, want %q", got, want)
	}
	if m := c.call("tool_call/cancel", map[string]string{"sessionId": sid, "toolCallId": "t1-bg"}, nil); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("second tool_call/cancel: %s %+v; want -32602", m.Result, m.Error)
	}
}

// With TSAGENT_REQUIRE_AUTH=1, session/new fails -32000 until auth/login.
func TestTSAgentV2AuthRequired(t *testing.T) {
	t.Parallel()
	c := newRawClientScript(t, tsagentV2, "TSAGENT_REQUIRE_AUTH=1")
	c.result("initialize", map[string]any{"protocolVersion": 2, "info": map[string]string{"name": "x", "version": "0"}}, nil, nil)
	if m := c.call("session/new", map[string]any{"cwd": "/tmp"}, nil); m.Error == nil || m.Error.Code != -32000 {
		t.Fatalf("session/new before auth/login: %s %+v; want -32000", m.Result, m.Error)
	}
	c.result("auth/login", map[string]string{"methodId": "token"}, nil, nil)
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	c.result("session/new", map[string]any{"cwd": "/tmp"}, &ns, nil)
	if ns.SessionID == "" {
		t.Errorf("session/new after auth/login: no sessionId")
	}
}
