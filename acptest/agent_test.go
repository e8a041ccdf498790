package acptest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func TestHandshake(t *testing.T) {
	a := New(nil)
	c := dial(t, a)

	if e := c.callErr("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}}); e.Code != CodeInvalidRequest {
		t.Errorf("request before initialize: got code %d, want %d", e.Code, CodeInvalidRequest)
	}
	got := decode(t, c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true}}))
	want := map[string]any{
		"protocolVersion": 1.0,
		"agentCapabilities": map[string]any{
			"loadSession":        true,
			"promptCapabilities": map[string]any{"image": true, "audio": true, "embeddedContext": true},
			"sessionCapabilities": map[string]any{
				"list": map[string]any{}, "resume": map[string]any{}, "close": map[string]any{}, "delete": map[string]any{},
			},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]any{"name": "acptest", "version": "0.0.0"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("initialize result (-want +got):\n%s", d)
	}
	if e := c.callErr("no/such_method", map[string]any{}); e.Code != CodeMethodNotFound {
		t.Errorf("unknown method: got %v", e)
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	c := dial(t, New(&Options{ProtocolVersion: 2}))
	var r struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	mustUnmarshal(t, c.initialize(nil), &r)
	if r.ProtocolVersion != 2 {
		t.Errorf("protocolVersion = %d, want 2", r.ProtocolVersion)
	}
}

func TestAuth(t *testing.T) {
	a := New(&Options{
		RequireAuth: true,
		AuthMethods: []any{
			map[string]any{"id": "key", "name": "API key"},
			map[string]any{"id": "term", "name": "Terminal", "type": "terminal"},
		},
	})
	c := dial(t, a)
	c.initialize(nil)
	newParams := map[string]any{"cwd": "/w", "mcpServers": []any{}}
	if e := c.callErr("session/new", newParams); e.Code != CodeAuthRequired {
		t.Fatalf("session/new before auth: %v", e)
	}
	for _, id := range []string{"nope", "term"} {
		if e := c.callErr("authenticate", map[string]any{"methodId": id}); e.Code != CodeInvalidParams {
			t.Errorf("authenticate %q: %v", id, e)
		}
	}
	c.call("authenticate", map[string]any{"methodId": "key"})
	if c.newSession() == "" {
		t.Fatal("no session id")
	}
	c.call("logout", map[string]any{})
	if e := c.callErr("session/list", map[string]any{}); e.Code != CodeAuthRequired {
		t.Errorf("session/list after logout: %v", e)
	}
}

func TestAcceptAuth(t *testing.T) {
	c := dial(t, New(&Options{
		RequireAuth: true,
		AcceptAuth: func(id string) error {
			return &Error{Code: CodeInternalError, Message: "Internal error", Data: json.RawMessage(`"KEY is not set"`)}
		},
	}))
	c.initialize(nil)
	e := c.callErr("authenticate", map[string]any{"methodId": "x"})
	if e.Code != CodeInternalError || string(e.Data) != `"KEY is not set"` {
		t.Errorf("got %v", e)
	}
}

func TestOnNewSessionUpdatesPrecedeResponse(t *testing.T) {
	a := New(&Options{
		OnNewSession: func(s *Session) {
			s.Commands(SlashCommand{Name: "help", Description: "Show help"}, SlashCommand{Name: "echo", Description: "Echo", Hint: "text"})
		},
	})
	c := dial(t, a)
	c.initialize(nil)
	res, before := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	var r struct {
		SessionID string `json:"sessionId"`
	}
	mustUnmarshal(t, res, &r)
	want := []any{map[string]any{
		"sessionUpdate": "available_commands_update",
		"availableCommands": []any{
			map[string]any{"name": "help", "description": "Show help"},
			map[string]any{"name": "echo", "description": "Echo", "input": map[string]any{"hint": "text"}},
		},
	}}
	if d := cmp.Diff(want, updates(t, before)); d != "" {
		t.Errorf("updates before the response (-want +got):\n%s", d)
	}
	if before[0].Params == nil || r.SessionID != "sess-1" {
		t.Errorf("session id %q", r.SessionID)
	}
}

func TestTurnEveryUpdateKind(t *testing.T) {
	old := "old"
	line := uint32(3)
	a := New(&Options{
		Modes: map[string]any{"currentModeId": "ask", "availableModes": []any{
			map[string]any{"id": "ask", "name": "Ask"}, map[string]any{"id": "code", "name": "Code"}}},
		OnPrompt: func(t *Turn) (schema.StopReason, error) {
			t.Say("a")
			t.SayID("m1", "b")
			t.Think("c")
			t.ThinkID("m2", "d")
			t.Update(UserMessage("u1", "echo"))
			t.ToolCall(ToolCallSpec{ID: "tc1", Title: "Read", Kind: "read", Status: "pending",
				Locations: []any{Location("/w/f.go", &line)}, RawInput: map[string]any{"path": "/w/f.go"}})
			t.UpdateToolCall(ToolCallSpec{ID: "tc1", Status: "completed", Content: []any{
				ToolContent(Text("done")), Diff("/w/f.go", &old, "new"), Diff("/w/n.go", nil, "x"), TerminalContent("term-1")}})
			t.Plan(schema.PlanEntry{Content: "one", Priority: "high", Status: "completed"}, schema.PlanEntry{Content: "two"})
			t.Commands()
			t.Mode("code")
			t.ConfigOptions([]any{map[string]any{"id": "m", "name": "M", "type": "boolean", "currentValue": true}})
			t.Usage(10, 100)
			t.SessionInfo("Title")
			t.Update(map[string]any{"sessionUpdate": "future_kind", "x": 1})
			t.Stream(3, "s")
			t.SetResult("_meta", map[string]any{"k": "v"})
			return "max_tokens", nil
		},
	})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	res, before := c.call("session/prompt", prompt(sid, "hi"))
	if d := cmp.Diff(map[string]any{"stopReason": "max_tokens", "_meta": map[string]any{"k": "v"}}, decode(t, res)); d != "" {
		t.Errorf("prompt result (-want +got):\n%s", d)
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	want := []any{
		map[string]any{"sessionUpdate": "agent_message_chunk", "content": text("a")},
		map[string]any{"sessionUpdate": "agent_message_chunk", "content": text("b"), "messageId": "m1"},
		map[string]any{"sessionUpdate": "agent_thought_chunk", "content": text("c")},
		map[string]any{"sessionUpdate": "agent_thought_chunk", "content": text("d"), "messageId": "m2"},
		map[string]any{"sessionUpdate": "user_message_chunk", "content": text("echo"), "messageId": "u1"},
		map[string]any{"sessionUpdate": "tool_call", "toolCallId": "tc1", "title": "Read", "kind": "read", "status": "pending",
			"locations": []any{map[string]any{"path": "/w/f.go", "line": 3.0}}, "rawInput": map[string]any{"path": "/w/f.go"}},
		map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "tc1", "status": "completed", "content": []any{
			map[string]any{"type": "content", "content": text("done")},
			map[string]any{"type": "diff", "path": "/w/f.go", "oldText": "old", "newText": "new"},
			map[string]any{"type": "diff", "path": "/w/n.go", "newText": "x"},
			map[string]any{"type": "terminal", "terminalId": "term-1"},
		}},
		map[string]any{"sessionUpdate": "plan", "entries": []any{
			map[string]any{"content": "one", "priority": "high", "status": "completed"},
			map[string]any{"content": "two", "priority": "medium", "status": "pending"},
		}},
		map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}},
		map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": "code"},
		map[string]any{"sessionUpdate": "config_option_update", "configOptions": []any{
			map[string]any{"id": "m", "name": "M", "type": "boolean", "currentValue": true}}},
		map[string]any{"sessionUpdate": "usage_update", "used": 10.0, "size": 100.0},
		map[string]any{"sessionUpdate": "session_info_update", "title": "Title"},
		map[string]any{"sessionUpdate": "future_kind", "x": 1.0},
		map[string]any{"sessionUpdate": "agent_message_chunk", "content": text("s")},
		map[string]any{"sessionUpdate": "agent_message_chunk", "content": text("s")},
		map[string]any{"sessionUpdate": "agent_message_chunk", "content": text("s")},
	}
	if d := cmp.Diff(want, updates(t, before)); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	for _, m := range before {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		mustUnmarshal(t, m.Params, &p)
		if p.SessionID != sid {
			t.Errorf("update for session %q, want %q", p.SessionID, sid)
		}
	}
	// Mode and SessionInfo changed the session's state.
	list, _ := c.call("session/list", map[string]any{})
	if d := cmp.Diff(map[string]any{"sessions": []any{map[string]any{"sessionId": sid, "cwd": "/work", "title": "Title"}}}, decode(t, list)); d != "" {
		t.Errorf("session/list (-want +got):\n%s", d)
	}
}

func TestPromptErrors(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		switch t.PromptText() {
		case "refuse":
			return "", Errorf(CodeInvalidParams, "no %s", "way")
		case "fail":
			return "", errors.New("boom")
		}
		panic("script bug")
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	if e := c.callErr("session/prompt", prompt(sid, "refuse")); e.Code != CodeInvalidParams || e.Message != "no way" {
		t.Errorf("refuse: %v", e)
	}
	if e := c.callErr("session/prompt", prompt(sid, "fail")); e.Code != CodeInternalError || e.Message != "boom" {
		t.Errorf("fail: %v", e)
	}
	if e := c.callErr("session/prompt", prompt(sid, "panic")); e.Code != CodeInternalError {
		t.Errorf("panic: %v", e)
	}
	if e := c.callErr("session/prompt", prompt("nope", "x")); e.Code != CodeResourceNotFound {
		t.Errorf("unknown session: %v", e)
	}
}
