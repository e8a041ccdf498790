// Package e2e drives real ACP agents (codex-acp and claude-agent-acp,
// pinned in package-lock.json) through the SDK and the acp command, offline:
// each agent's model is a scripted HTTP server on 127.0.0.1 (model_test.go).
package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockHashFile, inside node_modules, records the sha256 of package-lock.json
// that the last successful `npm ci` installed.
const lockHashFile = ".acp-lock-hash"

var (
	npmOnce sync.Once
	npmErr  error
)

// needTool returns the path of a program, skipping the test when it is
// missing (failing it under CI=true, where the toolchain must be present).
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not found in PATH: the end-to-end agents need Node.js (v20+) and npm", name)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: a missing toolchain is a failure)")
		}
		t.Skip(msg)
	}
	return p
}

// install runs `npm ci` here unless node_modules already holds exactly what
// package-lock.json pins. It runs once per test binary.
func install(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the end-to-end agents are only set up for linux here, not %s/%s", runtime.GOOS, runtime.GOARCH)
		}
		t.Skipf("the end-to-end agents are only set up for linux here, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	needTool(t, "node")
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = npmCI(npm) })
	if npmErr != nil {
		t.Fatalf("installing the agents failed: %v", npmErr)
	}
}

func npmCI(npm string) error {
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	hashPath := filepath.Join("node_modules", lockHashFile)
	if got, err := os.ReadFile(hashPath); err == nil && strings.TrimSpace(string(got)) == want {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci: %v\n%s", err, out)
	}
	return os.WriteFile(hashPath, []byte(want+"\n"), 0o644)
}

// agent is one real agent under test, in one ACP version.
type agent struct {
	name string
	// setup prepares a private HOME pointing the agent at the model and
	// returns the command line and environment to run it with.
	setup func(t *testing.T, m *Model) (argv []string, env []string)
	// version is the ACP version the client offers (and the test requires
	// negotiated): ClientOptions.ProtocolVersion, 0 meaning 1.
	version int
}

var (
	codex  = agent{name: "codex", setup: setupCodex}
	claude = agent{name: "claude", setup: setupClaude}
	agents = []agent{codex, claude}
)

// versions are the ACP versions every scenario runs in: both agents speak
// both (docs/V2.md, the version table).
var versions = []int{1, 2}

// in is the agent offered ACP version v.
func (ag agent) in(v int) agent {
	ag.version = v
	return ag
}

// v2 reports whether the agent runs in ACP v2.
func (ag agent) v2() bool { return ag.version == 2 }

// eachAgent runs f as parallel subtests <agent>/v<version>, for each agent
// in each version: the same scenario code for v1 and v2. Where the
// versions differ the scenario says why, keyed on ag.v2().
func eachAgent(t *testing.T, f func(t *testing.T, ag agent)) {
	t.Helper()
	for _, ag := range agents {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range versions {
				t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
					t.Parallel()
					f(t, ag.in(v))
				})
			}
		})
	}
}

func bin(t testing.TB, name string) string {
	p, err := filepath.Abs(filepath.Join("node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// baseEnv is the test process's environment without anything that could
// point an agent at a real model or account.
func baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "XDG_CONFIG_HOME", k == "XDG_DATA_HOME", k == "XDG_STATE_HOME", k == "XDG_CACHE_HOME",
			strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "CODEX_"), k == "INITIAL_AGENT_MODE", k == "MODEL_PROVIDER", k == "DEFAULT_AUTH_REQUEST",
			k == "APP_SERVER_LOGS", k == "NO_BROWSER", k == "http_proxy", k == "https_proxy", k == "HTTP_PROXY", k == "HTTPS_PROXY",
			k == "ALL_PROXY", k == "all_proxy":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
}

func setupCodex(t *testing.T, m *Model) ([]string, []string) {
	return setupCodexMode(t, m, "read-only")
}

// setupCodexMode starts codex-acp's sessions in mode (INITIAL_AGENT_MODE);
// "" leaves codex-acp's default, "agent".
func setupCodexMode(t *testing.T, m *Model, mode string) ([]string, []string) {
	install(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Top-level keys must come before any table.
	config := fmt.Sprintf(`model = %q
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "ACP_E2E_MODEL_KEY"
request_max_retries = 0
stream_max_retries = 0

[tools]
update_plan = { enabled = true }
`, CodexModel, m.URL)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(home), "ACP_E2E_MODEL_KEY=test-key", "CODEX_HOME="+filepath.Join(home, ".codex"))
	if mode != "" {
		// codex-acp's own switch for the mode a session starts in
		// (AgentMode.ts). Its default, "agent" (Auto review), sends every
		// approval to a model reviewer ("Guardian Review",
		// TestCodexGuardian) instead of the client; "read-only" asks the
		// client (approvals_reviewer "user", approval policy
		// "on-request"), for every patch and for every command the model
		// runs with sandbox_permissions "require_escalated" (see shell).
		// The other modes ask less: "workspace-write" applies patches
		// inside the workspace without asking, "agent-full-access" never
		// asks. The approval_policy of config.toml does not count: the
		// mode's is sent with every turn.
		env = append(env, "INITIAL_AGENT_MODE="+mode)
	}
	// codex warns in the session (a "Config warning" message) unless a
	// bwrap is on PATH; it ships one, which the read-only sandbox uses.
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + codexResources(t) + string(os.PathListSeparator) + p
		}
	}
	return []string{bin(t, "codex-acp")}, env
}

// codexResources is the directory of the bwrap the codex package ships.
func codexResources(t testing.TB) string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	triple := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH] + "-unknown-linux-musl"
	p, err := filepath.Abs(filepath.Join("node_modules", "@openai", "codex-linux-"+arch, "vendor", triple, "codex-resources"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setupClaude(t *testing.T, m *Model) ([]string, []string) {
	install(t)
	home := t.TempDir()
	// claude-agent-acp starts a session in "auto" mode, where a classifier
	// (a model request) approves tools instead of the client; settings
	// choose "default", which asks the client (session-mode.js,
	// resolveInitialPermissionMode).
	cfg := filepath.Join(home, ".claude")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(`{"permissions":{"defaultMode":"default"}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(home),
		"ANTHROPIC_BASE_URL="+m.URL,
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_MODEL="+MainModel,
		"ANTHROPIC_SMALL_FAST_MODEL="+SmallModel,
		"ANTHROPIC_DEFAULT_HAIKU_MODEL="+SmallModel,
		"ANTHROPIC_DEFAULT_SONNET_MODEL="+MainModel,
		"ANTHROPIC_DEFAULT_OPUS_MODEL="+MainModel,
		"CLAUDE_CONFIG_DIR="+cfg,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		// Claude Code refuses to skip permissions as root outside a
		// sandbox; the agent starts it that way.
		"IS_SANDBOX=1",
		// After each turn Claude Code asks the model to predict the next
		// prompt (a conversation request the script would have to answer);
		// claude-agent-acp forwards it only to AIR clients.
		"CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false",
		// Claude Code retries a failed model request, even a 400; the
		// script answers each request once (codex: request_max_retries).
		"CLAUDE_CODE_MAX_RETRIES=0",
	)
	return []string{bin(t, "claude-agent-acp")}, env
}
