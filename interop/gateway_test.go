package interop

// The TypeScript SDK's remote clients (experimental/http-client and
// experimental/ws-client, driven by tsagent/client.mjs) against our
// gateway, with the TypeScript agent (tsagent/agent.mjs) behind it: every
// scenario over both profiles.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/gateway"
)

// nodeTools installs tsagent's dependencies (once per test binary) and
// returns node's path.
func nodeTools(t *testing.T) string {
	t.Helper()
	node := needTool(t, "node")
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript dependencies failed: %v", npmErr)
	}
	return node
}

// startTSGateway serves agent.mjs, one process per connection, through a
// gateway; the cleanup shuts it down and checks every agent is gone.
func startTSGateway(t *testing.T, node string, opts *gateway.Options) string {
	t.Helper()
	dir, err := filepath.Abs(tsagentDir)
	if err != nil {
		t.Fatal(err)
	}
	agents := &gateway.CommandAgent{Command: func(context.Context) (*exec.Cmd, error) {
		cmd := exec.Command(node, "agent.mjs")
		cmd.Dir = dir
		return cmd, nil
	}}
	g := gateway.New(agents.Dial, opts)
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Errorf("gateway Shutdown: %v", err)
		}
		srv.Close()
	})
	return srv.URL + "/acp"
}

// runTSClient runs one scenario of client.mjs and returns its report.
func runTSClient(t *testing.T, node, url, profile, scenario, token string) map[string]any {
	t.Helper()
	args := []string{"client.mjs", url, profile, scenario}
	if token != "" {
		args = append(args, token)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = tsagentDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs %s %s: %v\n%s", profile, scenario, err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("client.mjs printed %q: %v\n%s", out, err, stderr.String())
	}
	if m["ok"] != true && scenario != "unauthorized" {
		t.Fatalf("%s %s failed: %v\n%s", profile, scenario, m["error"], stderr.String())
	}
	return m
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestTSClientsAgainstGateway(t *testing.T) {
	node := nodeTools(t)
	url := startTSGateway(t, node, nil)
	for _, profile := range []string{"http", "ws"} {
		t.Run(profile, func(t *testing.T) {
			t.Run("text", func(t *testing.T) {
				m := runTSClient(t, node, url, profile, "text", "")
				if m["stopReason"] != "end_turn" || !slices.Equal(strs(m["chunks"]), []string{"agent:echo:hello"}) {
					t.Fatalf("text: %v", m)
				}
			})
			t.Run("permission", func(t *testing.T) {
				m := runTSClient(t, node, url, profile, "permission", "")
				if m["stopReason"] != "end_turn" || !slices.Contains(strs(m["chunks"]), "agent:outcome:selected:allow-once") ||
					!slices.Equal(strs(m["permissions"]), []string{"perm-1"}) {
					t.Fatalf("permission: %v", m)
				}
			})
			t.Run("cancel", func(t *testing.T) {
				m := runTSClient(t, node, url, profile, "cancel", "")
				chunks := strs(m["chunks"])
				if m["stopReason"] != "cancelled" || !slices.Contains(chunks, "agent:permission:cancelled") || !slices.Contains(chunks, "agent:session/cancel:received") {
					t.Fatalf("cancel: %v", m)
				}
			})
			t.Run("load", func(t *testing.T) {
				m := runTSClient(t, node, url, profile, "load", "")
				want := []string{"user:hello from history", "agent:hi from history", "agent:echo:after load"}
				if m["loadSession"] != true || !slices.Equal(strs(m["chunks"]), want) || m["stopReason"] != "end_turn" {
					t.Fatalf("load: %v", m)
				}
			})
			t.Run("error", func(t *testing.T) {
				m := runTSClient(t, node, url, profile, "error", "")
				pe, _ := m["promptError"].(map[string]any)
				ue, _ := m["unknownError"].(map[string]any)
				if pe["code"] != -32603.0 || ue["code"] != -32002.0 {
					t.Fatalf("error: %v", m)
				}
			})
		})
	}
}

// A gateway with a token: the TypeScript clients get through with it and
// fail to connect without it (401).
func TestTSClientsGatewayToken(t *testing.T) {
	node := nodeTools(t)
	url := startTSGateway(t, node, &gateway.Options{Token: "interop-token"})
	for _, profile := range []string{"http", "ws"} {
		if m := runTSClient(t, node, url, profile, "text", "interop-token"); m["stopReason"] != "end_turn" {
			t.Fatalf("%s with the token: %v", profile, m)
		}
		m := runTSClient(t, node, url, profile, "unauthorized", "interop-token")
		if m["connected"] != false {
			t.Fatalf("%s without the token connected: %v", profile, m)
		}
		if profile == "http" && !strings.Contains(m["message"].(string), "401") {
			t.Fatalf("http without the token: %v", m)
		}
	}
}
