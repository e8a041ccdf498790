package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// An Observer whose every callback panics (Call, its end, Inject, Turn,
// Update, End, Serve, its end) does not take the client down: each panic
// is recovered and reported as an observer_panic diagnostic, the call
// goes out without injected _meta, the turn completes with its text, and
// the agent's request is served.
func TestHostileObserverPanics(t *testing.T) {
	for _, where := range []string{"Call", "CallEnd", "Inject", "Turn", "Update", "End", "Serve", "ServeEnd"} {
		t.Run(where, func(t *testing.T) {
			boom := func(w string) {
				if w == where {
					panic("boom in " + w)
				}
			}
			obs := &acp.Observer{
				Call: func(ctx context.Context, ci acp.CallInfo) (context.Context, func(error)) {
					boom("Call")
					return ctx, func(error) { boom("CallEnd") }
				},
				Inject: func(ctx context.Context, set func(k, v string)) {
					set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
					boom("Inject")
				},
				Turn: func(ctx context.Context, ti acp.TurnInfo) (context.Context, *acp.TurnObserver) {
					boom("Turn")
					return ctx, &acp.TurnObserver{
						Update: func(schema.Update) { boom("Update") },
						End:    func(acp.TurnEnd) { boom("End") },
					}
				},
				Serve: func(ctx context.Context, si acp.ServeInfo) (context.Context, func(any, error)) {
					boom("Serve")
					return ctx, func(any, error) { boom("ServeEnd") }
				},
			}
			var mu sync.Mutex
			var diags []acp.Diagnostic
			c, agent := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
				tt.Say("one ")
				if _, err := tt.Call(context.Background(), "_x/ping", map[string]any{"sessionId": tt.SessionID()}); err != nil {
					return "", err
				}
				tt.Say("two")
				return schema.StopReasonEndTurn, nil
			}}, &acp.ClientOptions{
				Observer: obs,
				ExtMethod: func(context.Context, string, json.RawMessage) (any, error) {
					return map[string]any{"pong": true}, nil
				},
				OnDiagnostic: func(d acp.Diagnostic) {
					mu.Lock()
					diags = append(diags, d)
					mu.Unlock()
				},
			})
			s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(context.Background(), schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatalf("turn: %v", err)
			}
			var text string
			for _, m := range turn.State().Messages {
				text += m.Text
			}
			if text != "one two" {
				t.Errorf("turn text %q", text)
			}
			if where == "Inject" {
				for _, p := range agent.Received("session/prompt") {
					if strings.Contains(string(p), "traceparent") {
						t.Errorf("a panicking Inject's keys were sent: %s", p)
					}
				}
			}
			// Diagnostics reach OnDiagnostic on the callback goroutine, in
			// order; a round trip after the turn flushes them.
			if _, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w"}); err != nil {
				t.Fatal(err)
			}
			c.Close()
			mu.Lock()
			defer mu.Unlock()
			found := false
			for _, d := range diags {
				if d.Kind == acp.DiagObserverPanic && strings.Contains(d.Message, "boom in "+where) {
					found = true
				}
			}
			if !found {
				t.Errorf("no observer_panic diagnostic for %s: %v", where, diags)
			}
		})
	}
}
