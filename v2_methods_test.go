package acp

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Rule: v2 names the auth methods auth/login and auth/logout; the same
// Authenticate and Logout send them.
func TestV2AuthMethodNames(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	done := make(chan error, 2)
	go func() {
		_, err := c.Authenticate(context.Background(), &AuthenticateRequest{MethodID: "api-key"})
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
		s, _ := c.NewSession(context.Background(), &NewSessionRequest{Cwd: "/tmp"})
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
