package remote_test

// The hostile Streamable HTTP suite, part three: a server that gets the
// wire wrong — headers that never end or never stop, bodies that crawl,
// content types that lie, redirects in a circle, ids reused or bogus,
// answers on the wrong stream, SSE fields of absurd size. Each test checks
// its goroutines with goleak when it ends (leakless) and logs the TCP
// connections the server saw.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
	"go.uber.org/goleak"
)

// leakless checks, once the test and its other cleanups are done, that
// it left no goroutine behind. Call it first: cleanups run last-in first.
func leakless(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// hijacked serves each request by writing raw bytes on its connection.
func hijacked(t *testing.T, write func(w *bufio.ReadWriter, done <-chan struct{})) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		go func() { // a read that fails: the client went away
			io.Copy(io.Discard, rw)
			conn.Close()
		}()
		write(rw, done)
	}))
	t.Cleanup(func() {
		close(done)
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// Headers that never end: trickled, RequestTimeout ends the wait; sent as
// fast as the socket takes them, the transport's header bound (1 MiB for a
// client of its own) does, long before Go's default of 10 MiB.
func TestHostileHTTPEndlessHeaders(t *testing.T) {
	leakless(t)
	slow := hijacked(t, func(w *bufio.ReadWriter, done <-chan struct{}) {
		w.WriteString("HTTP/1.1 200 OK\r\n")
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "X-Slow-%d: x\r\n", i); err != nil || w.Flush() != nil {
				return
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond): // the trickle, not a synchronization
			}
		}
	})
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: slow.URL, Options: remote.Options{RequestTimeout: 200 * time.Millisecond}}, nil)
	if err == nil || !strings.Contains(err.Error(), "RequestTimeout") {
		t.Fatalf("trickled headers: %v, want the timeout named", err)
	}
	var sent atomic.Int64
	fast := hijacked(t, func(w *bufio.ReadWriter, done <-chan struct{}) {
		w.WriteString("HTTP/1.1 200 OK\r\n")
		line := "X-Fast: " + strings.Repeat("h", 1000) + "\r\n"
		for {
			n, err := w.WriteString(line)
			sent.Add(int64(n))
			if err != nil || sent.Load() > 64<<20 {
				return
			}
		}
	})
	_, err = acp.Connect(ctx(t), &remote.HTTPTransport{URL: fast.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("endless headers: %v, want the header bound named", err)
	}
	t.Logf("endless headers: %v; the server got %d KiB out before the client hung up", err, sent.Load()>>10)
	if sent.Load() > 8<<20 {
		t.Errorf("the client read %d MiB of headers", sent.Load()>>20)
	}
}

// A redirect loop stops after 10 hops, for initialize and for a stream.
func TestHostileHTTPRedirectLoop(t *testing.T) {
	leakless(t)
	var hops atomic.Int32
	loop := httptest.NewServer(nil)
	loop.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, loop.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	defer loop.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: loop.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("initialize: %v, want the loop named", err)
	}
	t.Logf("initialize: %d requests, %v", hops.Load(), err)

	s := newRawServer(t)
	var streamHops atomic.Int32
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			streamHops.Add(1)
			http.Redirect(w, r, s.URL+"/again", http.StatusTemporaryRedirect)
			return
		}
		s.serve(w, r)
	})
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, nil)
	if err := connErr(t, c); !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("the connection's stream: %v, want the loop named", err)
	}
	if n := streamHops.Load(); n > 11 {
		t.Fatalf("%d GETs for one stream", n)
	}
}

// Content types that lie: a session's stream answered 200 with JSON fails
// that session alone; an initialize answered with an HTML page fails
// Connect without a stream opened.
func TestHostileHTTPWrongContentType(t *testing.T) {
	leakless(t)
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Acp-Connection-Id", "c1")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Sign in</body></html>")
	}))
	defer html.Close()
	if _, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: html.URL}, nil); err == nil || !strings.Contains(err.Error(), "not the answer to initialize") {
		t.Fatalf("an HTML initialize: %v", err)
	}

	s := newRawServer(t)
	answerSessionNew(s, func(id json.RawMessage) string { return "s1" })
	s.onSessionGET = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		return true
	}
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, nil)
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := sess.Prompt(ctx(t), schema.Text("hi"))
	if err == nil {
		_, err = turn.Wait()
	}
	if err == nil || !strings.Contains(err.Error(), "not text/event-stream") {
		t.Fatalf("prompt: %v, want the content type named", err)
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
	t.Logf("%d TCP connections", s.tcpConns.Load())
}

// answerSessionNew makes s answer each session/new 202 and then, on the
// connection's stream, with the session id name gives.
func answerSessionNew(s *rawServer, name func(id json.RawMessage) string) {
	s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		var e env
		_ = json.Unmarshal(body, &e)
		if e.Method != "session/new" {
			return false
		}
		w.WriteHeader(http.StatusAccepted)
		s.events <- fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"sessionId\":%q}}\n\n", e.ID, name(e.ID))
		return true
	}
}

// An id answered twice: the first answer opens its session's stream, the
// second (naming another session) opens nothing and the client drops it.
func TestHostileHTTPIDReuse(t *testing.T) {
	leakless(t)
	s := newRawServer(t)
	s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		var e env
		_ = json.Unmarshal(body, &e)
		if e.Method != "session/new" {
			return false
		}
		w.WriteHeader(http.StatusAccepted)
		for i := range 50 {
			s.events <- fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"sessionId\":\"again-%s-%d\"}}\n\n", e.ID, e.ID, i)
		}
		return true
	}
	diags := newDiagCounter(acp.DiagLateResponse, 49)
	diags2 := newDiagCounter(acp.DiagLateResponse, 98)
	both := func(d acp.Diagnostic) { diags.on(d); diags2.on(d) }
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, &acp.ClientOptions{OnDiagnostic: both})
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	diags.wait(t)
	if !strings.HasPrefix(string(sess.ID()), "again-") || !strings.HasSuffix(string(sess.ID()), "-0") {
		t.Fatalf("session %q, want the first answer's", sess.ID())
	}
	// The first answer's stream is opened before the client sees the
	// answer, so the GET has been sent by now or is on its way; the
	// second stream would have been too.
	if _, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	diags2.wait(t)
	t.Logf("one id answered 50 times: %d session GETs (2 sessions), %d TCP connections", s.sessionGETs.Load(), s.tcpConns.Load())
	if n := s.sessionGETs.Load(); n > 2 {
		t.Fatalf("%d session streams for 2 sessions", n)
	}
}

// An agent request on one session's stream whose params name another
// session: the client's answer goes back with the Acp-Session-Id of the
// stream that carried it, where the server's routing expects it.
func TestHostileHTTPRequestOnWrongStream(t *testing.T) {
	leakless(t)
	s := newRawServer(t)
	answerSessionNew(s, func(id json.RawMessage) string { return "s" + string(id) })
	answered := make(chan string, 1)
	inner := s.onPost
	s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		var e env
		_ = json.Unmarshal(body, &e)
		if e.Method == "" && string(e.ID) == `"agent-1"` {
			answered <- r.Header.Get("Acp-Session-Id")
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		return inner(w, r, body)
	}
	var first atomic.Bool
	s.onSessionGET = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if first.CompareAndSwap(false, true) {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"agent-1\",\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"elsewhere\",\"path\":\"/etc/passwd\"}}\n\n")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, nil)
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-answered:
		if got != sess.ID() {
			t.Fatalf("answered with Acp-Session-Id %q, want the carrying stream's %q", got, sess.ID())
		}
	case <-ctx(t).Done():
		t.Fatal("the agent's request was never answered")
	}
}

// An Acp-Connection-Id that cannot go back in a header fails Connect.
func TestHostileHTTPBogusConnectionID(t *testing.T) {
	leakless(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Acp-Connection-Id", strings.Repeat("c", 4096))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)
	}))
	defer ts.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "Acp-Connection-Id") {
		t.Fatalf("Connect: %v, want the connection id refused", err)
	}
}

// Absurd SSE fields — an 8 MiB event id, an 8 MiB event name, retry: with
// 2000 digits, a retry: that is not a number — are read past in bounded
// parts: the live heap stays small while they arrive, and the event after
// them is delivered.
func TestHostileHTTPHugeSSEFields(t *testing.T) {
	leakless(t)
	s := newRawServer(t)
	probe := newHeapProbe()
	s.onConnGET = func(w http.ResponseWriter, r *http.Request) {
		for _, field := range []string{"id: ", "event: ", ": "} {
			io.WriteString(w, field)
			writeFill(w, 8*mib, func(n int) bool {
				if n%(2*mib) == 0 {
					probe.sample()
				}
				return r.Context().Err() == nil
			})
			io.WriteString(w, "\n")
		}
		io.WriteString(w, "retry: "+strings.Repeat("9", 2000)+"\nretry: soon\n\n")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"nobody/after\",\"params\":{}}\n\n")
		w.(http.Flusher).Flush()
	}
	got := make(chan struct{})
	var once atomic.Bool
	diag := func(d acp.Diagnostic) {
		if d.Kind == acp.DiagUnknownNotification && once.CompareAndSwap(false, true) {
			close(got)
		}
	}
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, &acp.ClientOptions{OnDiagnostic: diag})
	select {
	case <-got:
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	case <-ctx(t).Done():
		t.Fatal("the event after the huge fields never came")
	}
	t.Logf("24 MiB of id:, event: and comment lines: live heap peak +%.1f MiB", float64(probe.max())/mib)
	if probe.max() > 4*mib {
		t.Errorf("the live heap peaked at +%.1f MiB while fields were read past", float64(probe.max())/mib)
	}
}

// A POST refused with a status whose body crawls: RequestTimeout bounds
// the body too, and only the call fails, with what came of the body.
func TestHostileHTTPSlowErrorBody(t *testing.T) {
	leakless(t)
	s := newRawServer(t)
	s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Header.Get("Acp-Connection-Id") == "" {
			return false
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "overloaded, please")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
	c := connect(t, &remote.HTTPTransport{URL: s.URL, Options: remote.Options{RequestTimeout: 200 * time.Millisecond}}, nil)
	_, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	var e *schema.Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "503") || !strings.Contains(e.Message, "overloaded") {
		t.Fatalf("NewSession: %v, want a -32603 naming the 503 and its text", err)
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
}
