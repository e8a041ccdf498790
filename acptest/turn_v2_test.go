package acptest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpclient/acp/schema"
)

// dialV2 connects a line client to a v2 agent running script, opens a
// session and sends the prompt; it returns the client and the prompt's id.
func dialV2(t *testing.T, script func(*Turn) (schema.StopReason, error)) (*lineClient, json.RawMessage) {
	t.Helper()
	c := dial(t, New(&Options{Version: 2, OnPrompt: script}))
	c.call("initialize", map[string]any{"protocolVersion": 2, "capabilities": map[string]any{},
		"info": map[string]any{"name": "lineclient", "version": "0"}})
	sid := c.newSession()
	return c, c.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
}

// step is what a v2 line client reads: a state_update's state, or a
// request or notification's method.
func step(t *testing.T, m wireMsg) string {
	t.Helper()
	if m.Method != "session/update" {
		return m.Method
	}
	var p struct {
		Update struct {
			Kind       string `json:"sessionUpdate"`
			State      string `json:"state"`
			StopReason string `json:"stopReason"`
		} `json:"update"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.Update.Kind != "state_update" {
		return p.Update.Kind
	}
	if p.Update.StopReason != "" {
		return p.Update.State + ":" + p.Update.StopReason
	}
	return p.Update.State
}

// readUntil reads the agent's messages until one whose step is want,
// returning the steps before it (answers left out) and that message.
func readUntil(t *testing.T, c *lineClient, want string) ([]string, wireMsg) {
	t.Helper()
	var steps []string
	for {
		m := c.next()
		if m.Method == "" {
			continue // an answer
		}
		s := step(t, m)
		if s == want {
			return steps, m
		}
		steps = append(steps, s)
	}
}

// Rule (what the real v2 agents do, docs/V2.md): a v2 script's permission
// request is preceded by requires_action, and answered, the turn reports
// running again before it goes on.
func TestV2PermissionReportsRequiresAction(t *testing.T) {
	c, _ := dialV2(t, func(tu *Turn) (schema.StopReason, error) {
		if err := tu.ToolCall(ToolCallSpec{ID: "e1", Title: "Edit"}); err != nil {
			return "", err
		}
		out, err := tu.AskPermission(ToolCallSpec{ID: "e1"})
		if err != nil || out.OptionID != "allow" {
			return "", err
		}
		return "", tu.Say("done")
	})
	before, req := readUntil(t, c, schema.MethodSessionRequestPermission)
	if want := []string{"running", "user_message", "tool_call_update", "requires_action"}; !slices.Equal(before, want) {
		t.Fatalf("before the request: %q, want %q", before, want)
	}
	c.reply(req.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}})
	after, _ := readUntil(t, c, "idle:end_turn")
	if want := []string{"running", "agent_message_chunk"}; !slices.Equal(after, want) {
		t.Fatalf("after the answer: %q, want %q", after, want)
	}
}

// Rule (what the real v2 agents do on session/cancel with a permission
// pending, docs/V2.md): the agent withdraws the request with
// $/cancel_request, the client's "cancelled" answer reaches the script,
// and the turn ends idle cancelled without reporting running again.
func TestV2CancelWithdrawsPendingPermission(t *testing.T) {
	outcomes := make(chan schema.PermissionOutcome, 1)
	c, _ := dialV2(t, func(tu *Turn) (schema.StopReason, error) {
		out, err := tu.AskPermission(ToolCallSpec{ID: "e1", Title: "Run"})
		if err != nil {
			return "", err
		}
		outcomes <- out
		return "", nil
	})
	_, req := readUntil(t, c, schema.MethodSessionRequestPermission)
	var sid struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(req.Params, &sid)
	c.notify("session/cancel", map[string]any{"sessionId": sid.SessionID})
	_, withdraw := readUntil(t, c, "$/cancel_request")
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = json.Unmarshal(withdraw.Params, &p)
	if idKey(p.RequestID) != idKey(req.ID) {
		t.Fatalf("$/cancel_request for %s, want the permission request %s", p.RequestID, req.ID)
	}
	c.reply(req.ID, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
	after, _ := readUntil(t, c, "idle:cancelled")
	if len(after) != 0 {
		t.Errorf("between the answer and idle: %q (want nothing: no running after a cancel)", after)
	}
	if out := <-outcomes; out.Kind != schema.OutcomeCancelled {
		t.Errorf("the script got %+v, want cancelled", out)
	}
}

// Rule (schema v2 ResumeSessionResponse): a v2 session/resume ends with
// the current-state snapshot after the replay and before the response.
func TestV2ResumeEndsWithStateSnapshot(t *testing.T) {
	c, _ := dialV2(t, func(t *Turn) (schema.StopReason, error) { return "", t.SayID("a1", "hi") })
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_, m := readUntil(t, c, "idle:end_turn")
	json.Unmarshal(m.Params, &p) // the prompt's answer came before idle
	_, before := c.call("session/resume", map[string]any{"sessionId": p.SessionID, "cwd": "/", "replayFrom": map[string]any{"type": "start"}})
	var steps []string
	for _, m := range before {
		steps = append(steps, step(t, m))
	}
	if want := []string{"user_message", "agent_message_chunk", "idle"}; !slices.Equal(steps, want) {
		t.Fatalf("resume sent %v before answering, want %v", steps, want)
	}
}

// Rule: after session/close, a prompt for the session on that connection
// is refused with -32002 until a resume opens it again.
func TestClosedSessionRefusesPrompts(t *testing.T) {
	c := dial(t, New(&Options{Version: 2}))
	c.call("initialize", map[string]any{"protocolVersion": 2, "capabilities": map[string]any{},
		"info": map[string]any{"name": "lineclient", "version": "0"}})
	sid := c.newSession()
	c.call("session/close", map[string]any{"sessionId": sid})
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}
	if e := c.callErr("session/prompt", prompt); e == nil || e.Code != -32002 {
		t.Fatalf("a prompt after close: %v, want error -32002", e)
	}
	c.call("session/resume", map[string]any{"sessionId": sid, "cwd": "/"})
	if res, _ := c.call("session/prompt", prompt); !json.Valid(res) {
		t.Fatalf("a prompt after resume: %s", res)
	}
}

// Rule: SetBackground's list goes out with the turn's next state_update
// while a turn runs, and at once, in an idle snapshot without a stop
// reason, after it.
func TestV2SetBackground(t *testing.T) {
	term := map[string]any{"type": "terminal", "terminalId": "bg"}
	c, _ := dialV2(t, func(t *Turn) (schema.StopReason, error) {
		t.SetBackground(term)
		t.AfterTurn(func() { t.SetBackground() })
		return "", nil
	})
	background := func(m wireMsg) string {
		var p struct {
			Update struct {
				Background json.RawMessage `json:"background"`
			} `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		return string(p.Update.Background)
	}
	_, end := readUntil(t, c, "idle:end_turn")
	if got := background(end); got != `[{"terminalId":"bg","type":"terminal"}]` {
		t.Errorf("the turn's idle lists %s, want the terminal", got)
	}
	_, after := readUntil(t, c, "idle")
	if got := background(after); got != `[]` {
		t.Errorf("the idle after the turn lists %s, want []", got)
	}
}

// Rule: OnCloseSession runs before the session/close response, so what
// it sends comes first.
func TestOnCloseSessionBeforeResponse(t *testing.T) {
	c := dial(t, New(&Options{Version: 2, OnCloseSession: func(s *Session) {
		s.SetBackground() // the idle snapshot: the session's background work ended
	}}))
	c.call("initialize", map[string]any{"protocolVersion": 2, "capabilities": map[string]any{},
		"info": map[string]any{"name": "lineclient", "version": "0"}})
	sid := c.newSession()
	_, before := c.call("session/close", map[string]any{"sessionId": sid})
	if len(before) != 1 || step(t, before[0]) != "idle" {
		t.Fatalf("before the close response: %v, want the idle snapshot", before)
	}
}
