package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp/acptest"
)

func init() {
	// Like gemini-cli: models offered only as the legacy models state.
	acptest.Register("models", func() *acptest.Agent {
		return acptest.New(&acptest.Options{Methods: map[string]acptest.MethodFunc{
			"session/new": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return json.RawMessage(`{"sessionId":"m1","models":{"currentModelId":"auto","availableModels":[` +
					`{"modelId":"auto","name":"Auto"},{"modelId":"pro","name":"Pro"}]}}`), nil
			},
			"session/set_model": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				if !strings.Contains(string(p), `"modelId":"pro"`) {
					return nil, &acptest.Error{Code: -32602, Message: "unexpected model " + string(p)}
				}
				return map[string]any{}, nil
			},
			"session/prompt": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return map[string]any{"stopReason": "end_turn"}, nil
			},
		}})
	})
}

func TestModelFlag(t *testing.T) {
	args := append([]string{"-p", "hi", "--model", "flash"}, agentArgs(t, "models")...)
	_, errOut, code := runCLI(t, "", args...)
	if code == 0 || !strings.Contains(errOut, `unknown model "flash" (valid: auto, pro)`) {
		t.Errorf("unknown model: exit %d, stderr %s", code, errOut)
	}
	args = append([]string{"--json", "-p", "hi", "--model", "pro"}, agentArgs(t, "models")...)
	// The agent refuses any set_model but "pro", so success means it was sent.
	if _, errOut, code := runCLI(t, "", args...); code != 0 {
		t.Fatalf("valid model: exit %d: %s", code, errOut)
	}
	args = append([]string{"-p", "hi", "--model", "b"}, agentArgs(t, "sessions")...)
	if _, errOut, code := runCLI(t, "", args...); code == 0 || !strings.Contains(errOut, "not supported") {
		t.Errorf("no models list: exit %d, stderr %s", code, errOut)
	}
}
