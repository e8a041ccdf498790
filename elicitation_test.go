package acp

import (
	"context"
	"encoding/json"
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
		Elicitation: &ElicitationHandler{
			Form: true,
			Create: func(_ context.Context, r *CreateElicitationRequest) (*CreateElicitationResponse, error) {
				c := <-content
				if c == "nil" {
					return nil, nil
				}
				return &CreateElicitationResponse{Action: ElicitationAccept, Content: json.RawMessage(c)}, nil
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
	if m.Error == nil || m.Error.Code != CodeInternalError || !strings.Contains(m.Error.Message, `"age" is less than 18`) ||
		!strings.Contains(m.Error.Message, `"secret" is not a field of the form`) || strings.Contains(m.line, "hunter2") {
		t.Errorf("reply %s", m.line)
	}

	content <- "nil"
	a.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": params})
	if m := a.next(); m.Error == nil || m.Error.Code != CodeInternalError {
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
