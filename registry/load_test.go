package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acpclient/acp/schema"
)

// The registry is fetched once; later loads send the cached ETag and reuse
// the cached copy on "304 Not Modified"; a changed registry is picked up.
func TestLoadConditionalRefreshETag(t *testing.T) {
	s := newServer(t, true)
	s.etag = `"v1"`
	s.put("/registry.json", registryJSON(t, binaryAgent("one", "linux-x86_64", "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir()}

	for i := range 3 {
		r, err := Load(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Agents) != 1 || r.Agents[0].ID != "one" || r.Stale != nil {
			t.Fatalf("load %d: %+v (stale %v)", i, r.Agents, r.Stale)
		}
	}
	if n, nm := s.count("/registry.json"), s.notMod; n != 3 || nm != 2 {
		t.Fatalf("%d requests, %d answered 304; want 3 and 2", n, nm)
	}

	s.mu.Lock()
	s.etag = `"v2"`
	s.mu.Unlock()
	s.put("/registry.json", registryJSON(t, binaryAgent("two", "linux-x86_64", "https://h/a.zip", "./a")))
	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Agents[0].ID != "two" {
		t.Fatalf("after the registry changed: %+v", r.Agents)
	}
}

// Without an ETag, Last-Modified drives the conditional request.
func TestLoadConditionalRefreshLastModified(t *testing.T) {
	s := newServer(t, false) // plain http on loopback is allowed
	s.lastMod = "Mon, 30 Nov 2026 10:00:00 GMT"
	s.put("/r.json", registryJSON(t, binaryAgent("one", "linux-x86_64", "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/r.json", CacheDir: t.TempDir()}
	for range 2 {
		if _, err := Load(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	if s.notMod != 1 {
		t.Fatalf("%d answers were 304, want 1", s.notMod)
	}
}

// With the server gone, the cached registry is used and marked stale;
// without a cached copy, the failure is returned.
func TestLoadFallsBackToCache(t *testing.T) {
	s := newServer(t, true)
	s.put("/registry.json", registryJSON(t, binaryAgent("one", "linux-x86_64", "https://h/a.zip", "./a")))
	cache := t.TempDir()
	opts := &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: cache}
	if _, err := Load(context.Background(), &Options{Registry: opts.Registry, HTTPClient: s.Client(), CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Stale == nil || len(r.Agents) != 1 {
		t.Fatalf("stale %v, agents %+v", r.Stale, r.Agents)
	}
	if _, err := Load(context.Background(), &Options{Registry: opts.Registry, HTTPClient: s.Client(), CacheDir: t.TempDir()}); err == nil {
		t.Fatal("no cache and no server, yet no error")
	}
}

// A server error or a document that does not parse is not cached: the
// previous copy stays in use.
func TestLoadKeepsCacheOnBadResponse(t *testing.T) {
	s := newServer(t, true)
	s.put("/registry.json", registryJSON(t, binaryAgent("one", "linux-x86_64", "https://h/a.zip", "./a")))
	opts := &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir()}
	if _, err := Load(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	s.put("/registry.json", []byte(`{"agents": [{"id": "../../evil"`))
	r, err := Load(context.Background(), opts)
	if err != nil || r.Stale == nil || !errors.Is(r.Stale, ErrInvalid) || r.Agents[0].ID != "one" {
		t.Fatalf("err %v, stale %v, agents %+v", err, r.Stale, r.Agents)
	}
	s.put("/registry.json", registryJSON(t, binaryAgent("two", "linux-x86_64", "https://h/a.zip", "./a")))
	if r, err := Load(context.Background(), opts); err != nil || r.Agents[0].ID != "two" {
		t.Fatalf("after a good response: %v %+v", err, r)
	}
}

func TestLoadLimit(t *testing.T) {
	s := newServer(t, true)
	s.put("/registry.json", registryJSON(t, binaryAgent("one", "linux-x86_64", "https://h/a.zip", "./a")))
	_, err := Load(context.Background(), &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir(), MaxRegistryBytes: 20})
	if !errors.Is(err, schema.ErrLimitExceeded) {
		t.Fatalf("got %v, want ErrLimitExceeded", err)
	}
	checkPrefix(t, err)
}

// Plain http is refused unless the host is loopback, also after a redirect.
func TestLoadRefusesInsecureURLs(t *testing.T) {
	_, err := Load(context.Background(), &Options{Registry: "http://registry.example/registry.json", CacheDir: t.TempDir()})
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("plain http: %v", err)
	}
	ts := httptest.NewTLSServer(http.RedirectHandler("http://registry.example/registry.json", http.StatusFound))
	defer ts.Close()
	_, err = Load(context.Background(), &Options{Registry: ts.URL, HTTPClient: ts.Client(), CacheDir: t.TempDir()})
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("redirect to plain http: %v", err)
	}
	checkPrefix(t, err)
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]"} {
		if err := checkURL(mustURL(t, "http://"+h+":8080/x")); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}
