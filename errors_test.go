package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Every error a call returns reads "acp: <method>: <cause>" with one "acp:"
// prefix, although the sentinels and *Error carry their own, and errors.Is
// and errors.As still find the cause.
func TestErrorHasOneACPPrefix(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, err error, target error) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		if n := strings.Count(err.Error(), "acp:"); n != 1 {
			t.Errorf("%q has %d \"acp:\" prefixes, want 1", err, n)
		}
		if !strings.HasPrefix(err.Error(), "acp: ") {
			t.Errorf("%q does not start with \"acp: \"", err)
		}
		if target != nil && !errors.Is(err, target) {
			t.Errorf("errors.Is(%q, %v) = false", err, target)
		}
	}

	t.Run("turn in progress", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			select {
			case <-t.Cancelled():
			case <-t.Context().Done():
			}
			return schema.StopReasonCancelled, nil
		}}, nil)
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.Prompt(ctx, schema.Text("one"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Prompt(ctx, schema.Text("two"))
		check(t, err, acp.ErrTurnInProgress)
		turn.Cancel()
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("not supported", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{Capabilities: map[string]any{}}, nil)
		_, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "s", Cwd: "/"})
		check(t, err, acp.ErrNotSupported)
	})

	t.Run("connection closed", func(t *testing.T) {
		c, _ := acptest.Connect(t, nil, nil)
		c.Close()
		_, err := c.NewSession(ctx, nil)
		check(t, err, acp.ErrConnClosed)
	})

	t.Run("agent error", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{
			"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return nil, acptest.Errorf(acptest.CodeInternalError, "boom")
			},
		}}, nil)
		_, err := c.NewSession(ctx, nil)
		check(t, err, nil)
		var e *schema.Error
		if !errors.As(err, &e) || e.Code != schema.CodeInternalError || e.Message != "boom" {
			t.Errorf("errors.As(%q) = %v, want the agent's -32603 boom", err, e)
		}
	})

	t.Run("undecodable result", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{
			"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return map[string]any{"sessionId": 5}, nil
			},
		}}, nil)
		_, err := c.NewSession(ctx, nil)
		check(t, err, nil)
	})

	t.Run("agent's words kept", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{
			"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return nil, acptest.Errorf(acptest.CodeInternalError, "tool: acp: x")
			},
		}}, nil)
		_, err := c.NewSession(ctx, nil)
		if err == nil || !strings.HasSuffix(err.Error(), "tool: acp: x") {
			t.Errorf("error %q does not end with the agent's message as sent", err)
		}
	})

	t.Run("auth required", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{RequireAuth: true}, nil)
		_, err := c.NewSession(ctx, nil)
		check(t, err, schema.ErrAuthRequired)
	})
}
