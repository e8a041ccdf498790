package acp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"
)

// hostilePattern is the costliest pattern found under the default
// Limits.MaxElicitationPatternBytes (4096 bytes, as long as it may be, and
// 4096 instructions): every
// \pL* of it stays alive at each character of a letter-only answer, and
// the $ makes the whole answer be scanned before it matches.
var hostilePattern = strings.Repeat(`\pL*`, 1023) + `\pL$`

// BenchmarkElicitationHostilePattern is the client's CPU per elicitation
// request whose form has one string field with a hostile pattern, answered
// (and accepted) with 1000 letters: the handler reads the schema and
// calls ElicitationRequest.Accept, whose answer the client sends unchecked
// (Accept checked it, against the patterns compiled once per request).
// "under-cap" is the worst pattern the default limit lets through;
// "64KiB" is one far over it (refused since the limit exists). Run it
// with -benchtime 5x: before the limit, one 64KiB request took seconds.
func BenchmarkElicitationHostilePattern(b *testing.B) {
	answer := strings.Repeat("a", 1000)
	for _, bc := range []struct{ name, pattern string }{
		{"under-cap", hostilePattern},
		{"64KiB", strings.Repeat(`(a|aa)*`, 64<<10/7) + "$"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			params, err := json.Marshal(map[string]any{"mode": "form", "message": "?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
					"f": map[string]any{"type": "string", "pattern": bc.pattern}}}})
			if err != nil {
				b.Fatal(err)
			}
			c := &Client{}
			c.opts.Limits = c.opts.Limits.withDefaults()
			c.opts.Elicitation = &ElicitationHandlers{Form: true,
				Create: func(_ context.Context, r *ElicitationRequest) (*schema.CreateElicitationResponse, error) {
					if _, err := r.Schema(); err != nil {
						return nil, err
					}
					return r.Accept(map[string]any{"f": answer})
				}}
			b.ResetTimer()
			cpu0, ok := proctest.CPU()
			for range b.N {
				_, _ = c.serveElicitation(context.Background(), nil, params)
			}
			// CPU time, unlike ns/op, does not count waiting for a busy
			// machine.
			if cpu1, _ := proctest.CPU(); ok {
				b.ReportMetric(float64(cpu1-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			}
		})
	}
}

// BenchmarkElicitationManyOptions checks a multi-select answer that picks
// every one of 20000 options: linear in the options since membership is a
// set lookup (it was a scan of the options per selected value).
func BenchmarkElicitationManyOptions(b *testing.B) {
	opts := make([]string, 20000)
	for i := range opts {
		opts[i] = "option-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i)
	}
	raw, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"m": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": opts}}}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.ParseElicitationSchema(raw)
	if err != nil {
		b.Fatal(err)
	}
	values := map[string]any{"m": opts}
	b.ResetTimer()
	for range b.N {
		if err := s.Validate(values); err != nil {
			b.Fatal(err)
		}
	}
}
