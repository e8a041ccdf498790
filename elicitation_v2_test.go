package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Rule: a v2 agent's elicitation/create (the same method as v1's) reaches
// the same ElicitationHandlers: a session-scoped form during a v2 turn is
// placed in the turn's stream and answered; a request-scoped URL
// elicitation runs and elicitation/complete reaches Complete. What v2
// makes stricter is answered -32602 before Create runs: both scopes or
// none (v2's oneOf), a form schema without type or properties.
func TestV2Elicitation(t *testing.T) {
	asked := make(chan *CreateElicitationRequest, 4)
	completed := make(chan string, 1)
	_, a, _, turn, _ := startTurnV2(t, &ClientOptions{Elicitation: &ElicitationHandlers{
		Form: true, URL: true,
		Create: func(_ context.Context, r *CreateElicitationRequest) (*CreateElicitationResponse, error) {
			asked <- r
			if r.Mode == ElicitationModeURL {
				return &CreateElicitationResponse{Action: ElicitationAccept}, nil
			}
			return &CreateElicitationResponse{Action: ElicitationAccept, Content: json.RawMessage(`{"name":"Ada"}`)}, nil
		},
		Complete: func(id string) { completed <- id },
	}})
	a.update("s1", state("running"))
	a.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Ask"})
	a.update("s1", state("requires_action"))
	form := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
	a.send(map[string]any{"jsonrpc": "2.0", "id": 50, "method": "elicitation/create", "params": map[string]any{
		"sessionId": "s1", "toolCallId": "c1", "mode": "form", "message": "Name?", "requestedSchema": form}})
	if m := a.next(); string(m.Result) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Fatalf("form answer %s", m.line)
	}
	r := <-asked
	if r.Turn != turn || r.Seq == 0 || r.ToolCallID != "c1" || r.SessionID != "s1" {
		t.Errorf("form request placed at turn %p seq %d (want %p), tool call %q", r.Turn, r.Seq, turn, r.ToolCallID)
	}
	a.send(map[string]any{"jsonrpc": "2.0", "id": 51, "method": "elicitation/create", "params": map[string]any{
		"requestId": 7, "mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.com/login"}})
	if m := a.next(); string(m.Result) != `{"action":"accept"}` {
		t.Fatalf("url answer %s", m.line)
	}
	if r := <-asked; r.Turn != nil || string(r.RequestID) != "7" {
		t.Errorf("url request %+v", r)
	}
	a.send(map[string]any{"jsonrpc": "2.0", "method": "elicitation/complete", "params": map[string]any{"elicitationId": "e1"}})
	if id := <-completed; id != "e1" {
		t.Errorf("completed %q", id)
	}
	for i, p := range []map[string]any{
		{"sessionId": "s1", "requestId": 7, "mode": "form", "message": "both", "requestedSchema": form},
		{"mode": "form", "message": "none", "requestedSchema": form},
		{"sessionId": "s1", "mode": "form", "message": "no properties", "requestedSchema": map[string]any{"type": "object"}},
		{"sessionId": "s1", "mode": "form", "message": "no type", "requestedSchema": map[string]any{"properties": map[string]any{}}},
	} {
		a.send(map[string]any{"jsonrpc": "2.0", "id": 60 + i, "method": "elicitation/create", "params": p})
		if m := a.next(); m.Error == nil || m.Error.Code != CodeInvalidParams || !strings.Contains(m.Error.Message, "v2") {
			t.Errorf("%s: reply %s, want -32602", p["message"], m.line)
		}
	}
	select {
	case r := <-asked:
		t.Errorf("Create ran for an invalid request %+v", r)
	default:
	}
}
