package registry_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/acpclient/acp/registry"
)

// Trying the registry with no network: a registry file lists one agent
// whose archive a server on this machine serves. Command downloads it
// once, checks its sha256, installs it into the cache and resolves it
// from there afterwards, with the server gone.
func Example_offline() {
	ctx := context.Background()
	archive := tarGzOf("bin/hello", "#!/bin/sh\necho hello from the agent\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(archive)
	}))
	defer srv.Close()

	dir, err := os.MkdirTemp("", "registry-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sum := sha256.Sum256(archive)
	doc := fmt.Sprintf(`{"version": "1.0.0", "agents": [{
		"id": "hello", "name": "Hello", "version": "1.0.0", "description": "says hello",
		"distribution": {"binary": {"linux-x86_64": {
			"archive": %q, "sha256": %q, "cmd": "./bin/hello", "args": ["--acp"]}}}}]}`,
		srv.URL+"/hello.tar.gz", hex.EncodeToString(sum[:]))
	file := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		log.Fatal(err)
	}

	opts := &registry.Options{
		Registry: file,
		CacheDir: filepath.Join(dir, "cache"),
		Platform: "linux-x86_64", // the entry's platform, whatever this machine is
		OnDownload: func(a *registry.Agent, url string) {
			fmt.Println("downloading", a.ID, a.Version)
		},
	}
	reg, err := registry.Load(ctx, opts)
	if err != nil {
		log.Fatal(err)
	}
	cmd, err := reg.Command(ctx, "hello")
	if err != nil {
		log.Fatal(err)
	}
	script, err := os.ReadFile(cmd.Path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %v: %q\n", filepath.Base(cmd.Path), cmd.Args[1:], script)

	srv.Close()
	cmd, err = reg.Command(ctx, "hello") // from the cache
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cached:", filepath.Base(cmd.Path))
	// Output:
	// downloading hello 1.0.0
	// hello [--acp]: "#!/bin/sh\necho hello from the agent\n"
	// cached: hello
}

// tarGzOf is a .tar.gz holding one executable file.
func tarGzOf(name, body string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	return buf.Bytes()
}
