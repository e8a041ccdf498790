package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// victim is a plain-http service on loopback, as an admin endpoint on this
// machine would be; it counts the requests that reach it.
func victim(t *testing.T, body []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// An https registry that redirects to http on loopback does not get this
// machine to call the loopback service, nor its answer used.
func TestHostileRegistryRedirectToLoopbackHTTP(t *testing.T) {
	v, hits := victim(t, registryJSON(t, binaryAgent("evil", testPlatform, "https://h/a.zip", "./a")))
	reg := httptest.NewTLSServer(http.RedirectHandler(v.URL+"/admin/registry.json", http.StatusFound))
	defer reg.Close()
	_, err := Load(context.Background(), &Options{Registry: reg.URL + "/registry.json", HTTPClient: reg.Client(), CacheDir: t.TempDir()})
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("got %v, want ErrInsecureURL", err)
	}
	checkPrefix(t, err)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback service got %d requests", n)
	}
}

// The same for an archive host: the redirect is refused before any request
// to the loopback service, and nothing is installed.
func TestHostileArchiveRedirectToLoopbackHTTP(t *testing.T) {
	v, hits := victim(t, tarGz(t, entry{name: "bin/tool", body: "evil", mode: 0o755}))
	s, opts := fixture(t, true, "tool.tar.gz", nil, nil)
	s.mu.Lock()
	s.redirect["/dl/tool.tar.gz"] = v.URL + "/admin/tool.tar.gz"
	s.mu.Unlock()
	_, _, err := resolve(t, opts, "tool")
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("got %v, want ErrInsecureURL", err)
	}
	checkPrefix(t, err)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback service got %d requests", n)
	}
	assertNothingInstalled(t, opts)
}

// A registry fetched from a remote host may not name an archive on this
// machine: that would be the same forgery without a redirect.
func TestHostileRemoteRegistryNamesLoopbackArchive(t *testing.T) {
	v, hits := victim(t, []byte("evil"))
	r, err := Parse(registryJSON(t, binaryAgent("tool", testPlatform, v.URL+"/admin/delete", "./bin/tool")))
	if err != nil {
		t.Fatal(err)
	}
	r.opts = (&Options{CacheDir: t.TempDir(), Platform: testPlatform}).withDefaults()
	r.origin = mustURL(t, "https://registry.example/registry.json")
	_, err = r.Command(context.Background(), "tool")
	if !errors.Is(err, ErrInsecureURL) {
		t.Fatalf("got %v, want ErrInsecureURL", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback service got %d requests", n)
	}
}

// At most 10 redirects are followed, even with a client whose own policy
// follows any number.
func TestHostileRedirectLoop(t *testing.T) {
	body := registryJSON(t, binaryAgent("one", testPlatform, "https://h/a.zip", "./a"))
	var hops atomic.Int32
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := hops.Add(1); n <= 50 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n), http.StatusFound)
			return
		}
		w.Write(body)
	}))
	defer s.Close()
	client := s.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return nil }
	_, err := Load(context.Background(), &Options{Registry: s.URL + "/registry.json", HTTPClient: client, CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Fatalf("got %v, want a refusal after 10 redirects", err)
	}
	checkPrefix(t, err)
	if n := hops.Load(); n != 10 {
		t.Errorf("%d requests, want 10 (the first and 9 redirects)", n)
	}
}

// The redirect policy case by case: https stays allowed (also loopback to
// loopback, as test servers are), http only from http on loopback to
// loopback, and nothing from a remote host to a loopback one.
func TestRedirectAllowed(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"https://registry.example/r.json", "https://cdn.example/r.json", true},
		{"https://127.0.0.1:1/r.json", "https://127.0.0.1:2/r.json", true},
		{"http://127.0.0.1:1/r.json", "http://localhost:2/r.json", true},
		{"http://127.0.0.1:1/r.json", "https://cdn.example/r.json", true},
		{"https://127.0.0.1:1/r.json", "http://127.0.0.1:2/admin", false},
		{"https://registry.example/r.json", "http://127.0.0.1:2/admin", false},
		{"https://registry.example/r.json", "https://127.0.0.1:2/admin", false},
		{"https://registry.example/r.json", "https://[::1]:2/admin", false},
		{"http://127.0.0.1:1/r.json", "http://cdn.example/r.json", false},
		{"https://registry.example/r.json", "ftp://cdn.example/r.json", false},
	} {
		err := redirectAllowed(mustURL(t, c.from), mustURL(t, c.to))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInsecureURL)) {
			t.Errorf("%s -> %s: %v, want allowed %v", c.from, c.to, err, c.ok)
		}
	}
}
