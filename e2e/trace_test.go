package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestTraceparent: with an Observer that injects W3C trace context, each
// real agent receives _meta.traceparent (and tracestate, baggage) on
// session/new and session/prompt. What the agent does with it is its
// choice and only recorded (t.Log): whether its permission request (the
// turn runs a command, which the client rejects) or any other frame it
// sends back, or any request it makes to the model, carries the trace id.
// One turn per agent.
func TestTraceparent(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parent = "00-" + traceID + "-00f067aa0ba902b7-01"
	for _, ag := range agents {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var served []string // the agent's requests, with the _meta they carried
			obs := &acp.Observer{
				Inject: func(_ context.Context, set func(string, string)) {
					set("traceparent", parent)
					set("tracestate", "acp=e2e")
					set("baggage", "test=TestTraceparent")
				},
				Serve: func(ctx context.Context, si acp.ServeInfo) (context.Context, func(any, error)) {
					mu.Lock()
					served = append(served, fmt.Sprintf("%s %v", si.Method, si.Meta))
					mu.Unlock()
					return ctx, nil
				},
			}
			r := start(t, ag, &acp.ClientOptions{Observer: obs, Permission: acp.RejectAll})
			r.Model.Script(
				Reply{Tool: shell(ag, "call_traced", "echo traced > traced.txt")},
				Reply{Text: []string{"Not run."}},
			)
			// codex ends a rejected turn cancelled, Claude Code end_turn
			// (TestPermissionReject): either is fine here.
			if _, stop, err := r.prompt("create traced.txt"); err != nil {
				t.Fatalf("turn: %v, %v", stop, err)
			}
			r.C.Close()

			var prompts int
			for _, f := range r.frames(">") {
				if f.Method != schema.MethodSessionPrompt && f.Method != schema.MethodSessionNew {
					continue
				}
				var p struct {
					Meta map[string]string `json:"_meta"`
				}
				if err := json.Unmarshal(f.Params, &p); err != nil {
					t.Fatalf("%s params: %v", f.Method, err)
				}
				if p.Meta["traceparent"] != parent || p.Meta["tracestate"] != "acp=e2e" || p.Meta["baggage"] != "test=TestTraceparent" {
					t.Errorf("%s sent _meta %v, want the trace context", f.Method, p.Meta)
				}
				if f.Method == schema.MethodSessionPrompt {
					prompts++
				}
			}
			if prompts != 1 {
				t.Errorf("%d session/prompt frames sent, want 1", prompts)
			}

			// What the agent did with it: recorded, not asserted.
			var echoed []string
			for _, f := range r.frames("<") {
				if strings.Contains(string(f.Params)+string(f.Result), traceID) {
					echoed = append(echoed, f.Method+string(f.ID))
				}
			}
			t.Logf("%s: frames from the agent carrying the trace id: %q", ag.name, echoed)
			var toModel int
			for _, q := range r.Model.Requests(false) {
				if strings.Contains(string(q.Raw), traceID) {
					toModel++
				}
			}
			t.Logf("%s: model requests whose body carries the trace id: %d of %d (headers are not recorded by the model server)", ag.name, toModel, len(r.Model.Requests(false)))
			mu.Lock()
			t.Logf("%s: agent requests and their _meta: %q", ag.name, served)
			mu.Unlock()
		})
	}
}
