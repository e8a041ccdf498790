package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// maxMessage is the most an error string or diagnostic message may grow to
// from what the agent chose: a few cut items or texts (eight auth methods
// of up to 512 bytes each is the most), and the client's own words.
const maxMessage = 8 << 10

// hugeID is an id of 1 MB the agent might choose, full of a terminal escape.
var hugeID = "\x1b[2J" + strings.Repeat("m", 1<<20)

// manyOf returns n JSON objects, the i-th made by item(i).
func manyOf(n int, item func(i int) map[string]any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

func newSessionOr(t *testing.T, opts *acptest.Options, copts *acp.ClientOptions) (*acp.Client, *acp.Session) {
	t.Helper()
	c, _ := acptest.Connect(t, opts, copts)
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func checkBounded(t *testing.T, what, msg string, want ...string) {
	t.Helper()
	if len(msg) > maxMessage {
		t.Errorf("%s: %d bytes, want at most %d (starts %.200q)", what, len(msg), maxMessage, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %.300q does not mention %q", what, msg, w)
		}
	}
	if strings.Contains(msg, "\x1b") {
		t.Errorf("%s: an agent's terminal escape reached the message", what)
	}
}

// An agent that offers 20 000 models does not turn a typo in a model id
// into a megabyte of error text: the error names a few ids, each cut, and
// how many it left out.
func TestHostileSetModelErrorBounded(t *testing.T) {
	models := manyOf(20_000, func(i int) map[string]any {
		return map[string]any{"modelId": fmt.Sprintf("model-%06d", i), "name": "m"}
	})
	models[1] = map[string]any{"modelId": hugeID, "name": "m"}
	_, s := newSessionOr(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{
		"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
			return map[string]any{"sessionId": "s1", "models": map[string]any{"currentModelId": "model-000000", "availableModels": models}}, nil
		},
	}}, nil)
	err := s.SetModel(context.Background(), "gpt-5")
	if err == nil {
		t.Fatal("SetModel(unknown): no error")
	}
	checkBounded(t, "SetModel error", err.Error(), `unknown model "gpt-5"`, "model-000000, ", "and 19992 more")
}

// The other errors and diagnostics that name what the agent chose are cut
// the same way.
func TestHostileAgentTextInMessagesBounded(t *testing.T) {
	ctx := context.Background()
	bigNumber := strings.Repeat("9", 1<<20)

	t.Run("SetMode", func(t *testing.T) {
		modes := manyOf(1000, func(i int) map[string]any { return map[string]any{"id": fmt.Sprint("mode-", i), "name": "m"} })
		modes[0] = map[string]any{"id": hugeID, "name": "m"}
		_, s := newSessionOr(t, &acptest.Options{Modes: map[string]any{"currentModeId": "mode-1", "availableModes": modes}}, nil)
		err := s.SetMode(ctx, "nope")
		if err == nil {
			t.Fatal("no error")
		}
		checkBounded(t, "SetMode error", err.Error(), "mode-1, ", "and 992 more")
	})
	t.Run("SetConfigOption", func(t *testing.T) {
		values := manyOf(1000, func(i int) map[string]any { return map[string]any{"value": fmt.Sprint("v", i), "name": "v"} })
		opts := manyOf(1000, func(i int) map[string]any {
			return map[string]any{"id": fmt.Sprint("opt-", i), "name": "o", "type": "select", "currentValue": "v0", "options": []any{values[0]}}
		})
		opts[0] = map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "v0", "options": values}
		_, s := newSessionOr(t, &acptest.Options{ConfigOptions: opts}, nil)
		_, err := s.SetConfigOption(ctx, "speed", "fast")
		if err == nil {
			t.Fatal("unknown option: no error")
		}
		checkBounded(t, "unknown option error", err.Error(), "[model opt-1 ", "and 992 more]")
		_, err = s.SetConfigOption(ctx, "model", "fast")
		if err == nil {
			t.Fatal("unknown value: no error")
		}
		checkBounded(t, "unknown value error", err.Error(), "[v0 v1 ", "and 992 more]")
	})
	t.Run("error reply", func(t *testing.T) {
		c, _ := acptest.Connect(t, &acptest.Options{OnExtMethod: func(context.Context, *acptest.Conn, string, json.RawMessage) (any, error) {
			return nil, &acptest.Error{Code: -32603, Message: strings.Repeat("e", 1<<20), Data: json.RawMessage(`"` + strings.Repeat("d", 1<<20) + `"`)}
		}}, nil)
		err := c.Call(ctx, "_x", nil, nil)
		var e *schema.Error
		if !errors.As(err, &e) || len(e.Message) != 1<<20 {
			t.Fatalf("err = %.100v; want an *schema.Error keeping the whole message", err)
		}
		checkBounded(t, "error reply", err.Error(), "eeee", "(1048576 bytes)")
	})
	t.Run("auth methods", func(t *testing.T) {
		methods := manyOf(1000, func(i int) map[string]any {
			return map[string]any{"id": fmt.Sprint("auth-", i), "name": strings.Repeat("n", 2000), "description": strings.Repeat("d", 2000)}
		})
		c, _ := acptest.Connect(t, &acptest.Options{AuthMethods: methods, RequireAuth: true}, nil)
		_, err := c.NewSession(ctx, nil)
		if !errors.Is(err, schema.ErrAuthRequired) {
			t.Fatalf("NewSession = %.200v, want ErrAuthRequired", err)
		}
		var ae *acp.AuthRequiredError
		if !errors.As(err, &ae) || len(ae.Methods) != 1000 {
			t.Fatalf("err = %.200v; want an *AuthRequiredError with every method", err)
		}
		checkBounded(t, "auth error", err.Error(), "auth-0 (", "and 992 more")
	})
	t.Run("decoding error quoting a number", func(t *testing.T) {
		a := acptest.New(&acptest.Options{Methods: map[string]acptest.MethodFunc{
			"initialize": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return json.RawMessage(`{"protocolVersion":` + bigNumber + `}`), nil
			},
		}})
		defer a.Close()
		fromAgent, toAgent := a.Pipe()
		c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil)
		if err == nil {
			c.Close()
			t.Fatal("Connect: no error")
		}
		checkBounded(t, "Connect error", err.Error(), "initialize", "bytes)")
	})
	t.Run("diagnostics", func(t *testing.T) {
		diags := make(chan acp.Diagnostic, 16)
		c, _ := acptest.Connect(t, &acptest.Options{OnExtMethod: func(_ context.Context, conn *acptest.Conn, _ string, _ json.RawMessage) (any, error) {
			conn.Notify("_"+hugeID, map[string]any{})
			conn.Notify(hugeID, map[string]any{})
			conn.Notify("session/update", map[string]any{"sessionId": "s1", "update": map[string]any{"sessionUpdate": hugeID}})
			conn.Notify("session/update", map[string]any{"sessionId": "s1", "update": json.RawMessage(`{"sessionUpdate":"usage_update","used":` + bigNumber + `,"size":1}`)})
			return map[string]any{}, nil
		}}, &acp.ClientOptions{OnDiagnostic: func(d acp.Diagnostic) { diags <- d }})
		if err := c.Call(ctx, "_x", nil, nil); err != nil {
			t.Fatal(err)
		}
		// Every notification was read before the answer: their diagnostics
		// are queued; the ext notification has no handler and is dropped
		// silently.
		for _, want := range []acp.DiagnosticKind{acp.DiagUnknownNotification, acp.DiagUnknownUpdate, acp.DiagBadUpdate} {
			d := <-diags
			for d.Kind == acp.DiagLimitExceeded { // the orphan updates' bookkeeping, if any
				d = <-diags
			}
			if d.Kind != want {
				t.Fatalf("diagnostic %q (%.100q), want %q", d.Kind, d.Message, want)
			}
			checkBounded(t, string(d.Kind), d.Message)
		}
	})
}
