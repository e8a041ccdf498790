package registry

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const testPlatform = "linux-x86_64"

// fixture serves a registry with one binary agent whose archive is body,
// named name on the server.
func fixture(t *testing.T, tls bool, name string, body []byte, edit func(*Agent)) (*server, *Options) {
	t.Helper()
	s := newServer(t, tls)
	a := binaryAgent("tool", testPlatform, s.URL+"/dl/"+name, "./bin/tool")
	if edit != nil {
		edit(&a)
	}
	s.put("/dl/"+name, body)
	s.put("/registry.json", registryJSON(t, a))
	opts := &Options{Registry: s.URL + "/registry.json", CacheDir: t.TempDir(), Platform: testPlatform}
	if tls {
		opts.HTTPClient = s.Client()
	}
	return s, opts
}

func resolve(t *testing.T, opts *Options, id string) (string, []string, error) {
	t.Helper()
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := r.Command(context.Background(), id)
	if err != nil {
		return "", nil, err
	}
	return cmd.Path, cmd.Args, nil
}

func checkInstalled(t *testing.T, path, body string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != body {
		t.Errorf("%s holds %q, want %q", path, got, body)
	}
	if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode()&0o100 == 0 {
		t.Errorf("%s is not executable: %v", path, fi.Mode())
	}
}

// A .tar.gz over https is downloaded, checked against its sha256, unpacked
// into the cache and run with the entry's args and env.
func TestCommandTarGz(t *testing.T) {
	entries := []entry{
		{name: "bin/", typ: tar.TypeDir},
		{name: "bin/tool", body: "#!/bin/sh\necho tool\n", mode: 0o755},
		{name: "bin/lib/data.txt", body: "data"},
		{name: "bin/copy", typ: tar.TypeLink, link: "bin/lib/data.txt"},
	}
	if runtime.GOOS != "windows" { // symlinks need a privilege there
		entries = append(entries, entry{name: "bin/current", typ: tar.TypeSymlink, link: "lib/data.txt"})
	}
	body := tarGz(t, entries...)
	sum := sha256.Sum256(body)
	_, opts := fixture(t, true, "tool.tar.gz", body, func(a *Agent) {
		bt := a.Distribution.Binary[testPlatform]
		bt.SHA256 = strings.ToUpper(hex.EncodeToString(sum[:])) // the format allows either case
		a.Distribution.Binary[testPlatform] = bt
	})
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := r.Command(context.Background(), "tool")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cmd.Path, opts.CacheDir) || !slices.Equal(cmd.Args[1:], []string{"acp"}) {
		t.Errorf("path %s args %v", cmd.Path, cmd.Args)
	}
	if !slices.Contains(cmd.Env, "AGENT_MODE=acp") || len(cmd.Env) != len(os.Environ())+1 {
		t.Errorf("env lacks AGENT_MODE=acp or this process's environment")
	}
	checkInstalled(t, cmd.Path, "#!/bin/sh\necho tool\n")
	dir := filepath.Dir(cmd.Path)
	if runtime.GOOS != "windows" {
		if b, err := os.ReadFile(filepath.Join(dir, "current")); err != nil || string(b) != "data" {
			t.Errorf("symlink: %q %v", b, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "copy")); err != nil || string(b) != "data" {
		t.Errorf("hard link: %q %v", b, err)
	}
	// Nothing is left of the download and the unpacking.
	left, _ := os.ReadDir(filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3"))
	if len(left) != 1 || !strings.HasPrefix(left[0].Name(), testPlatform+"-") {
		t.Errorf("version directory holds %v", left)
	}
}

// A zip without permission bits (as zips often are) yields an executable,
// found below the archive's versioned top directory.
func TestCommandZip(t *testing.T) {
	body := zipOf(t, entry{name: "tool-1.2.3/bin/tool", body: "binary"})
	_, opts := fixture(t, false, "tool.zip", body, nil)
	path, _, err := resolve(t, opts, "tool")
	if err != nil {
		t.Fatal(err)
	}
	checkInstalled(t, path, "binary")
	if !strings.HasSuffix(filepath.ToSlash(path), "tool-1.2.3/bin/tool") {
		t.Errorf("path %s", path)
	}
}

// A URL without an archive suffix whose content is no archive is the
// executable itself.
func TestCommandBareBinary(t *testing.T) {
	_, opts := fixture(t, true, "tool-linux-amd64", []byte("\x7fELF raw"), nil)
	path, _, err := resolve(t, opts, "tool")
	if err != nil {
		t.Fatal(err)
	}
	checkInstalled(t, path, "\x7fELF raw")
	if !strings.HasSuffix(filepath.ToSlash(path), "/bin/tool") {
		t.Errorf("installed as %s, want the cmd path", path)
	}
}

// .tar.bz2 is one of the formats the registry allows; testdata holds one
// made with tar and bzip2 (bin/tool containing "bz2 tool").
func TestCommandTarBz2(t *testing.T) {
	body, err := os.ReadFile("testdata/tool.tar.bz2")
	if err != nil {
		t.Fatal(err)
	}
	_, opts := fixture(t, true, "tool.tar.bz2", body, nil)
	path, _, err := resolve(t, opts, "tool")
	if err != nil {
		t.Fatal(err)
	}
	checkInstalled(t, path, "bz2 tool\n")
}

// Once installed, an agent resolves with the server gone: the registry from
// its cache, the binary from its install directory.
func TestCommandCachedWithoutNetwork(t *testing.T) {
	s, opts := fixture(t, true, "tool.tar.gz", tarGz(t, entry{name: "bin/tool", body: "v1", mode: 0o755}), nil)
	var told []string
	opts.OnDownload = func(a *Agent, u string) { told = append(told, a.ID+" "+u) }
	first, _, err := resolve(t, opts, "tool")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.count("/dl/tool.tar.gz"); n != 1 {
		t.Fatalf("%d downloads", n)
	}
	s.Close()
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stale == nil {
		t.Error("registry not marked stale with the server gone")
	}
	cmd, err := r.Command(context.Background(), "tool")
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != first {
		t.Errorf("second resolve %s, first %s", cmd.Path, first)
	}
	if len(told) != 1 || told[0] != "tool "+s.URL+"/dl/tool.tar.gz" {
		t.Errorf("OnDownload calls: %q, want one for the first resolve", told)
	}
}

// Resolvers racing on the first install all get a complete install.
func TestCommandConcurrentInstall(t *testing.T) {
	_, opts := fixture(t, true, "tool.tar.gz", tarGz(t, entry{name: "bin/tool", body: "racy", mode: 0o755}), nil)
	var wg sync.WaitGroup
	paths := make([]string, 8)
	errs := make([]error, 8)
	for i := range paths {
		wg.Go(func() {
			// Separate Registry values, as separate processes would have.
			r2, err := Load(context.Background(), opts)
			if err == nil {
				var p string
				if p, err = r2.Install(context.Background(), &r2.Agents[0]); err == nil {
					paths[i] = p
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil {
			t.Fatalf("resolver %d: %v", i, errs[i])
		}
		if paths[i] != paths[0] {
			t.Errorf("resolver %d got %s, resolver 0 %s", i, paths[i], paths[0])
		}
		checkInstalled(t, paths[i], "racy")
	}
	entries, _ := os.ReadDir(filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3"))
	if len(entries) != 1 {
		t.Errorf("leftovers next to the install: %v", entries)
	}
}

// An archive that does not match the registry's sha256 is refused and
// nothing is installed.
func TestCommandChecksumMismatch(t *testing.T) {
	body := tarGz(t, entry{name: "bin/tool", body: "evil", mode: 0o755})
	_, opts := fixture(t, true, "tool.tar.gz", body, func(a *Agent) {
		bt := a.Distribution.Binary[testPlatform]
		bt.SHA256 = strings.Repeat("ab", 32)
		a.Distribution.Binary[testPlatform] = bt
	})
	_, _, err := resolve(t, opts, "tool")
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("got %v, want ErrChecksum", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.AgentID != "tool" {
		t.Errorf("error %q", err)
	}
	checkPrefix(t, err)
	assertNothingInstalled(t, opts)
}

func assertNothingInstalled(t *testing.T, opts *Options) {
	t.Helper()
	dir := filepath.Join(opts.CacheDir, "agents", "tool", "1.2.3")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v after a refused install", dir, names)
	}
}

// No binary for this platform and no npx or uvx: a clear error naming what
// the agent offers. With npx on the PATH, npx is used.
func TestCommandUnsupportedPlatform(t *testing.T) {
	a := binaryAgent("tool", "darwin-aarch64", "https://h/a.zip", "./tool")
	a.Distribution.NPX = &Package{Package: "@acme/tool@1.2.3", Args: []string{"--acp"}, Env: map[string]string{"NO_UPDATE": "1"}}
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(file, registryJSON(t, a), 0o644); err != nil {
		t.Fatal(err)
	}
	noTools := func(string) (string, error) { return "", errors.New("not found") }
	opts := &Options{Registry: file, CacheDir: dir, Platform: "windows-aarch64", LookPath: noTools}
	_, _, err := resolve(t, opts, "tool")
	if !errors.Is(err, ErrUnsupportedPlatform) {
		t.Fatalf("got %v, want ErrUnsupportedPlatform", err)
	}
	for _, want := range []string{`"tool"`, "darwin-aarch64", "windows-aarch64", "npx"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	opts.LookPath = func(f string) (string, error) { return "/usr/bin/" + f, nil }
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := r.Command(context.Background(), "tool")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/usr/bin/npx", "--yes", "@acme/tool@1.2.3", "--acp"}; !slices.Equal(cmd.Args, want) {
		t.Errorf("args %v, want %v", cmd.Args, want)
	}
	if !slices.Contains(cmd.Env, "NO_UPDATE=1") {
		t.Error("env lacks NO_UPDATE=1")
	}
}

// uvx is used when it is the only distribution.
func TestCommandUVX(t *testing.T) {
	a := Agent{ID: "py", Name: "Py", Version: "0.1.0", Description: "d", Distribution: Distribution{UVX: &Package{Package: "py-agent==0.1.0", Args: []string{"serve"}}}}
	r, err := Parse(registryJSON(t, a))
	if err != nil {
		t.Fatal(err)
	}
	r.opts = (&Options{LookPath: func(f string) (string, error) { return "/bin/" + f, nil }}).withDefaults()
	cmd, err := r.Command(context.Background(), "py")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/bin/uvx", "py-agent==0.1.0", "serve"}; !slices.Equal(cmd.Args, want) || cmd.Env != nil {
		t.Errorf("args %v env %v", cmd.Args, cmd.Env)
	}
}

// An archive URL that is plain http to a remote host is refused before any
// request.
func TestCommandRefusesInsecureArchiveURL(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "registry.json")
	a := binaryAgent("tool", testPlatform, "http://downloads.example/tool.zip", "./tool")
	if err := os.WriteFile(file, registryJSON(t, a), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := resolve(t, &Options{Registry: file, CacheDir: dir, Platform: testPlatform}, "tool")
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("got %v, want ErrInsecureURL", err)
	}
}
