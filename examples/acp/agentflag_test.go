package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpclient/acp/registry"
)

// writeRegistry writes a registry document with these agents to a file.
func writeRegistry(t *testing.T, agents ...registry.Agent) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": "1.0.0", "agents": agents, "extensions": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// isolateCache points os.UserCacheDir at a temporary directory.
func isolateCache(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir) // linux and other unix
	t.Setenv("HOME", dir)           // darwin: $HOME/Library/Caches
	t.Setenv("LocalAppData", dir)   // windows
	return dir
}

func TestListAgents(t *testing.T) {
	file := writeRegistry(t,
		registry.Agent{ID: "alpha", Name: "Alpha", Version: "1.0.0", Description: "first", Distribution: registry.Distribution{
			NPX: &registry.Package{Package: "alpha@1.0.0"}, UVX: &registry.Package{Package: "alpha"}}},
		registry.Agent{ID: "beta", Name: "Beta Agent", Version: "2.3.4", Description: "second", Distribution: registry.Distribution{
			Binary: map[string]registry.BinaryTarget{"linux-x86_64": {Archive: "https://h/b.zip", Cmd: "./b"}, "darwin-aarch64": {Archive: "https://h/b.tgz", Cmd: "./b"}}}},
	)
	out, errOut, code := runCLI(t, "", "--list-agents", "--registry", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("output:\n%s", out)
	}
	for i, want := range [][]string{{"alpha", "Alpha", "1.0.0", "npx, uvx"}, {"beta", "Beta Agent", "2.3.4", "binary"}} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}

	out, errOut, code = runCLI(t, "", "--list-agents", "--json", "--registry", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []agentListing
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var a agentListing
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, a)
	}
	want := []agentListing{
		{ID: "alpha", Name: "Alpha", Version: "1.0.0", Description: "first", Distribution: []string{"npx", "uvx"}},
		{ID: "beta", Name: "Beta Agent", Version: "2.3.4", Description: "second", Distribution: []string{"binary"}, Platforms: []string{"darwin-aarch64", "linux-x86_64"}},
	}
	if len(got) != 2 || !slices.EqualFunc(got, want, func(a, b agentListing) bool {
		return a.ID == b.ID && a.Name == b.Name && a.Version == b.Version && a.Description == b.Description &&
			slices.Equal(a.Distribution, b.Distribution) && slices.Equal(a.Platforms, b.Platforms)
	}) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if strings.Count(out, `"platforms"`) != 1 {
		t.Errorf("platforms listed for an agent without binaries:\n%s", out)
	}
}

func TestRegistryFlagErrors(t *testing.T) {
	file := writeRegistry(t, registry.Agent{ID: "npx-only", Name: "N", Version: "1.0.0", Description: "d", Distribution: registry.Distribution{
		Binary: map[string]registry.BinaryTarget{"windows-aarch64": {Archive: "https://h/x.zip", Cmd: "./x.exe"}}}})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--agent", "x", "--", "some-agent"}, 2, "exclude each other"},
		{[]string{"--list-agents", "--", "some-agent"}, 2, "takes no agent command"},
		{[]string{"--registry", file}, 2, "needs --agent or --list-agents"},
		{[]string{"--agent", "nope", "--registry", file, "-p", "hi"}, 1, `no such agent in the registry: "nope"`},
		{[]string{"--list-agents", "--registry", filepath.Join(t.TempDir(), "missing.json")}, 1, "missing.json"},
	} {
		_, errOut, code := runCLI(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
		if strings.Contains(errOut, "acp: acp:") {
			t.Errorf("%v: doubled prefix in %q", c.args, errOut)
		}
	}
	if runtime.GOOS+"/"+runtime.GOARCH != "windows/arm64" {
		_, errOut, code := runCLI(t, "", "--agent", "npx-only", "--registry", file, "-p", "hi")
		if code != 1 || !strings.Contains(errOut, "not available for this platform") || !strings.Contains(errOut, "windows-aarch64") {
			t.Errorf("unsupported platform: exit %d, stderr %q", code, errOut)
		}
	}
}

// zipOfSelf is a zip (stored, not compressed: it is large) holding this test
// binary as name.
func zipOfSelf(t *testing.T, name string) []byte {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, f); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// --agent resolves a binary agent from a registry file, downloads it (over
// http on loopback), runs a prompt turn through it, and on the next run
// starts it from the cache with the server gone. The archive holds this test
// binary, which the registry entry's env turns into the demo agent.
func TestAgentFromRegistry(t *testing.T) {
	platform := registry.Platform(runtime.GOOS, runtime.GOARCH)
	if platform == "" {
		t.Skipf("the registry has no platform name for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cache := isolateCache(t)
	exe := "demo-agent"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	archive := zipOfSelf(t, "demo/"+exe)
	sum := sha256.Sum256(archive)
	var downloads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		w.Write(archive)
	}))
	defer srv.Close()
	file := writeRegistry(t, registry.Agent{ID: "demo", Name: "Demo", Version: "1.0.0", Description: "the demo agent", Distribution: registry.Distribution{
		Binary: map[string]registry.BinaryTarget{platform: {
			Archive: srv.URL + "/demo.zip", SHA256: hex.EncodeToString(sum[:]),
			Cmd: "./demo/" + exe, Env: map[string]string{demoEnv: "1"},
		}}}})

	turn := func(install bool) {
		t.Helper()
		out, errOut, code := runCLI(t, "", "--json", "--cwd", t.TempDir(), "-p", "hello", "--agent", "demo", "--registry", file)
		if code != 0 {
			t.Fatalf("exit %d; stderr %s", code, errOut)
		}
		if said := strings.Contains(errOut, "acp: installing demo 1.0.0 from "+srv.URL+"/demo.zip"); said != install {
			t.Errorf("stderr %q (installing: %v)", errOut, install)
		}
		evs := parseEvents(t, out)
		end := evs[len(evs)-1]
		if end["event"] != "turn_end" || end["stopReason"] != "end_turn" {
			t.Fatalf("last event %v", end)
		}
		if !strings.Contains(out, `You said: \"hello\"`) {
			t.Errorf("the demo agent's answer is missing:\n%s", out)
		}
	}
	turn(true)
	if n := downloads.Load(); n != 1 {
		t.Fatalf("%d downloads", n)
	}
	installed, _ := filepath.Glob(filepath.Join(cache, "*", "agents", "demo", "1.0.0", platform+"-*", "files", "demo", exe))
	if len(installed) == 0 {
		installed, _ = filepath.Glob(filepath.Join(cache, "*", "*", "acp", "agents", "demo", "1.0.0", platform+"-*", "files", "demo", exe))
	}
	if len(installed) != 1 {
		t.Errorf("installed copies under %s: %v", cache, installed)
	}
	srv.Close()
	turn(false)
	if n := downloads.Load(); n != 1 {
		t.Errorf("%d downloads after the second run", n)
	}
}
