package registry

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hugeETag is a syntactically valid ETag of 1.5 MiB: the server accepts
// no request carrying it back (its header limit is 1 MiB, answered 431).
// It is made by the test that uses it, so that the package's init stays
// empty (TestInitIsLazy).
func hugeETag() string { return `"` + strings.Repeat("a", 3<<19) + `"` }

// A response with a 1.5 MiB ETag does not freeze the registry: the ETag is
// not stored (so not sent back, so not refused), every later load gets a
// fresh copy, and the cache file holds no more than the document.
func TestHostileHugeETagNotStored(t *testing.T) {
	s := newServer(t, true)
	s.etag = hugeETag()
	s.put("/registry.json", registryJSON(t, binaryAgent("one", testPlatform, "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir()}
	for i := range 3 {
		r, err := Load(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stale != nil {
			t.Fatalf("load %d: stale: %v", i, r.Stale)
		}
	}
	files, _ := filepath.Glob(filepath.Join(opts.CacheDir, "registry", "*.json"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > 4<<10 {
			t.Errorf("%s is %d bytes: the ETag was stored", f, fi.Size())
		}
	}
}

// A conditional request the server refuses (here 412 to any If-None-Match)
// is sent again without validators, and the fresh answer is used.
func TestHostileRefusedConditionalRetried(t *testing.T) {
	s := newServer(t, true)
	s.etag = `"v1"`
	s.put("/registry.json", registryJSON(t, binaryAgent("one", testPlatform, "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir()}
	if _, err := Load(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.refuseConditional = true
	s.etag = `"v2"`
	s.mu.Unlock()
	s.put("/registry.json", registryJSON(t, binaryAgent("two", testPlatform, "https://h/a.zip", "./a")))
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stale != nil || r.Agents[0].ID != "two" {
		t.Fatalf("stale %v, agents %+v: the refusal froze the registry", r.Stale, r.Agents)
	}
}

// The default client reads at most DefaultMaxResponseHeaderBytes of
// headers: a response with more fails, and the cached copy is used.
func TestHostileHugeResponseHeader(t *testing.T) {
	s := newServer(t, false) // the default client: plain http on loopback
	s.put("/registry.json", registryJSON(t, binaryAgent("one", testPlatform, "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/registry.json", CacheDir: t.TempDir()}
	if _, err := Load(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.header = http.Header{"X-Junk": {strings.Repeat("j", 1<<20)}}
	s.mu.Unlock()
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stale == nil || !strings.Contains(r.Stale.Error(), "header") {
		t.Fatalf("stale %v: want the oversized header refused", r.Stale)
	}
	checkPrefix(t, r.Stale)
}

// Only entity tags of the RFC's syntax and at most 1 KiB are kept, and
// only HTTP dates as Last-Modified.
func TestDropBadValidators(t *testing.T) {
	for tag, ok := range map[string]bool{
		`"v1"`: true, `W/"v1"`: true, `""`: true, `"` + strings.Repeat("a", maxValidatorBytes-2) + `"`: true,
		`"` + strings.Repeat("a", maxValidatorBytes) + `"`: false,
		`v1`: false, `"v"1"`: false, `"v 1"`: false, "\"v\x01\"": false, `W/`: false, `"`: false,
	} {
		e := cacheEntry{ETag: tag, LastModified: "Mon, 30 Nov 2026 10:00:00 GMT"}
		e.dropBadValidators()
		if (e.ETag != "") != ok || e.LastModified == "" {
			t.Errorf("ETag %.20q: kept %q, want kept %v", tag, e.ETag, ok)
		}
	}
	e := cacheEntry{LastModified: "yesterday"}
	if e.dropBadValidators(); e.LastModified != "" {
		t.Errorf("kept Last-Modified %q", e.LastModified)
	}
}
