package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Real entries from the public registry parse, and list their kinds and
// platforms.
func TestParseRealEntries(t *testing.T) {
	data, err := os.ReadFile("testdata/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range r.Agents {
		ids = append(ids, a.ID)
	}
	if want := []string{"codex-acp", "gemini", "opencode", "factory-droid"}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	codex, err := r.Agent("codex-acp")
	if err != nil {
		t.Fatal(err)
	}
	if k := codex.Kinds(); !slices.Equal(k, []string{"binary"}) {
		t.Errorf("codex kinds %v", k)
	}
	if p := codex.Platforms(); len(p) != 6 || p[0] != "darwin-aarch64" {
		t.Errorf("codex platforms %v", p)
	}
	if bin := codex.Distribution.Binary["linux-x86_64"]; bin.Cmd != "./codex-acp" || !strings.HasSuffix(bin.Archive, ".tar.gz") {
		t.Errorf("codex linux target %+v", bin)
	}
	gemini, _ := r.Agent("gemini")
	if k := gemini.Kinds(); !slices.Equal(k, []string{"npx"}) || gemini.Distribution.NPX.Package != "@google/gemini-cli@0.27.3" {
		t.Errorf("gemini %v %+v", k, gemini.Distribution.NPX)
	}
	droid, _ := r.Agent("factory-droid")
	if len(droid.Kinds()) == 0 {
		t.Error("factory-droid has no kinds")
	}
	if _, err := r.Agent("nope"); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
}

// Ids and versions become directory names, so an entry that could escape
// the cache through them is refused, as are other format violations.
func TestParseRefusesInvalidEntries(t *testing.T) {
	good := func() Agent { return binaryAgent("a", "linux-x86_64", "https://h/a.zip", "./a") }
	for name, mutate := range map[string]func(*Agent){
		"id with ..":         func(a *Agent) { a.ID = "../x" },
		"id uppercase":       func(a *Agent) { a.ID = "Agent" },
		"version with slash": func(a *Agent) { a.Version = "1.0.0/../../x" },
		"version not semver": func(a *Agent) { a.Version = "latest" },
		"no distribution":    func(a *Agent) { a.Distribution = Distribution{} },
		"bad sha256": func(a *Agent) {
			a.Distribution.Binary["linux-x86_64"] = BinaryTarget{Archive: "https://h/a.zip", Cmd: "./a", SHA256: "abc"}
		},
		"no cmd": func(a *Agent) {
			a.Distribution.Binary["linux-x86_64"] = BinaryTarget{Archive: "https://h/a.zip"}
		},
		"npx package as option": func(a *Agent) { a.Distribution.NPX = &Package{Package: "--foo"} },
		"uvx empty package":     func(a *Agent) { a.Distribution.UVX = &Package{} },
	} {
		t.Run(name, func(t *testing.T) {
			a := good()
			mutate(&a)
			if _, err := Parse(registryJSON(t, a)); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := Parse(registryJSON(t, good(), good())); !errors.Is(err, ErrInvalid) {
		t.Errorf("duplicate ids: %v", err)
	}
	if _, err := Parse([]byte(`{"version":"1.0.0"}`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("no agents: %v", err)
	}
	if _, err := Parse(registryJSON(t, good())); err != nil {
		t.Errorf("the unmodified entry: %v", err)
	}
}

func TestPlatform(t *testing.T) {
	for _, c := range []struct{ goos, goarch, want string }{
		{"linux", "amd64", "linux-x86_64"},
		{"linux", "arm64", "linux-aarch64"},
		{"darwin", "arm64", "darwin-aarch64"},
		{"darwin", "amd64", "darwin-x86_64"},
		{"windows", "amd64", "windows-x86_64"},
		{"windows", "arm64", "windows-aarch64"},
		{"linux", "386", ""},
		{"freebsd", "amd64", ""},
	} {
		if got := Platform(c.goos, c.goarch); got != c.want {
			t.Errorf("Platform(%s, %s) = %q, want %q", c.goos, c.goarch, got, c.want)
		}
	}
}

// A registry read from a file (by path or file:// URL) resolves like one
// from the network.
func TestLoadFile(t *testing.T) {
	abs, err := filepath.Abs("testdata/registry.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"testdata/registry.json", "file://" + filepath.ToSlash(abs)} {
		if strings.HasPrefix(src, "file://") && !strings.HasPrefix(filepath.ToSlash(abs), "/") {
			src = "file:///" + filepath.ToSlash(abs) // file:///C:/...
		}
		r, err := Load(context.Background(), &Options{Registry: src, CacheDir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if len(r.Agents) != 4 || r.Stale != nil {
			t.Errorf("%s: %d agents, stale %v", src, len(r.Agents), r.Stale)
		}
	}
	if _, err := Load(context.Background(), &Options{Registry: filepath.Join(t.TempDir(), "missing.json")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
