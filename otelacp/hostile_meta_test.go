package otelacp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/otelacp"
	"github.com/acpclient/acp/schema"
)

// An agent's traceparent that does not parse (or is all zeros) is ignored:
// its request is served in the turn's trace, with no link.
func TestHostileTraceparent(t *testing.T) {
	inst, exp, _, tp := setup(t, otelacp.Options{})
	bad := []string{"garbage", "00-00000000000000000000000000000000-0000000000000000-01", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""}
	c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(tt *acptest.Turn) (schema.StopReason, error) {
		for _, tp := range bad {
			if _, err := tt.Call(context.Background(), "_x/ping", map[string]any{"sessionId": tt.SessionID(), "_meta": map[string]any{"traceparent": tp}}); err != nil {
				return "", err
			}
		}
		return "", nil
	}}, &acp.ClientOptions{Observer: inst.Observer(), ExtMethod: func(context.Context, string, json.RawMessage) (any, error) {
		return map[string]any{}, nil
	}})
	ctx, root := tp.Tracer("test").Start(context.Background(), "caller")
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	root.End()
	var turnSpan [8]byte
	n := 0
	for _, sp := range exp.GetSpans() {
		if sp.Name == "invoke_agent" {
			turnSpan = sp.SpanContext.SpanID()
		}
	}
	for _, sp := range exp.GetSpans() {
		// An extension method's span is _OTHER, its method an attribute.
		if sp.Name != "_OTHER" || attrs(sp)["rpc.method_original"].AsString() != "_x/ping" {
			continue
		}
		n++
		if sp.SpanContext.TraceID() != root.SpanContext().TraceID() || sp.Parent.SpanID() != turnSpan || len(sp.Links) != 0 {
			t.Errorf("request span in trace %v under %v with %d links; want the turn's", sp.SpanContext.TraceID(), sp.Parent.SpanID(), len(sp.Links))
		}
	}
	if n != len(bad) {
		t.Errorf("%d request spans, want %d", n, len(bad))
	}
}
