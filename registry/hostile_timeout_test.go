package registry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// staller answers with the first bytes of a body (none with
// beforeHeaders) and then blocks until the test ends: a server that
// trickles or hangs. Nothing sleeps; the client's timeout is the only way
// out.
func staller(t *testing.T, tls, beforeHeaders bool) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !beforeHeaders {
			io.WriteString(w, `{"agents": [`)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	var s *httptest.Server
	if tls {
		s = httptest.NewTLSServer(h)
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // before Close, which waits for handlers
	return s
}

// Load against a server that sends a few bytes and then nothing gives up
// after LoadTimeout, though the caller's context has no deadline: an error
// wrapping ErrTimeout, or with a cached copy that copy, marked stale.
func TestHostileLoadTrickle(t *testing.T) {
	for _, beforeHeaders := range []bool{false, true} {
		s := staller(t, true, beforeHeaders)
		_, err := Load(context.Background(), &Options{Registry: s.URL + "/registry.json", HTTPClient: s.Client(), CacheDir: t.TempDir(), LoadTimeout: 20 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("before headers %v: got %v, want ErrTimeout", beforeHeaders, err)
		}
		checkPrefix(t, err)
	}

	good := newServer(t, true)
	good.put("/registry.json", registryJSON(t, binaryAgent("one", testPlatform, "https://h/a.zip", "./a")))
	cache := t.TempDir()
	if _, err := Load(context.Background(), &Options{Registry: good.URL + "/registry.json", HTTPClient: good.Client(), CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	s := staller(t, true, false)
	good.mu.Lock()
	good.redirect["/registry.json"] = s.URL + "/registry.json"
	good.mu.Unlock()
	r, err := Load(context.Background(), &Options{Registry: good.URL + "/registry.json", HTTPClient: good.Client(), CacheDir: cache, LoadTimeout: 20 * time.Millisecond})
	if err != nil || !errors.Is(r.Stale, ErrTimeout) || r.Agents[0].ID != "one" {
		t.Fatalf("err %v, stale %v: want the cached copy, stale with ErrTimeout", err, r.Stale)
	}
}

// An archive download that stalls (before or after the headers) fails
// after StallTimeout wrapping ErrTimeout; nothing is installed and nothing
// is left of the download.
func TestHostileDownloadStall(t *testing.T) {
	for _, beforeHeaders := range []bool{false, true} {
		s := staller(t, true, beforeHeaders)
		_, opts := fixture(t, true, "tool.tar.gz", nil, func(a *Agent) {
			bt := a.Distribution.Binary[testPlatform]
			bt.Archive = s.URL + "/tool.tar.gz"
			a.Distribution.Binary[testPlatform] = bt
		})
		opts.StallTimeout = 20 * time.Millisecond
		_, _, err := resolve(t, opts, "tool")
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("before headers %v: got %v, want ErrTimeout", beforeHeaders, err)
		}
		checkPrefix(t, err)
		assertNothingInstalled(t, opts)
	}
}

// pipeTransport answers every request with a 200 whose body the test
// writes through a pipe; as a real transport's, the body fails once the
// request's context is done.
type pipeTransport struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		<-req.Context().Done()
		p.w.CloseWithError(req.Context().Err())
	}()
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, ContentLength: -1, Body: p.r, Request: req}, nil
}

// fakeDownload runs download with a pipe as the archive host, in a
// synctest bubble so that the stall timer runs on the bubble's fake clock:
// feed writes to the pipe, sleeping as it likes, and the result is
// download's.
func fakeDownload(t *testing.T, stall time.Duration, feed func(w *io.PipeWriter)) error {
	t.Helper()
	var err error
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		o := (&Options{HTTPClient: &http.Client{Transport: pipeTransport{pr, pw}}, StallTimeout: stall}).withDefaults()
		fed := make(chan struct{})
		go func() {
			defer close(fed)
			feed(pw)
			pw.Close()
		}()
		err = download(context.Background(), o, mustURL(t, "https://dl.example/tool"), io.Discard, nil)
		pr.Close() // the feeder's next write fails
		<-fed
	})
	return err
}

// A download that keeps making progress is never cut, however long it
// takes in all: here a byte every 0.9 StallTimeout, 20 times over. One
// that then pauses for longer than StallTimeout is.
func TestDownloadSlowButSteady(t *testing.T) {
	const stall = time.Minute
	err := fakeDownload(t, stall, func(w *io.PipeWriter) {
		for range 20 {
			time.Sleep(stall * 9 / 10)
			w.Write([]byte("x"))
		}
	})
	if err != nil {
		t.Fatalf("a download making progress for 18 minutes failed: %v", err)
	}
	err = fakeDownload(t, stall, func(w *io.PipeWriter) {
		w.Write([]byte("x"))
		time.Sleep(stall + time.Second)
		w.Write([]byte("x"))
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "sent nothing for StallTimeout (1m0s)") {
		t.Fatalf("a download stalled for longer than StallTimeout: %v", err)
	}
}

// The zero Options select the documented defaults; negative ones none.
func TestTimeoutDefaults(t *testing.T) {
	o := (&Options{}).withDefaults()
	if o.LoadTimeout != DefaultLoadTimeout || o.StallTimeout != DefaultStallTimeout {
		t.Errorf("defaults %v %v", o.LoadTimeout, o.StallTimeout)
	}
	o = (&Options{LoadTimeout: -1, StallTimeout: -1}).withDefaults()
	if o.LoadTimeout > 0 || o.StallTimeout > 0 {
		t.Errorf("negative timeouts became %v %v", o.LoadTimeout, o.StallTimeout)
	}
}
