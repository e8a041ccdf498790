package acptest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func TestListPagination(t *testing.T) {
	var sessions []any
	for i := range 5 {
		cwd := "/a"
		if i%2 == 1 {
			cwd = "/b"
		}
		sessions = append(sessions, map[string]any{"sessionId": fmt.Sprint("s", i), "cwd": cwd})
	}
	c := dial(t, New(&Options{Sessions: sessions, PageSize: 2}))
	c.initialize(nil)
	var ids []string
	var cursors []string
	params := map[string]any{}
	for {
		res, _ := c.call("session/list", params)
		var r struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
			NextCursor *string `json:"nextCursor"`
		}
		mustUnmarshal(t, res, &r)
		for _, s := range r.Sessions {
			ids = append(ids, s.SessionID)
		}
		if r.NextCursor == nil {
			break
		}
		cursors = append(cursors, *r.NextCursor)
		params = map[string]any{"cursor": *r.NextCursor}
	}
	if d := cmp.Diff([]string{"s0", "s1", "s2", "s3", "s4"}, ids); d != "" {
		t.Errorf("ids (-want +got):\n%s", d)
	}
	if len(cursors) != 2 {
		t.Errorf("cursors %v, want 2 pages after the first", cursors)
	}
	res, _ := c.call("session/list", map[string]any{"cwd": "/b"})
	if d := cmp.Diff(map[string]any{"sessions": []any{
		map[string]any{"sessionId": "s1", "cwd": "/b"}, map[string]any{"sessionId": "s3", "cwd": "/b"}}}, decode(t, res)); d != "" {
		t.Errorf("cwd filter (-want +got):\n%s", d)
	}
	if e := c.callErr("session/list", map[string]any{"cursor": "bogus"}); e.Code != CodeInvalidParams {
		t.Errorf("invalid cursor: %v", e)
	}
	c.call("session/delete", map[string]any{"sessionId": "s0"})
	c.call("session/delete", map[string]any{"sessionId": "never-existed"})
	res, _ = c.call("session/list", map[string]any{"cwd": "/a"})
	if d := cmp.Diff(map[string]any{"sessions": []any{
		map[string]any{"sessionId": "s2", "cwd": "/a"}, map[string]any{"sessionId": "s4", "cwd": "/a"}}}, decode(t, res)); d != "" {
		t.Errorf("after delete (-want +got):\n%s", d)
	}
}

var testModes = map[string]any{"currentModeId": "ask", "availableModes": []any{
	map[string]any{"id": "ask", "name": "Ask"}, map[string]any{"id": "code", "name": "Code"}}}

var testConfig = []any{
	map[string]any{"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "fast",
		"options": []any{map[string]any{"value": "fast", "name": "Fast"},
			map[string]any{"group": "g", "name": "More", "options": []any{map[string]any{"value": "smart", "name": "Smart"}}}}},
	map[string]any{"id": "web", "name": "Web", "type": "boolean", "currentValue": false},
}

func TestLoadReplaysHistory(t *testing.T) {
	loaded := make(chan string, 1)
	a := New(&Options{
		Modes:         testModes,
		History:       map[string][]any{"old-1": {UserMessage("", "hello"), AgentMessage("m1", "hi there")}},
		OnLoadSession: func(s *Session) { loaded <- s.SessionID() + " " + s.Cwd() },
		OnPrompt: func(t *Turn) (schema.StopReason, error) {
			t.SayID("r1", "answer to "+t.PromptText())
			t.Usage(1, 2) // not history
			return "", nil
		},
	})
	c := dial(t, a)
	c.initialize(nil)
	res, before := c.call("session/load", map[string]any{"sessionId": "old-1", "cwd": "/p", "mcpServers": []any{}})
	want := []any{UserMessage("", "hello"), AgentMessage("m1", "hi there")}
	if d := cmp.Diff(decode(t, mustJSON(want)), updates(t, before)); d != "" {
		t.Errorf("replay (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"modes": decode(t, mustJSON(testModes))}, decode(t, res)); d != "" {
		t.Errorf("load result (-want +got):\n%s", d)
	}
	if got := <-loaded; got != "old-1 /p" {
		t.Errorf("OnLoadSession saw %q", got)
	}
	if e := c.callErr("session/load", map[string]any{"sessionId": "nope", "cwd": "/p", "mcpServers": []any{}}); e.Code != CodeResourceNotFound {
		t.Errorf("unknown session: %v", e)
	}

	// A live session records its conversation, and a second connection
	// can load it.
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "q"))
	c2 := dial(t, a)
	c2.initialize(nil)
	_, before = c2.call("session/load", map[string]any{"sessionId": sid, "cwd": "/work", "mcpServers": []any{}})
	<-loaded
	want = []any{
		map[string]any{"sessionUpdate": "user_message_chunk", "content": Text("q")},
		AgentMessage("r1", "answer to q"),
	}
	if d := cmp.Diff(decode(t, mustJSON(want)), updates(t, before)); d != "" {
		t.Errorf("replay of a live session (-want +got):\n%s", d)
	}
	_, before = c2.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/work", "mcpServers": []any{}})
	<-loaded
	if len(before) != 0 {
		t.Errorf("session/resume replayed %d messages", len(before))
	}
}

func TestModesAndConfigOptions(t *testing.T) {
	seen := make(chan string, 1)
	a := New(&Options{Modes: testModes, ConfigOptions: testConfig, OnPrompt: func(t *Turn) (schema.StopReason, error) {
		seen <- fmt.Sprint(t.CurrentMode(), " ", t.ConfigValue("model"), " ", t.ConfigValue("web"))
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	res, _ := c.call("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	if d := cmp.Diff(map[string]any{"sessionId": "sess-1", "modes": decode(t, mustJSON(testModes)), "configOptions": decode(t, mustJSON(testConfig))}, decode(t, res)); d != "" {
		t.Errorf("session/new (-want +got):\n%s", d)
	}
	sid := "sess-1"
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "code"})
	if e := c.callErr("session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}); e.Code != CodeInvalidParams {
		t.Errorf("unknown mode: %v", e)
	}
	res, _ = c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "smart"})
	var r struct {
		ConfigOptions []map[string]any `json:"configOptions"`
	}
	mustUnmarshal(t, res, &r)
	if len(r.ConfigOptions) != 2 || r.ConfigOptions[0]["currentValue"] != "smart" {
		t.Errorf("set_config_option answered %s", res)
	}
	c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "web", "type": "boolean", "value": true})
	for _, bad := range []map[string]any{
		{"sessionId": sid, "configId": "model", "value": "huge"},
		{"sessionId": sid, "configId": "model", "type": "boolean", "value": true},
		{"sessionId": sid, "configId": "web", "value": "true"},
		{"sessionId": sid, "configId": "nope", "value": "x"},
	} {
		if e := c.callErr("session/set_config_option", bad); e.Code != CodeInvalidParams {
			t.Errorf("%v: %v", bad, e)
		}
	}
	c.call("session/prompt", prompt(sid, "x"))
	if got := <-seen; got != "code smart true" {
		t.Errorf("script saw %q", got)
	}
}

func TestSetModeWhileTurnBlocks(t *testing.T) {
	a := New(&Options{Modes: testModes, OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("waiting")
		<-t.Cancelled()
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	c.next()
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "code"})
	// session/close cancels the turn; the prompt's answer may come before
	// or after close's own.
	_, before := c.call("session/close", map[string]any{"sessionId": sid})
	var resp wireMsg
	found := false
	for _, m := range before {
		if m.Method == "" && idKey(m.ID) == idKey(id) {
			resp, found = m, true
		}
	}
	if !found {
		resp, _ = c.await(id)
	}
	if decode(t, resp.Result).(map[string]any)["stopReason"] != "cancelled" {
		t.Errorf("got %s", resp.raw)
	}
	if e := c.callErr("session/close", map[string]any{"sessionId": "nope"}); e.Code != CodeResourceNotFound {
		t.Errorf("close unknown: %v", e)
	}
}

func TestExtMethodsAndNotifications(t *testing.T) {
	notes := make(chan string, 4)
	a := New(&Options{
		OnExtMethod: func(ctx context.Context, c *Conn, method string, params json.RawMessage) (any, error) {
			return map[string]any{"method": method, "params": params}, nil
		},
		OnNotification: func(c *Conn, method string, params json.RawMessage) { notes <- method },
	})
	c := dial(t, a)
	c.initialize(nil)
	res, _ := c.call("_zed.dev/x", map[string]any{"a": 1})
	if d := cmp.Diff(map[string]any{"method": "_zed.dev/x", "params": map[string]any{"a": 1.0}}, decode(t, res)); d != "" {
		t.Error(d)
	}
	c.notify("_zed.dev/n", map[string]any{})
	c.call("_sync", nil) // notifications are handled in order, before this request
	if got := <-notes; got != "_zed.dev/n" {
		t.Errorf("notification %q", got)
	}
}
