//go:build unix

package proxytest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tsagentDir is the interop suite's TypeScript project: its agent.mjs and
// client.mjs drive the TypeScript SDK's agent and remote clients.
var tsagentDir = filepath.Join("..", "..", "interop", "tsagent")

// needTSAgent returns node's path once interop's npm install is in place
// (its lock hash matches package-lock.json). This package does not install
// it: interop does (and two packages running npm ci in one directory at
// once would break each other); .ci/run runs that install before the
// suite, so there a missing install fails, elsewhere it skips.
func needTSAgent(t *testing.T) string {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	node, err := exec.LookPath("node")
	if err != nil {
		fail("node is not installed (the TypeScript SDK's clients need Node.js 20+)")
		return ""
	}
	lock, err := os.ReadFile(filepath.Join(tsagentDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	got, _ := os.ReadFile(filepath.Join(tsagentDir, "node_modules", ".acp-lock-hash"))
	if strings.TrimSpace(string(got)) != hex.EncodeToString(sum[:]) {
		fail("interop/tsagent's npm install is not in place: go test -run TestTSClientsGatewayToken ./interop installs it")
		return ""
	}
	return node
}

// The TypeScript SDK's clients (experimental/http-client and ws-client),
// with the TypeScript agent behind the gateways, through each proxy: text,
// a permission round, a cancel, and session/load on a new connection.
func TestTSClientsThroughProxy(t *testing.T) {
	node := needTSAgent(t)
	dir, err := filepath.Abs(tsagentDir)
	if err != nil {
		t.Fatal(err)
	}
	tsAgent := func() *exec.Cmd {
		cmd := exec.Command(node, "agent.mjs")
		cmd.Dir = dir
		return cmd
	}
	for _, px := range proxies {
		t.Run(px.name, func(t *testing.T) {
			c := newCert(t)
			a, b := startBackendAgent(t, "a", 0, tsAgent), startBackendAgent(t, "b", 0, tsAgent)
			p := px.start(t, c, a, b)
			for _, profile := range profiles {
				t.Run(profile, func(t *testing.T) {
					run := func(scenario string) map[string]any {
						cmd := exec.Command(node, "client.mjs", p.url("http"), profile, scenario, token)
						cmd.Dir = dir
						cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+c.certFile)
						var stderr strings.Builder
						cmd.Stderr = &stderr
						out, err := cmd.Output()
						if err != nil {
							t.Fatalf("client.mjs %s %s: %v\n%s", profile, scenario, err, stderr.String())
						}
						var m map[string]any
						if err := json.Unmarshal(out, &m); err != nil || m["ok"] != true {
							t.Fatalf("client.mjs %s %s: %s %v\n%s", profile, scenario, out, err, stderr.String())
						}
						return m
					}
					chunks := func(m map[string]any) []string {
						var out []string
						for _, x := range m["chunks"].([]any) {
							out = append(out, x.(string))
						}
						return out
					}
					if m := run("text"); m["stopReason"] != "end_turn" || !slices.Equal(chunks(m), []string{"agent:echo:hello"}) {
						t.Errorf("text: %v", m)
					}
					if m := run("permission"); m["stopReason"] != "end_turn" || !slices.Contains(chunks(m), "agent:outcome:selected:allow-once") {
						t.Errorf("permission: %v", m)
					}
					if m := run("cancel"); m["stopReason"] != "cancelled" || !slices.Contains(chunks(m), "agent:session/cancel:received") {
						t.Errorf("cancel: %v", m)
					}
					want := []string{"user:hello from history", "agent:hi from history", "agent:echo:after load"}
					if m := run("load"); m["loadSession"] != true || !slices.Equal(chunks(m), want) {
						t.Errorf("load: %v", m)
					}
				})
			}
		})
	}
}
