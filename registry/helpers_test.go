package registry

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// entry is one member of a test archive.
type entry struct {
	name string
	body string
	mode int64 // 0: 0644 (0755 with exec)
	typ  byte  // tar type; 0: regular file
	link string
}

func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Typeflag: e.typ, Linkname: e.link}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		switch e.typ {
		case tar.TypeSymlink:
			h.SetMode(fs.ModeSymlink | 0o777)
			e.body = e.link
		case tar.TypeDir:
			h.SetMode(fs.ModeDir | 0o755)
		default:
			if e.mode != 0 {
				h.SetMode(fs.FileMode(e.mode))
			}
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// server serves files by path and counts requests, answering conditional
// requests for the registry from its ETag.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	etag     string
	lastMod  string
	requests map[string]int
	notMod   int
	redirect map[string]string // path to the URL it redirects to
	header   http.Header       // added to every answer
	// refuseConditional answers 412 to any request with If-None-Match.
	refuseConditional bool
}

func newServer(t *testing.T, tls bool) *server {
	s := &server{files: map[string][]byte{}, requests: map[string]int{}, redirect: map[string]string{}}
	h := http.HandlerFunc(s.serve)
	if tls {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[r.URL.Path]++
	if to, ok := s.redirect[r.URL.Path]; ok {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	for k, v := range s.header {
		w.Header()[k] = v
	}
	if s.refuseConditional && r.Header.Get("If-None-Match") != "" {
		w.WriteHeader(http.StatusPreconditionFailed)
		return
	}
	body, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if s.etag != "" {
		w.Header().Set("ETag", s.etag)
		if r.Header.Get("If-None-Match") == s.etag {
			s.notMod++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if s.lastMod != "" {
		w.Header().Set("Last-Modified", s.lastMod)
		if s.etag == "" && r.Header.Get("If-Modified-Since") == s.lastMod {
			s.notMod++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Write(body)
}

func (s *server) put(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = body
}

func (s *server) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// registryJSON is a registry document holding these agents.
func registryJSON(t *testing.T, agents ...Agent) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": "1.0.0", "agents": agents, "extensions": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// binaryAgent is an agent whose only distribution is one archive for the
// given platform.
func binaryAgent(id, platform, archiveURL, cmd string) Agent {
	return Agent{
		ID: id, Name: "Agent " + id, Version: "1.2.3", Description: "test agent",
		Distribution: Distribution{Binary: map[string]BinaryTarget{
			platform: {Archive: archiveURL, Cmd: cmd, Args: []string{"acp"}, Env: map[string]string{"AGENT_MODE": "acp"}},
		}},
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkPrefix checks that err carries the package's one "registry:" prefix
// and no other package's.
func checkPrefix(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); !strings.HasPrefix(msg, "registry: ") || strings.Count(msg, "registry:") != 1 || strings.Contains(msg, "acp:") {
		t.Errorf("error %q: want one leading \"registry: \" and no \"acp:\"", msg)
	}
}
