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
