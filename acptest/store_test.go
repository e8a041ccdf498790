package acptest

// Tests of what an agent whose sessions outlive it needs: AnyVersion,
// NewSessionID, OpenSession, Session.History and Session.Title.

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// TestAnyVersionPerConnection: one agent answers a v1 client in v1 and a
// v2 client in v2, and each connection's turns take its own shape.
func TestAnyVersionPerConnection(t *testing.T) {
	a := New(&Options{AnyVersion: true, OnPrompt: func(t *Turn) (schema.StopReason, error) {
		return "end_turn", t.Say("v" + itoa(t.ProtocolVersion()))
	}})
	v1 := dial(t, a)
	res := v1.initialize(nil)
	if !strings.Contains(string(res), `"protocolVersion":1`) || !strings.Contains(string(res), `"agentCapabilities"`) {
		t.Fatalf("v1 initialize result = %s", res)
	}
	sid := v1.newSession()
	out, before := v1.call("session/prompt", prompt(sid, "hi"))
	if !strings.Contains(string(out), `"stopReason":"end_turn"`) {
		t.Fatalf("v1 prompt result = %s", out)
	}
	if got := updates(t, before); len(got) != 1 || !strings.Contains(mustMarshal(t, got[0]), `"text":"v1"`) {
		t.Fatalf("v1 updates = %v", got)
	}

	v2 := dial(t, a)
	res, _ = v2.call("initialize", map[string]any{"protocolVersion": 2, "capabilities": map[string]any{},
		"info": map[string]any{"name": "lineclient", "version": "0"}})
	if !strings.Contains(string(res), `"protocolVersion":2`) || !strings.Contains(string(res), `"capabilities"`) {
		t.Fatalf("v2 initialize result = %s", res)
	}
	sid2 := v2.newSession()
	v2.request("session/prompt", prompt(sid2, "hi"))
	steps, _ := readUntil(t, v2, "idle:end_turn")
	if want := []string{"running", "user_message", "agent_message_chunk"}; !cmp.Equal(steps, want) {
		t.Fatalf("v2 steps = %v, want %v", steps, want)
	}
}

// TestAnyVersionOldClient: with AnyVersion an initialize offering 1
// is not refused with -32022 as a Version 2 agent refuses it.
func TestAnyVersionOldClient(t *testing.T) {
	c := dial(t, New(&Options{AnyVersion: true}))
	if res := c.initialize(nil); !strings.Contains(string(res), `"protocolVersion":1`) {
		t.Fatalf("initialize = %s", res)
	}
	c2 := dial(t, New(&Options{Version: 2}))
	resp, _ := c2.await(c2.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	if resp.Error == nil || resp.Error.Code != -32022 {
		t.Fatalf("a Version 2 agent answered v1 with %v, want -32022", resp.Error)
	}
}

func TestNewSessionID(t *testing.T) {
	n := 0
	c := dial(t, New(&Options{NewSessionID: func() string { n++; return "mine-" + itoa(n) }}))
	c.initialize(nil)
	if a, b := c.newSession(), c.newSession(); a != "mine-1" || b != "mine-2" {
		t.Fatalf("ids = %q, %q", a, b)
	}
}

// TestOpenSession: a stored session is loaded with its history replayed
// and its title listed; one OpenSession does not know falls through to
// History; its error is the request's.
func TestOpenSession(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	stored := json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"before"}}`)
	a := New(&Options{
		OnPrompt: func(t *Turn) (schema.StopReason, error) { t.SetResult("turn", t.Number()); return "", nil },
		History:  map[string][]any{"old": {AgentMessage("", "from History")}},
		OpenSession: func(id string) (*StoredSession, error) {
			mu.Lock()
			asked = append(asked, id)
			mu.Unlock()
			switch id {
			case "disk":
				return &StoredSession{Cwd: "/stored", Title: "From disk", History: []json.RawMessage{stored}, Turns: 4}, nil
			case "bad":
				return nil, errors.New("demo: session bad: state file is corrupt")
			case "denied":
				return nil, &Error{Code: CodeInvalidParams, Message: "bad id"}
			}
			return nil, nil
		},
	})
	c := dial(t, a)
	c.initialize(nil)
	_, before := c.call("session/load", map[string]any{"sessionId": "disk", "cwd": "", "mcpServers": []any{}})
	if got := updates(t, before); !cmp.Equal(got, []any{decode(t, stored)}) {
		t.Fatalf("replayed %v", got)
	}
	list, _ := c.call("session/list", map[string]any{})
	if !strings.Contains(string(list), `{"cwd":"/stored","sessionId":"disk","title":"From disk"}`) {
		t.Fatalf("list = %s", list)
	}
	// Its turns are numbered after the stored ones.
	if res, _ := c.call("session/prompt", prompt("disk", "again")); !strings.Contains(string(res), `"turn":5`) {
		t.Fatalf("the first turn after the stored 4: %s", res)
	}
	// Open now: a second load replays without asking again.
	c.call("session/load", map[string]any{"sessionId": "disk", "cwd": "/w", "mcpServers": []any{}})
	_, before = c.call("session/load", map[string]any{"sessionId": "old", "cwd": "/w", "mcpServers": []any{}})
	if len(updates(t, before)) != 1 {
		t.Fatalf("History's session replayed %v", updates(t, before))
	}
	if e := c.callErr("session/load", map[string]any{"sessionId": "bad", "cwd": "/w", "mcpServers": []any{}}); e.Code != CodeInternalError || !strings.Contains(e.Message, "corrupt") {
		t.Fatalf("corrupt: %+v", e)
	}
	if e := c.callErr("session/resume", map[string]any{"sessionId": "denied", "cwd": "/w"}); e.Code != CodeInvalidParams {
		t.Fatalf("denied: %+v", e)
	}
	if e := c.callErr("session/load", map[string]any{"sessionId": "none", "cwd": "/w", "mcpServers": []any{}}); e.Code != CodeResourceNotFound {
		t.Fatalf("unknown: %+v", e)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"disk", "old", "bad", "denied", "none"}; !cmp.Equal(asked, want) {
		t.Fatalf("OpenSession asked for %v, want %v", asked, want)
	}
}

// TestSessionHistoryAndTitle: a script sees what the session recorded.
func TestSessionHistoryAndTitle(t *testing.T) {
	got := make(chan []string, 1)
	c := dial(t, New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("answer")
		t.SessionInfo("Title")
		var kinds []string
		for _, u := range t.History() {
			var k struct {
				Kind string `json:"sessionUpdate"`
			}
			json.Unmarshal(u, &k)
			kinds = append(kinds, k.Kind)
		}
		got <- append(kinds, t.Title())
		return "", nil
	}}))
	c.initialize(nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "q"))
	if want := []string{"user_message_chunk", "agent_message_chunk", "Title"}; !cmp.Equal(<-got, want) {
		t.Fatalf("history kinds and title differ from %v", want)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigOptionsPerVersion: one option list, given in v1's shape, is
// sent with "id" to a v1 client and with "configId" (v2's
// SessionConfigOption) to a v2 client, in session/new's result and in
// set_config_option's, and each client sets it by the id it received.
func TestConfigOptionsPerVersion(t *testing.T) {
	a := New(&Options{AnyVersion: true, ConfigOptions: []any{map[string]any{
		"id": "model", "name": "Model", "type": "select", "currentValue": "a",
		"options": []any{map[string]any{"value": "a", "name": "A"}, map[string]any{"value": "b", "name": "B"}},
	}}})
	type option struct {
		ID           *string `json:"id"`
		ConfigID     *string `json:"configId"`
		CurrentValue string  `json:"currentValue"`
	}
	options := func(raw json.RawMessage) []option {
		var res struct{ ConfigOptions []option }
		if err := json.Unmarshal(raw, &res); err != nil || len(res.ConfigOptions) != 1 {
			t.Fatalf("configOptions of %s: %v", raw, err)
		}
		return res.ConfigOptions
	}
	v1 := dial(t, a)
	v1.initialize(nil)
	res, _ := v1.call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}})
	if o := options(res)[0]; o.ID == nil || *o.ID != "model" || o.ConfigID != nil {
		t.Fatalf("v1 session/new configOptions = %s, want id only", res)
	}
	var sid struct{ SessionID string }
	json.Unmarshal(res, &sid)
	res, _ = v1.call("session/set_config_option", map[string]any{"sessionId": sid.SessionID, "configId": "model", "value": "b"})
	if o := options(res)[0]; o.ID == nil || o.CurrentValue != "b" {
		t.Fatalf("v1 set_config_option = %s", res)
	}

	v2 := dial(t, a)
	v2.call("initialize", map[string]any{"protocolVersion": 2, "capabilities": map[string]any{},
		"info": map[string]any{"name": "lineclient", "version": "0"}})
	res, _ = v2.call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}})
	if o := options(res)[0]; o.ConfigID == nil || *o.ConfigID != "model" || o.ID != nil {
		t.Fatalf("v2 session/new configOptions = %s, want configId only", res)
	}
	json.Unmarshal(res, &sid)
	res, _ = v2.call("session/set_config_option", map[string]any{"sessionId": sid.SessionID, "configId": "model", "value": "b"})
	if o := options(res)[0]; o.ConfigID == nil || o.CurrentValue != "b" {
		t.Fatalf("v2 set_config_option = %s", res)
	}
}
