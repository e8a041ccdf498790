package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
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
	asked := make(chan *ElicitationRequest, 4)
	completed := make(chan string, 1)
	_, a, _, turn, _ := startTurnV2(t, &ClientOptions{Elicitation: &ElicitationHandlers{
		Form: true, URL: true,
		Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
			asked <- r
			if r.Mode == schema.ElicitationModeURL {
				return &schema.CreateElicitationResponse{Action: schema.ElicitationAccept}, nil
			}
			return &schema.CreateElicitationResponse{Action: schema.ElicitationAccept, Content: json.RawMessage(`{"name":"Ada"}`)}, nil
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
		if m := a.next(); m.Error == nil || m.Error.Code != schema.CodeInvalidParams || !strings.Contains(m.Error.Message, "v2") {
			t.Errorf("%s: reply %s, want -32602", p["message"], m.line)
		}
	}
	select {
	case r := <-asked:
		t.Errorf("Create ran for an invalid request %+v", r)
	default:
	}
}

// Rule (schema v2 ElicitationContentValue, Other: "any other JSON value,
// such as the value of a custom or future property type, preserved as
// sent"): an accepted answer to a v2 agent's form may give a field of an
// unknown type any JSON value (an object, a list of numbers), whether the
// handler wrote the content or built it with Schema().Accept; a v1
// agent's form still takes only v1's kinds (the answer is refused), and
// known types are checked as before in both.
func TestV2ElicitationAnyContentValue(t *testing.T) {
	form := map[string]any{"type": "object", "properties": map[string]any{
		"at":   map[string]any{"type": "_acme/point"},
		"name": map[string]any{"type": "string"},
	}}
	answers := make(chan func(*ElicitationRequest) (*schema.CreateElicitationResponse, error), 1)
	h := &ElicitationHandlers{Form: true, Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
		return (<-answers)(r)
	}}
	raw := func(content string) func(*ElicitationRequest) (*schema.CreateElicitationResponse, error) {
		return func(*ElicitationRequest) (*schema.CreateElicitationResponse, error) {
			return &schema.CreateElicitationResponse{Action: schema.ElicitationAccept, Content: json.RawMessage(content)}, nil
		}
	}
	// Accept on a copy of the form (it carries AnyValue) and on the
	// form the client serves.
	accept := func(values map[string]any) func(*ElicitationRequest) (*schema.CreateElicitationResponse, error) {
		return func(r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
			s, err := r.Schema()
			if err != nil {
				return nil, err
			}
			return s.Accept(values)
		}
	}
	served := func(values map[string]any) func(*ElicitationRequest) (*schema.CreateElicitationResponse, error) {
		return func(r *ElicitationRequest) (*schema.CreateElicitationResponse, error) { return r.Accept(values) }
	}
	ask := func(a *rawAgent, id int, answer func(*ElicitationRequest) (*schema.CreateElicitationResponse, error)) rawMsg {
		answers <- answer
		a.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": map[string]any{
			"sessionId": "s1", "mode": "form", "message": "Where?", "requestedSchema": form}})
		return a.next()
	}
	_, a2, _, _, _ := startTurnV2(t, &ClientOptions{Elicitation: h})
	if m := ask(a2, 70, raw(`{"at":{"x":1,"y":[2,3]}}`)); string(m.Result) != `{"action":"accept","content":{"at":{"x":1,"y":[2,3]}}}` {
		t.Errorf("v2, handler content: %s", m.line)
	}
	if m := ask(a2, 71, accept(map[string]any{"at": []any{1, 2}, "name": "x"})); string(m.Result) != `{"action":"accept","content":{"at":[1,2],"name":"x"}}` {
		t.Errorf("v2, Accept: %s", m.line)
	}
	if m := ask(a2, 73, served(map[string]any{"at": map[string]any{"x": 1}})); string(m.Result) != `{"action":"accept","content":{"at":{"x":1}}}` {
		t.Errorf("v2, ElicitationRequest.Accept: %s", m.line)
	}
	if m := ask(a2, 72, raw(`{"name":{"x":1}}`)); m.Error == nil {
		t.Errorf("v2: an object for a string field was sent: %s", m.line)
	}

	c1, a1 := connectRaw(t, &ClientOptions{Elicitation: h}, nil)
	newSessionRaw(t, c1, a1)
	if m := ask(a1, 80, raw(`{"at":{"x":1}}`)); m.Error == nil {
		t.Errorf("v1: an object value was sent: %s", m.line)
	}
	if m := ask(a1, 81, raw(`{"at":"here"}`)); string(m.Result) != `{"action":"accept","content":{"at":"here"}}` {
		t.Errorf("v1, a string for the unknown type: %s", m.line)
	}
	if m := ask(a1, 82, served(map[string]any{"at": map[string]any{"x": 1}})); m.Error == nil {
		t.Errorf("v1, ElicitationRequest.Accept built an object value: %s", m.line)
	}
}
