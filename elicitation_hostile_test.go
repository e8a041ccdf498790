package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/internal/testhook"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// elicitForm is the params of an elicitation/create whose form has the
// given properties.
func elicitForm(props map[string]any) map[string]any {
	return map[string]any{"mode": "form", "message": "?",
		"requestedSchema": map[string]any{"type": "object", "properties": props}}
}

// countPatterns counts, until the test ends, how often each pattern is
// compiled and matched.
func countPatterns(t *testing.T) func(event, pattern string) int {
	var mu sync.Mutex
	counts := map[[2]string]int{}
	h := func(event, pattern string) {
		mu.Lock()
		counts[[2]string{event, pattern}]++
		mu.Unlock()
	}
	testhook.Pattern.Store(&h)
	t.Cleanup(func() { testhook.Pattern.Store(nil) })
	return func(event, pattern string) int {
		mu.Lock()
		defer mu.Unlock()
		return counts[[2]string{event, pattern}]
	}
}

// drainDiags returns the diagnostics delivered before a blank line the
// agent writes now (diagnostics arrive in order).
func drainDiags(a *rawAgent, diags <-chan Diagnostic) []Diagnostic {
	a.write("\n")
	var got []Diagnostic
	for d := range diags {
		if d.Kind == DiagBlankLine {
			break
		}
		got = append(got, d)
	}
	return got
}

// TestHostileElicitationPatternOverLimit: a form whose patterns are over
// Limits.MaxElicitationPatternBytes — a 1 MiB pattern, a short one that
// repetition makes a huge program, several that are over it only together
// — is refused before the handler runs, with an error naming the limit
// and a "limit_exceeded" diagnostic. A form at the limit is served, and
// the limit can be raised.
func TestHostileElicitationPatternOverLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]any
	}{
		{"1MiB", map[string]any{"f": map[string]any{"type": "string", "pattern": strings.Repeat("(a|aa)*", 1<<20/7)}}},
		{"repetition", map[string]any{"f": map[string]any{"type": "string", "pattern": strings.Repeat(".{0,1000}", 3)}}},
		{"together", map[string]any{
			"f": map[string]any{"type": "string", "pattern": strings.Repeat("a", 2100)},
			"g": map[string]any{"type": "string", "pattern": strings.Repeat("b", 2100)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := make(chan Diagnostic, 10)
			ran := make(chan struct{}, 1)
			opts := &ClientOptions{OnDiagnostic: func(d Diagnostic) { diags <- d },
				Elicitation: &ElicitationHandlers{Form: true,
					Create: func(context.Context, *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
						ran <- struct{}{}
						return &schema.CreateElicitationResponse{Action: schema.ElicitationDecline}, nil
					}}}
			_, a := connectRaw(t, opts, nil)
			a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": elicitForm(tc.props)})
			m := a.next()
			if m.Error == nil || m.Error.Code != schema.CodeInternalError || !strings.Contains(m.Error.Message, "limit exceeded") ||
				!strings.Contains(m.Error.Message, "Limits.MaxElicitationPatternBytes") ||
				string(m.Error.Data) != `{"limit":"MaxElicitationPatternBytes","value":4096}` {
				t.Fatalf("reply %.300s", m.line)
			}
			got := drainDiags(a, diags)
			if len(got) != 1 || got[0].Kind != DiagLimitExceeded || !strings.Contains(got[0].Message, "MaxElicitationPatternBytes") {
				t.Errorf("diagnostics %+v", got)
			}
			select {
			case <-ran:
				t.Error("the handler ran")
			default:
			}

			raw, _ := json.Marshal(elicitForm(tc.props)["requestedSchema"])
			if _, err := schema.ParseElicitationSchema(raw); !errors.Is(err, schema.ErrLimitExceeded) {
				t.Errorf("ParseElicitationSchema: %v", err)
			}
		})
	}

	t.Run("at the limit, and raised", func(t *testing.T) {
		opts := &ClientOptions{Limits: Limits{MaxElicitationPatternBytes: 8192},
			Elicitation: &ElicitationHandlers{Form: true,
				Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
					s, err := r.Schema()
					if err != nil {
						return nil, err
					}
					return s.Accept(map[string]any{"f": strings.Repeat("a", 2100), "g": strings.Repeat("b", 2100)})
				}}}
		_, a := connectRaw(t, opts, nil)
		a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": elicitForm(map[string]any{
			"f": map[string]any{"type": "string", "pattern": strings.Repeat("a", 2100)},
			"g": map[string]any{"type": "string", "pattern": strings.Repeat("b", 2100)}})})
		if m := a.next(); m.Error != nil || !strings.Contains(string(m.Result), `"accept"`) {
			t.Errorf("reply %.300s", m.line)
		}
		for _, p := range []string{strings.Repeat("a", 4096), hostilePattern} {
			if _, err := schema.ParseElicitationSchema(json.RawMessage(`{"properties":{"f":{"type":"string","pattern":` + jsonQuote(p) + `}}}`)); err != nil {
				t.Errorf("a %d-byte pattern: %v", len(p), err)
			}
		}
	})
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHostileElicitationPatternCompiledOnce: a pattern at the limit is
// compiled once per request, however often the handler asks for the schema
// or checks values against the form (ElicitationRequest.Validate), and
// matched once per field and check: by ElicitationRequest.Accept, whose
// answer the client does not check again.
func TestHostileElicitationPatternCompiledOnce(t *testing.T) {
	count := countPatterns(t)
	p2, p3 := `^[a-z]+$`, `^\d{3}$`
	// The three patterns take the whole budget.
	opts := &ClientOptions{Limits: Limits{MaxElicitationPatternBytes: len(hostilePattern) + len(p2) + len(p3)}, Elicitation: &ElicitationHandlers{Form: true,
		Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
			for range 2 {
				if _, err := r.Schema(); err != nil {
					return nil, err
				}
			}
			// As a form checks what the user types.
			for _, g := range []string{"ab1", "abc"} {
				if err := r.Validate(map[string]any{"f": "é", "g": g, "h": "123"}); (err == nil) != (g == "abc") {
					return nil, fmt.Errorf("Validate with g %q: %v", g, err)
				}
			}
			return r.Accept(map[string]any{"f": strings.Repeat("é", 1000), "g": "abc", "h": "123"})
		}}}
	_, a := connectRaw(t, opts, nil)
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": elicitForm(map[string]any{
		"f": map[string]any{"type": "string", "pattern": hostilePattern},
		"g": map[string]any{"type": "string", "pattern": p2},
		"h": map[string]any{"type": "string", "pattern": p3}})})
	if m := a.next(); m.Error != nil || !strings.Contains(string(m.Result), `"accept"`) {
		t.Fatalf("reply %.300s", m.line)
	}
	for _, p := range []string{hostilePattern, p2, p3} {
		if c, m := count("compile", p), count("match", p); c != 1 || m != 3 {
			t.Errorf("pattern %.20q: compiled %d times, matched %d times; want 1 and 3", p, c, m)
		}
	}
}

// TestElicitationSchemaPure: a schema is a plain value (go-cmp compares
// two decodings of one form as they are, with no options), and its own
// checks are pure functions of it: they compile the patterns they match
// at each call, so a pattern changed by hand is checked as written. Its
// ElicitationValidator compiles them once.
func TestElicitationSchemaPure(t *testing.T) {
	count := countPatterns(t)
	raw := json.RawMessage(`{"properties":{"code":{"type":"string","pattern":"^\\d+$"}}}`)
	s1, err := schema.ParseElicitationSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := schema.ParseElicitationSchema(raw)
	if d := cmp.Diff(s1, s2); d != "" {
		t.Errorf("two decodings differ (-1 +2):\n%s", d)
	}
	if c := count("compile", `^\d+$`); c != 0 {
		t.Errorf("decoding compiled the pattern %d times", c)
	}
	for range 2 {
		if err := s1.Validate(map[string]any{"code": "12"}); err != nil {
			t.Fatal(err)
		}
	}
	if c := count("compile", `^\d+$`); c != 2 {
		t.Errorf("two checks compiled the pattern %d times, want 2", c)
	}
	s1.Field("code").Property.(*schema.ElicitationString).Pattern = `^[a-z]+$`
	if s1.Validate(map[string]any{"code": "12"}) == nil || s1.Validate(map[string]any{"code": "ab"}) != nil {
		t.Error("a pattern changed by hand is not checked as written")
	}
	if d := cmp.Diff(s1, s2); d == "" {
		t.Error("the changed schema compares equal")
	}

	// A validator compiles them once, and follows a change.
	v := s2.Compile()
	for range 3 {
		if err := v.Validate(map[string]any{"code": "12"}); err != nil {
			t.Fatal(err)
		}
	}
	if c := count("compile", `^\d+$`); c != 3 {
		t.Errorf("Compile and three checks compiled the pattern %d times in all, want 3", c)
	}
	s2.Field("code").Property.(*schema.ElicitationString).Pattern = `^[a-z]+$`
	if v.Validate(map[string]any{"code": "12"}) == nil || v.ValidateContent(json.RawMessage(`{"code":"ab"}`)) != nil {
		t.Error("the validator does not check a changed pattern as written")
	}
	if _, err := v.Accept(map[string]any{"code": "ab"}); err != nil {
		t.Errorf("Accept: %v", err)
	}
}

// TestElicitationChangedSchemaCheckedAgain: an answer Accept built from a
// copy of the schema the handler changed is checked against the schema the
// agent sent, and refused if it does not match it.
func TestElicitationChangedSchemaCheckedAgain(t *testing.T) {
	diags := make(chan Diagnostic, 10)
	opts := &ClientOptions{OnDiagnostic: func(d Diagnostic) { diags <- d },
		Elicitation: &ElicitationHandlers{Form: true,
			Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
				s, err := r.Schema()
				if err != nil {
					return nil, err
				}
				p := s.Field("code").Property.(*schema.ElicitationString)
				p.Pattern = ""
				*p.MaxLength = 100
				return s.Accept(map[string]any{"code": "not digits"})
			}}}
	_, a := connectRaw(t, opts, nil)
	a.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": elicitForm(map[string]any{
		"code": map[string]any{"type": "string", "pattern": `^\d+$`, "maxLength": 4}})})
	if m := a.next(); m.Error == nil || !strings.Contains(m.Error.Message, `"code" is longer than 4 characters`) {
		t.Errorf("reply %.300s", m.line)
	}
	if got := drainDiags(a, diags); len(got) != 1 || got[0].Kind != DiagInvalidElicitationAnswer {
		t.Errorf("diagnostics %+v", got)
	}
}
