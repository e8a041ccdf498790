package remote_test

// The hostile Streamable HTTP suite, part two: a raw server (rawServer)
// that speaks just enough of the RFD to get a client connected and then
// misbehaves, and the bounds the transport keeps against it — streams per
// connection, bytes held across streams, bodies that never arrive. Every
// test counts goroutines and TCP connections before and after (goleak in
// main_test.go checks the rest) and logs its figure under -v.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/remote"
)

// rawServer answers initialize (200, Acp-Connection-Id "c1"), serves the
// connection's SSE stream from events, holds every session stream open
// (counting them) and answers every other POST 202 unless onPost handles
// it.
type rawServer struct {
	*httptest.Server
	events       chan string // written as they come on the connection's stream
	sessionGETs  atomic.Int32
	tcpConns     atomic.Int32
	onPost       func(w http.ResponseWriter, r *http.Request, body []byte) bool
	onSessionGET func(w http.ResponseWriter, r *http.Request) bool
}

func newRawServer(t *testing.T) *rawServer {
	t.Helper()
	s := &rawServer{events: make(chan string, 1024)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.tcpConns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

func (s *rawServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		if s.onPost != nil && s.onPost(w, r, body) {
			return
		}
		var e env
		_ = json.Unmarshal(body, &e)
		if e.Method == "initialize" {
			w.Header().Set("Acp-Connection-Id", "c1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`, e.ID)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	case http.MethodGet:
		if r.Header.Get("Acp-Session-Id") != "" {
			s.sessionGETs.Add(1)
			if s.onSessionGET != nil && s.onSessionGET(w, r) {
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-s.events:
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusAccepted)
	}
}

// diagCounter collects the client's diagnostics of one kind.
type diagCounter struct {
	kind acp.DiagnosticKind
	n    atomic.Int32
	mu   sync.Mutex
	want int32
	done chan struct{}
}

func newDiagCounter(kind acp.DiagnosticKind, want int32) *diagCounter {
	return &diagCounter{kind: kind, want: want, done: make(chan struct{})}
}

func (d *diagCounter) on(dg acp.Diagnostic) {
	if dg.Kind != d.kind {
		return
	}
	if d.n.Add(1) == d.want {
		close(d.done)
	}
}

func (d *diagCounter) wait(t *testing.T) {
	t.Helper()
	select {
	case <-d.done:
	case <-ctx(t).Done():
		t.Fatalf("got %d %s diagnostics, want %d", d.n.Load(), d.kind, d.want)
	}
}

// Row 1: answers to ids the client never sent, each naming a new session,
// open no stream; they reach the client, which drops each with a
// late_response diagnostic.
func TestHostileHTTPUnsolicitedAnswers(t *testing.T) {
	const n = 400
	s := newRawServer(t)
	diags := newDiagCounter(acp.DiagLateResponse, n)
	before := runtime.NumGoroutine()
	c := connect(t, &remote.HTTPTransport{URL: s.URL}, &acp.ClientOptions{OnDiagnostic: diags.on})
	for i := range n {
		s.events <- fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"sessionId\":\"evil-%d\"}}\n\n", 100000+i, i)
	}
	diags.wait(t)
	// Every stream the transport opens starts its reader goroutine before
	// the message that named it is passed on, so the count is final here.
	grew := runtime.NumGoroutine() - before
	t.Logf("%d unsolicited answers: %d session GETs, %d TCP connections, %+d goroutines", n, s.sessionGETs.Load(), s.tcpConns.Load(), grew)
	if grew > 20 {
		t.Errorf("%d unsolicited answers grew the goroutines by %d", n, grew)
	}
	if got := s.sessionGETs.Load(); got != 0 {
		t.Errorf("%d session streams opened for answers nobody asked for", got)
	}
	c.Close()
}

// Row 1: a connection opens at most Options.MaxSessions session streams.
// A session over it is known to the client, but its messages fail with
// the limit named, and the connection and the other sessions live on.
func TestHostileHTTPMaxSessions(t *testing.T) {
	_, ts := serve(t, nil)
	c := connect(t, &remote.HTTPTransport{URL: ts.URL, Options: remote.Options{MaxSessions: 2}}, nil)
	var sess []*acp.Session
	for range 3 {
		s, err := c.NewSession(ctx(t), &acp.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		sess = append(sess, s)
	}
	prompt := func(s *acp.Session) error {
		turn, err := s.Prompt(ctx(t), acp.Text("hi"))
		if err == nil {
			_, err = turn.Wait()
		}
		return err
	}
	if err := prompt(sess[2]); err == nil || !strings.Contains(err.Error(), "MaxSessions") {
		t.Fatalf("the third session's prompt: %v, want the limit named", err)
	}
	for _, s := range sess[:2] {
		if err := prompt(s); err != nil {
			t.Fatalf("a session under the limit: %v", err)
		}
	}
	select {
	case <-c.Done():
		t.Fatalf("the connection ended: %v", c.Err())
	default:
	}
}

// Session ids the server chooses travel in a header: one that cannot (a
// line break, a control byte, over 1024 bytes) is refused for that
// session alone, before any request carries it.
func TestHostileHTTPBogusSessionID(t *testing.T) {
	for _, id := range []string{"a\\nb", "a\\u0000b", "a\\u007fb", strings.Repeat("x", 1025)} {
		s := newRawServer(t)
		s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			var e env
			_ = json.Unmarshal(body, &e)
			if e.Method != "session/new" {
				return false
			}
			w.WriteHeader(http.StatusAccepted)
			s.events <- fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"sessionId\":\"%s\"}}\n\n", e.ID, id)
			return true
		}
		c := connect(t, &remote.HTTPTransport{URL: s.URL}, nil)
		sess, err := c.NewSession(ctx(t), &acp.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := sess.Prompt(ctx(t), acp.Text("hi"))
		if err == nil {
			_, err = turn.Wait()
		}
		if err == nil || !strings.Contains(err.Error(), "session id") {
			t.Fatalf("%.20q: prompt: %v, want the session id refused", id, err)
		}
		select {
		case <-c.Done():
			t.Fatalf("%.20q: the connection ended: %v", id, c.Err())
		default:
		}
		if s.sessionGETs.Load() != 0 {
			t.Fatalf("%.20q: a stream was opened for it", id)
		}
		c.Close()
	}
}

// holdBody answers with status and the headers of a body that never
// comes: Content-Length promises bytes the handler does not send until the
// client goes away.
func holdBody(w http.ResponseWriter, r *http.Request, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "100")
	w.WriteHeader(status)
	io.WriteString(w, "{")
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// writeReturns writes line on conn and fails the test if Write has not
// returned by the test context's end (a guard, not a timing assert: the
// bound under test is far shorter).
func writeReturns(t *testing.T, conn acp.Conn, line string) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Write([]byte(line + "\n"))
		errc <- err
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx(t).Done():
		conn.Close()
		<-errc
		t.Fatalf("Write of %.40s did not return", line)
		return nil
	}
}

// Row 7d: a response whose body never arrives — a 202 to a POST, a 409
// refusing a session's stream — is bounded by RequestTimeout like its
// headers; Write returns.
func TestHostileHTTPBodyNeverArrives(t *testing.T) {
	s := newRawServer(t)
	s.onPost = func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Header.Get("Acp-Connection-Id") == "" {
			return false
		}
		holdBody(w, r, http.StatusAccepted)
		return true
	}
	s.onSessionGET = func(w http.ResponseWriter, r *http.Request) bool {
		holdBody(w, r, http.StatusConflict)
		return true
	}
	before := runtime.NumGoroutine()
	conn, err := (&remote.HTTPTransport{URL: s.URL, Options: remote.Options{RequestTimeout: 100 * time.Millisecond}}).Connect(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := writeReturns(t, conn, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`); err != nil {
		t.Fatal(err)
	}
	// A 2xx is the server's acceptance: the body it never sends is dropped
	// and the message counts as sent.
	if err := writeReturns(t, conn, `{"jsonrpc":"2.0","method":"_x/note","params":{}}`); err != nil {
		t.Fatalf("a notification answered 202 without its body: %v", err)
	}
	// The session's stream is refused 409 and its body never comes: the
	// request for it fails alone.
	if err := writeReturns(t, conn, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`); err != nil {
		t.Fatalf("a prompt whose session stream was refused without a body: %v", err)
	}
	buf := make([]byte, 4096)
	var got []byte
	for !strings.Contains(string(got), `"id":1`) {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("Read: %v (read %s)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if !strings.Contains(string(got), "409") {
		t.Fatalf("the prompt's answer %s does not name the 409", got)
	}
	conn.Close()
	t.Logf("2 bodies held by the server: Write returned each time; %d TCP connections, %+d goroutines before Close", s.tcpConns.Load(), runtime.NumGoroutine()-before)
}
