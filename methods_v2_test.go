package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
)

// Rule: v2 names the auth methods auth/login and auth/logout; the same
// Authenticate and Logout send them.
func TestV2AuthMethodNames(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	done := make(chan error, 2)
	go func() {
		_, err := c.Authenticate(context.Background(), &schema.AuthenticateRequest{MethodID: "api-key"})
		done <- err
	}()
	m := a.expect("auth/login")
	if !strings.Contains(string(m.Params), `"methodId":"api-key"`) {
		t.Fatalf("params %s", m.Params)
	}
	a.reply(m, map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := c.Logout(context.Background(), nil)
		done <- err
	}()
	a.reply(a.expect("auth/logout"), map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Rule: terminal/cancel is sent only for a terminal that advertises
// cancel; tool_call/cancel is a typed call; neither exists in v1.
// (TestV2ToolCallCancelCapability: the tool call's capability.)
func TestV2CancelTerminalAndToolCall(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	s := newSessionRaw(t, c, a)
	ctx := context.Background()
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "sleep"})
	syncRaw(t, a, 900)
	if err := s.CancelTerminal(ctx, "t1"); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("CancelTerminal without capabilities.cancel = %v", err)
	}
	a.update("s1", map[string]any{"sessionUpdate": "terminal_update", "terminalId": "t1", "capabilities": map[string]any{"cancel": map[string]any{}}})
	syncRaw(t, a, 901)
	done := make(chan error, 1)
	go func() { done <- s.CancelTerminal(ctx, "t1") }()
	m := a.expect("terminal/cancel")
	if !strings.Contains(string(m.Params), `"terminalId":"t1"`) || !strings.Contains(string(m.Params), `"sessionId":"s1"`) {
		t.Fatalf("params %s", m.Params)
	}
	a.reply(m, map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "capabilities": map[string]any{"cancel": map[string]any{}}})
	syncRaw(t, a, 902)
	go func() { done <- s.CancelToolCall(ctx, "c1") }()
	m = a.expect("tool_call/cancel")
	if !strings.Contains(string(m.Params), `"toolCallId":"c1"`) {
		t.Fatalf("params %s", m.Params)
	}
	a.replyError(m, -32602, "not cancellable", nil)
	if err := <-done; err == nil {
		t.Fatal("the agent's -32602 was not returned")
	}

	c1, a1 := connectRaw(t, nil, nil)
	s1 := newSessionRaw(t, c1, a1)
	if err := s1.CancelTerminal(ctx, "t1"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("v1 CancelTerminal = %v", err)
	}
	if err := s1.CancelToolCall(ctx, "c1"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("v1 CancelToolCall = %v", err)
	}
}

// Rule: v2 has no session modes; SetMode says so and sends nothing.
func TestV2NoSessionModes(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	s := newSessionRaw(t, c, a)
	if err := s.SetMode(context.Background(), "plan"); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("SetMode = %v", err)
	}
}

// Rule: v2's session/set_config_option carries the value's type ("id").
func TestV2SetConfigOptionType(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	done := make(chan *Session, 1)
	go func() {
		s, _ := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		done <- s
	}()
	a.reply(a.expect("session/new"), map[string]any{"sessionId": "s1", "configOptions": []any{map[string]any{
		"configId": "mode", "name": "Mode", "type": "select", "currentValue": "a",
		"options": []any{map[string]any{"value": "a", "name": "A"}, map[string]any{"value": "b", "name": "B"}}}}})
	s := <-done
	errc := make(chan error, 1)
	go func() {
		_, err := s.SetConfigOption(context.Background(), "mode", "b")
		errc <- err
	}()
	m := a.expect("session/set_config_option")
	if !strings.Contains(string(m.Params), `"type":"id"`) || !strings.Contains(string(m.Params), `"value":"b"`) {
		t.Fatalf("params %s", m.Params)
	}
	a.reply(m, map[string]any{"configOptions": []any{}})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// Rule (schema v2 ToolCallUpdate.capabilities, ToolCallCapabilities):
// tool_call/cancel is sent only for a tool call that currently advertises
// cancel — an object replaces the capabilities, null clears them, a
// malformed value is none and the rest of the update stands; the latest
// fold holding the tool call decides (an update outside the turn after it
// ended counts). Otherwise ErrNotSupported and nothing is sent.
func TestV2ToolCallCancelCapability(t *testing.T) {
	_, a, s, turn, p := startTurnV2(t, nil)
	ctx := context.Background()
	refused := func(id string) {
		t.Helper()
		if err := s.CancelToolCall(ctx, id); !errors.Is(err, ErrNotSupported) {
			t.Fatalf("CancelToolCall(%s) = %v", id, err)
		}
	}
	can := map[string]any{"cancel": map[string]any{}}
	a.reply(p, map[string]any{"messageId": "u1"})
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "watch", "capabilities": can})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "title": "build"})
	syncRaw(t, a, 900)
	refused("nope")
	refused("c2")
	if tc := turn.State().ToolCalls; !tc[0].Cancellable || tc[1].Cancellable {
		t.Fatalf("tool calls %+v", tc)
	}
	done := make(chan error, 1)
	go func() { done <- s.CancelToolCall(ctx, "c1") }()
	m := a.expect("tool_call/cancel") // nothing was sent for the refused ones
	a.reply(m, map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "capabilities": nil})
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "in_progress", "capabilities": map[string]any{"cancel": 5}})
	syncRaw(t, a, 901)
	refused("c1")
	refused("c2")
	if tc := turn.State().ToolCalls[1]; tc.Status != schema.ToolCallStatusInProgress {
		t.Fatalf("a malformed capabilities lost the rest of the update: %+v", tc)
	}
	a.update("s1", state("idle", "stopReason", "end_turn", "background", []any{map[string]any{"type": "tool_call", "toolCallId": "c2"}}))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	// Background work outlives the turn: its later updates are outside
	// turns, and they decide.
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c2", "capabilities": can})
	syncRaw(t, a, 902)
	go func() { done <- s.CancelToolCall(ctx, "c2") }()
	a.reply(a.expect("tool_call/cancel"), map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h := s.State().History.ToolCalls; len(h) != 1 || !h[0].Cancellable {
		t.Fatalf("history tool calls %+v", h)
	}
}
