package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Call and Notify reach methods with no typed helper and no "_" prefix,
// which CallExt and NotifyExt refuse.
func TestCallAndNotifyAnyMethod(t *testing.T) {
	got := make(chan string, 1)
	c, done := connect(&acptest.Options{
		Methods: map[string]acptest.MethodFunc{
			"providers/list": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				return map[string]any{"providers": []any{map[string]any{"id": "x"}}, "echo": p}, nil
			},
		},
		OnNotification: func(_ *acptest.Conn, method string, params json.RawMessage) {
			got <- method + " " + string(params)
		},
	}, nil)
	defer done()
	ctx := context.Background()
	var res struct {
		Providers []struct{ ID string } `json:"providers"`
		Echo      json.RawMessage       `json:"echo"`
	}
	if err := c.Call(ctx, "providers/list", nil, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Providers) != 1 || res.Providers[0].ID != "x" || string(res.Echo) != "{}" {
		t.Fatalf("result = %+v", res)
	}
	if err := c.Notify(ctx, "document/didFocus", map[string]any{"uri": "file:///a.go"}); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != `document/didFocus {"uri":"file:///a.go"}` {
		t.Fatalf("agent got %s", g)
	}
	var e *schema.Error
	if err := c.Call(ctx, "nes/start", nil, nil); !errors.As(err, &e) || e.Code != -32601 {
		t.Fatalf("unknown method: %v, want the agent's -32601 as *Error", err)
	}
	if err := c.Call(ctx, "", nil, nil); err == nil {
		t.Fatal("Call took an empty method name")
	}
}
