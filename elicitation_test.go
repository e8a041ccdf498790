package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
)

// TestElicitationAnswerChecked: an accept answer whose content does not
// match the requested schema is not sent; the agent gets -32603 and a
// diagnostic names the field. A matching answer goes through unchanged.
func TestElicitationAnswerChecked(t *testing.T) {
	diags := make(chan Diagnostic, 10)
	content := make(chan string, 3)
	opts := &ClientOptions{
		OnDiagnostic: func(d Diagnostic) { diags <- d },
		Elicitation: &ElicitationHandlers{
			Form: true,
			Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
				c := <-content
				if c == "nil" {
					return nil, nil
				}
				return &schema.CreateElicitationResponse{Action: schema.ElicitationAccept, Content: json.RawMessage(c)}, nil
			},
		},
	}
	_, a := connectRaw(t, opts, nil)
	params := map[string]any{"sessionId": "s1", "mode": "form", "message": "Age?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"age": map[string]any{"type": "integer", "minimum": 18}}, "required": []any{"age"}}}

	content <- `{"age":12,"secret":"hunter2"}`
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": params})
	m := a.next()
	if m.Error == nil || m.Error.Code != schema.CodeInternalError || !strings.Contains(m.Error.Message, `"age" is less than 18`) ||
		!strings.Contains(m.Error.Message, `"secret" is not a field of the form`) || strings.Contains(m.line, "hunter2") {
		t.Errorf("reply %s", m.line)
	}

	content <- "nil"
	a.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": params})
	if m := a.next(); m.Error == nil || m.Error.Code != schema.CodeInternalError {
		t.Errorf("nil answer: reply %s", m.line)
	}

	content <- `{"age":30}`
	a.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": params})
	if m := a.next(); string(m.Result) != `{"action":"accept","content":{"age":30}}` {
		t.Errorf("valid answer: reply %s", m.line)
	}

	// Diagnostics arrive in order: a blank line written now is a barrier.
	a.write("\n")
	var got []Diagnostic
	for d := range diags {
		if d.Kind == DiagBlankLine {
			break
		}
		got = append(got, d)
	}
	if len(got) != 1 || got[0].Kind != DiagInvalidElicitationAnswer || !strings.Contains(got[0].Message, `"age"`) {
		t.Errorf("diagnostics %+v", got)
	}
}

func TestElicitation(t *testing.T) {
	t.Run("without handler", func(t *testing.T) {
		_, a := connectRaw(t, nil, nil)
		a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": map[string]any{"sessionId": "s1", "mode": "form", "message": "Name?", "requestedSchema": map[string]any{"type": "object"}}})
		if m := a.next(); m.Error == nil || m.Error.Code != schema.CodeMethodNotFound {
			t.Errorf("reply %s", m.line)
		}
	})
	t.Run("with handler", func(t *testing.T) {
		completed := make(chan string, 1)
		opts := &ClientOptions{Elicitation: &ElicitationHandlers{
			Form: true,
			Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
				if !strings.Contains(string(r.RequestedSchema), `"name"`) {
					t.Errorf("schema %s", r.RequestedSchema)
				}
				return &schema.CreateElicitationResponse{Action: schema.ElicitationAccept, Content: json.RawMessage(`{"name":"Ada"}`)}, nil
			},
			Complete: func(id string) { completed <- id },
		}}
		_, a := connectRaw(t, opts, nil)
		a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": map[string]any{"sessionId": "s1", "mode": "form", "message": "Name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		if m := a.next(); !strings.Contains(string(m.Result), `"action":"accept"`) || !strings.Contains(string(m.Result), "Ada") {
			t.Errorf("reply %s", m.line)
		}
		a.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": map[string]any{"mode": "url", "message": "Log in", "elicitationId": "e1", "url": "https://example.com", "requestId": 3}})
		if m := a.next(); m.Error == nil || m.Error.Code != schema.CodeInvalidParams {
			t.Errorf("url mode not advertised, reply %s", m.line)
		}
		a.send(map[string]any{"jsonrpc": "2.0", "method": "elicitation/complete", "params": map[string]any{"elicitationId": "e9"}})
		if id := <-completed; id != "e9" {
			t.Errorf("complete %q", id)
		}
	})
}
