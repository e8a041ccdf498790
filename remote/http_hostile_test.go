package remote_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/remote"
	"github.com/acpclient/acp/schema"
)

// connErr waits for the client's connection to end and returns why.
func connErr(t *testing.T, c *acp.Client) error {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
	}
	err := c.Err()
	if !errors.Is(err, acp.ErrConnClosed) {
		t.Fatalf("Err() = %v, want ErrConnClosed", err)
	}
	return err
}

func wantStatus(t *testing.T, err error, code int) *remote.StatusError {
	t.Helper()
	var se *remote.StatusError
	if !errors.As(err, &se) || se.StatusCode != code {
		t.Fatalf("%v: want a *remote.StatusError with status %d", err, code)
	}
	return se
}

func TestHostileHTTPInitializeWithoutConnectionID(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`))
	}))
	defer ts.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "no Acp-Connection-Id header") {
		t.Fatalf("Connect: %v, want the missing header named", err)
	}
}

func TestHostileHTTPInitializeStatus(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 413, 415, 500, 502, 503} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "refused \x1b[31mred", code)
		}))
		_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL}, nil)
		se := wantStatus(t, err, code)
		if strings.Contains(err.Error(), "\x1b") || !strings.Contains(se.Body, "refused") {
			t.Errorf("%d: the error %q shows the server's text unescaped, or not at all", code, err)
		}
		ts.Close()
	}
}

// A server that never answers: RequestTimeout bounds the initialize POST,
// the opening of a stream and every other POST.
func TestHostileHTTPNeverAnswers(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client going away only once it has read
		// the request's body.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
	ts := httptest.NewServer(http.HandlerFunc(hang))
	defer ts.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL, Options: remote.Options{RequestTimeout: 100 * time.Millisecond}}, nil)
	if err == nil || !strings.Contains(err.Error(), "RequestTimeout") {
		t.Fatalf("initialize: %v, want the timeout named", err)
	}

	// A POST after initialize that never answers ends the connection.
	for _, what := range []string{"post", "get"} {
		s, ts := serve(t, nil)
		s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Header.Get("Acp-Connection-Id") == "" {
				return false
			}
			if what == "post" && r.Method == http.MethodPost || what == "get" && r.Method == http.MethodGet {
				hang(w, r)
				return true
			}
			return false
		}
		c := connect(t, &remote.HTTPTransport{URL: ts.URL, Options: remote.Options{RequestTimeout: 100 * time.Millisecond}}, nil)
		_, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
		if !errors.Is(err, acp.ErrConnClosed) || !strings.Contains(err.Error(), "RequestTimeout") {
			t.Fatalf("%s: NewSession: %v, want ErrConnClosed naming the timeout", what, err)
		}
	}
}

// A server that accepts everything and answers nothing: the caller's
// context bounds the call, and Close still ends everything at once.
func TestHostileHTTPSilentServer(t *testing.T) {
	s, ts := serve(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{"session/new": acptest.NeverAnswer}})
	_ = s
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	cctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.NewSession(cctx, &schema.NewSessionRequest{Cwd: t.TempDir()}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NewSession: %v, want the caller's deadline", err)
	}
	c.Close() // goleak (TestMain) checks nothing is left
}

// A request's POST refused with a status that leaves the connection usable
// fails only that call, naming the status; 401, 403, 404 and 410 end the
// connection (as the TypeScript client reads them).
func TestHostileHTTPPostStatus(t *testing.T) {
	for _, code := range []int{400, 409, 413, 415, 500, 501, 502, 503} {
		s, ts := serve(t, nil)
		var refused atomic.Bool
		s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost && r.Header.Get("Acp-Connection-Id") != "" && refused.CompareAndSwap(false, true) {
				http.Error(w, "nope", code)
				return true
			}
			return false
		}
		c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
		_, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
		var e *schema.Error
		if !errors.As(err, &e) || e.Code != schema.CodeInternalError || !strings.Contains(e.Message, http.StatusText(code)) || !strings.Contains(string(e.Data), `"status":`) {
			t.Fatalf("%d: NewSession: %v, want a -32603 naming the status", code, err)
		}
		if _, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
			t.Fatalf("%d: the next call: %v", code, err)
		}
		c.Close()
	}
	for _, code := range []int{401, 403, 404, 410} {
		s, ts := serve(t, nil)
		s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost && r.Header.Get("Acp-Connection-Id") != "" {
				http.Error(w, "gone", code)
				return true
			}
			return false
		}
		c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
		_, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
		if !errors.Is(err, acp.ErrConnClosed) {
			t.Fatalf("%d: NewSession: %v, want ErrConnClosed", code, err)
		}
		wantStatus(t, err, code)
		wantStatus(t, connErr(t, c), code)
	}
}

// The connection's SSE stream refused (4xx/5xx), or cut mid-stream: the
// connection ends and pending calls fail with ErrConnClosed and the cause.
func TestHostileHTTPConnectionStream(t *testing.T) {
	for _, code := range []int{400, 404, 406, 409, 500, 503} {
		s, ts := serve(t, nil)
		s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && r.Header.Get("Acp-Session-Id") == "" {
				http.Error(w, "no stream", code)
				return true
			}
			return false
		}
		c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
		wantStatus(t, connErr(t, c), code)
	}

	// Cut: the stream ends while a call waits for its answer.
	s, ts := serve(t, &acptest.Options{Methods: map[string]acptest.MethodFunc{"session/new": acptest.NeverAnswer}})
	cut := make(chan struct{})
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && r.Header.Get("Acp-Session-Id") == "" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-cut
			return true // the handler returns: the stream ends
		}
		return false
	}
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
		errc <- err
	}()
	close(cut)
	err := <-errc
	if !errors.Is(err, acp.ErrConnClosed) || !strings.Contains(err.Error(), "connection's SSE stream ended") {
		t.Fatalf("NewSession: %v, want ErrConnClosed naming the stream", err)
	}

	// Not an event stream.
	s, ts = serve(t, nil)
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>login</html>"))
			return true
		}
		return false
	}
	c = connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	if err := connErr(t, c); !strings.Contains(err.Error(), "not text/event-stream") {
		t.Fatalf("Err: %v", err)
	}
}

// A session's stream refused with 409 (or 404, an unknown session) fails
// the calls for that session and leaves the connection and other sessions
// alone.
func TestHostileHTTPSessionStreamRefused(t *testing.T) {
	for _, code := range []int{http.StatusConflict, http.StatusNotFound} {
		t.Run(strconv.Itoa(code), func(t *testing.T) { sessionStreamRefused(t, code) })
	}
}

func sessionStreamRefused(t *testing.T, code int) {
	s, ts := serve(t, nil)
	var refused atomic.Bool
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && r.Header.Get("Acp-Session-Id") != "" && refused.CompareAndSwap(false, true) {
			http.Error(w, "refused", code)
			return true
		}
		return false
	}
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The stream opened for the answer was refused; the prompt reopens it
	// (the refusal was once), or fails with the 409 if it came too late.
	turn, err := sess.Prompt(ctx(t), schema.Text("hi"))
	if err == nil {
		_, err = turn.Wait()
	}
	if err != nil {
		var e *schema.Error
		if !errors.As(err, &e) || !strings.Contains(e.Message, strconv.Itoa(code)) {
			t.Fatalf("prompt: %v, want success or a -32603 naming %d", err, code)
		}
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
	if _, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatalf("another session: %v", err)
	}
}

// Junk on the streams — non-JSON data, arrays, empty events, comments,
// unknown fields, CRLF lines, a multi-line data event, an 8 MiB comment and
// an 8 MiB junk event — costs nothing but diagnostics: the connection
// works, and the transport never holds more than MaxMessageBytes of it.
func TestHostileHTTPMalformedEvents(t *testing.T) {
	s, ts := serve(t, nil)
	var junk strings.Builder
	junk.WriteString(": keep-alive\n\n")
	junk.WriteString("data: not json\n\n")
	junk.WriteString("data: [1,2,3]\n\n")
	junk.WriteString("data:\n\n")
	junk.WriteString("event: message\nid: 7\nretry: 10\n\n")
	junk.WriteString("data: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"_x/note\",\"params\":{}}\r\n\r\n")
	junk.WriteString(": " + strings.Repeat("c", 8<<20) + "\n\n")
	junk.WriteString("data: " + strings.Repeat("j", 8<<20) + "\n\n")
	junk.WriteString("field-without-colon\n\n")
	s.ssePrefix = []byte(junk.String())
	var diags atomic.Int32
	c := connect(t, &remote.HTTPTransport{URL: ts.URL, Options: remote.Options{MaxMessageBytes: 64 << 10}}, &acp.ClientOptions{
		Limits:       acp.Limits{MaxLineBytes: 1 << 20},
		OnDiagnostic: func(acp.Diagnostic) { diags.Add(1) },
	})
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := sess.Prompt(ctx(t), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if diags.Load() == 0 {
		t.Error("no diagnostics for the junk")
	}
}

// Redirects: never from https to http; a POST only by 307/308 (Go turns
// the others into a GET); 307 between loopback URLs is followed.
func TestHostileHTTPRedirects(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "plain", http.StatusInternalServerError) }))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/acp", http.StatusTemporaryRedirect))
	defer tls.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: tls.URL, Options: remote.Options{HTTPClient: tls.Client()}}, nil)
	if !errors.Is(err, remote.ErrInsecureURL) {
		t.Fatalf("https→http: %v, want ErrInsecureURL", err)
	}
	_, err = acp.Connect(ctx(t), &remote.WebSocketTransport{URL: strings.Replace(tls.URL, "https", "wss", 1), Options: remote.Options{HTTPClient: tls.Client()}}, nil)
	if !errors.Is(err, remote.ErrInsecureURL) {
		t.Fatalf("wss→ws: %v, want ErrInsecureURL", err)
	}

	found := httptest.NewServer(http.RedirectHandler(plain.URL, http.StatusFound))
	defer found.Close()
	_, err = acp.Connect(ctx(t), &remote.HTTPTransport{URL: found.URL}, nil)
	if err == nil || !strings.Contains(err.Error(), "only 307 and 308") {
		t.Fatalf("302 for a POST: %v", err)
	}

	_, real := serve(t, nil)
	moved := httptest.NewServer(http.RedirectHandler(real.URL, http.StatusPermanentRedirect))
	defer moved.Close()
	c := connect(t, &remote.HTTPTransport{URL: moved.URL}, nil)
	if _, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatalf("through a 308: %v", err)
	}
}

// The first message must be initialize: anything else ends the connection
// before a request goes out.
func TestHostileHTTPFirstMessage(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer ts.Close()
	conn, err := (&remote.HTTPTransport{URL: ts.URL}).Connect(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}` + "\n")); err == nil || !strings.Contains(err.Error(), "must be the initialize") {
		t.Fatalf("Write: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("a request went out")
	}
}

// A session's stream that ends while a call waits on it, the connection
// alive, is opened again: the call's answer, which the server kept for the
// stream, arrives on the new one, and the session goes on.
func TestHostileHTTPSessionStreamEnds(t *testing.T) {
	s, ts := serve(t, nil)
	cut := make(chan struct{})
	var once, first atomic.Bool
	var gets atomic.Int32
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && r.Header.Get("Acp-Session-Id") != "" {
			gets.Add(1)
		}
		switch {
		case r.Method == http.MethodGet && r.Header.Get("Acp-Session-Id") != "" && first.CompareAndSwap(false, true):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-cut
			return true
		case r.Method == http.MethodPost && r.Header.Get("Acp-Session-Id") != "" && once.CompareAndSwap(false, true):
			close(cut)
		}
		return false
	}
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"hi", "again"} {
		turn, err := sess.Prompt(ctx(t), schema.Text(text))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatalf("prompt %q: %v", text, err)
		}
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("%d GETs of the session's stream, want 2 (the first, ended, and its reopening)", n)
	}
}

// A session's stream that ends and cannot be opened again (here 404
// Unknown Acp-Connection-Id: what a proxy's other backend answers once
// this one died) ends the connection: the session's pending call fails
// with acp.ErrConnClosed, as every call of a dead connection does, so
// that supervision sees the death in the turn. It used to fail the call
// alone with a -32603 naming the stream, and a supervised client did not
// restart.
func TestHTTPSessionStreamEndsThenRefused(t *testing.T) {
	s, ts := serve(t, nil)
	cut := make(chan struct{})
	var once, first atomic.Bool
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || r.Header.Get("Acp-Session-Id") == "" {
			if r.Method == http.MethodPost && r.Header.Get("Acp-Session-Id") != "" && once.CompareAndSwap(false, true) {
				close(cut)
			}
			return false
		}
		if first.CompareAndSwap(false, true) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-cut
			return true
		}
		http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
		return true
	}
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, nil)
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := sess.Prompt(ctx(t), schema.Text("hi"))
	if err == nil {
		_, err = turn.Wait()
	}
	if !errors.Is(err, acp.ErrConnClosed) {
		t.Fatalf("prompt: %v, want acp.ErrConnClosed", err)
	}
	<-c.Done()
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "opening it again failed") {
		t.Fatalf("the connection's error: %v, want the stream's end and the refused reopening", err)
	}
}

// A backend that dies behind a proxy: the session's stream ends first,
// cleanly, and its GET again meets another backend (404, not drained);
// then the connection's stream ends, cleanly too. That connection died
// with a prompt the agent had: under supervision the turn fails with
// acp.ErrAgentRestarted, and the prompt is never posted again. The
// connection's clean end used to be taken for a drain's last step as soon
// as the session's end was waiting for it (deferEnd, not a drain): the
// connection ended drained, the turn was held as never delivered, and its
// prompt was run a second time by the next agent (nginx in front of two
// gateways, one killed mid-turn: gateway/proxytest TestBackendKilledMidTurn).
func TestHTTPDeadBackendIsNotDrained(t *testing.T) {
	var ran atomic.Int32
	s, ts := serve(t, &acptest.Options{OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
		if ran.Add(1) > 1 {
			return schema.StopReasonEndTurn, nil // a prompt run twice
		}
		if err := tn.Say("waiting"); err != nil {
			return "", err
		}
		<-tn.Context().Done()
		return "", tn.Context().Err()
	}})
	var (
		first     atomic.Value // the first connection's id
		prompts   atomic.Int32
		dead      = make(chan struct{}) // the first connection's backend is gone
		endStream = make(chan context.CancelFunc, 1)
		streams   atomic.Int32
	)
	// The session's end, waiting for the connection's (deferEnd), ends the
	// connection's stream: the order that was read as a drain.
	remote.OnDeferredEnd(t, func(stream string) {
		if stream != "" && streams.Add(1) == 1 {
			(<-endStream)()
		}
	})
	s.onRequest = func(w http.ResponseWriter, r *http.Request) bool {
		id := r.Header.Get("Acp-Connection-Id")
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"session/prompt"`)) {
				prompts.Add(1)
			}
		}
		if id == "" || r.Method != http.MethodGet {
			return false
		}
		if r.Header.Get("Acp-Session-Id") == "" && first.CompareAndSwap(nil, id) {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			endStream <- cancel
			s.get(w, r.WithContext(ctx))
			return true
		}
		if id != first.Load() {
			return false
		}
		select {
		case <-dead:
			http.Error(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
		default:
			// The session's stream, until the backend dies.
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			go func() {
				select {
				case <-dead:
				case <-ctx.Done():
				}
				cancel()
			}()
			s.get(w, r.WithContext(ctx))
		}
		return true
	}
	restarted := make(chan acp.RestartEvent, 4)
	c := connect(t, &remote.HTTPTransport{URL: ts.URL}, &acp.ClientOptions{Restart: &acp.RestartPolicy{
		MaxRestarts: 1, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		OnRestart: func(ev acp.RestartEvent) {
			if ev.Phase == acp.RestartRestored || ev.Phase == acp.RestartGaveUp {
				restarted <- ev
			}
		},
	}})
	sess, err := c.NewSession(ctx(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := sess.Prompt(ctx(t), schema.Text("wait"))
	if err != nil {
		t.Fatal(err)
	}
	for u := range turn.Updates() {
		if _, ok := u.(*schema.AgentMessageChunk); ok {
			break
		}
	}
	close(dead)
	if _, err := turn.Wait(); !errors.Is(err, acp.ErrAgentRestarted) || errors.Is(err, acp.ErrDrained) {
		t.Fatalf("the turn the backend died in: %v, want acp.ErrAgentRestarted, not acp.ErrDrained", err)
	}
	select {
	case ev := <-restarted:
		if ev.Phase != acp.RestartRestored {
			t.Fatalf("restart: %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no restart")
	}
	if n := prompts.Load(); n != 1 {
		t.Fatalf("the prompt was posted %d times, want once: the agent had it", n)
	}
}

// A server that trickles: it answers initialize's headers and then sends
// its body a byte at a time, never finishing. RequestTimeout bounds the
// body of initialize too.
func TestHostileHTTPTricklingInitialize(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Acp-Connection-Id", "c1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	_, err := acp.Connect(ctx(t), &remote.HTTPTransport{URL: ts.URL, Options: remote.Options{RequestTimeout: 200 * time.Millisecond}}, nil)
	if err == nil || !strings.Contains(err.Error(), "RequestTimeout") {
		t.Fatalf("Connect: %v, want the timeout named", err)
	}
}
