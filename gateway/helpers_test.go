package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// scriptOptions is the test agent: its prompts pick what it does.
//
//	permission  asks permission, then says "outcome:<optionId>" or "outcome:cancelled"
//	wait        waits for session/cancel and ends "cancelled"
//	flood N     sends N chunks of 1 KiB
//	chunks N    sends N small chunks ("0", "1", ...)
//	big N       sends one chunk of N bytes
//	anything    says "echo:<prompt>"
func scriptOptions() *acptest.Options {
	return &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		text := t.PromptText()
		word, arg, _ := strings.Cut(text, " ")
		switch word {
		case "permission":
			out, err := t.RequestPermission(acptest.ToolCallSpec{ID: "tc-1", Title: "Edit?"}, []schema.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
				{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
			})
			if err != nil {
				return "", err
			}
			choice, cancelled, _ := acptest.ParseOutcome(out)
			if cancelled {
				choice = "cancelled"
			}
			t.Say("outcome:" + choice)
		case "wait":
			t.Say("waiting")
			select {
			case <-t.Cancelled():
			case <-t.Context().Done():
			}
			return "", nil
		case "flood":
			n, _ := strconv.Atoi(arg)
			chunk := strings.Repeat("x", 1024)
			for range n {
				if err := t.Say(chunk); err != nil {
					return "", err
				}
			}
		case "chunks":
			n, _ := strconv.Atoi(arg)
			for i := range n {
				if err := t.Say(strconv.Itoa(i)); err != nil {
					return "", err
				}
			}
		case "big":
			n, _ := strconv.Atoi(arg)
			t.Say(strings.Repeat("y", n))
		default:
			t.Say("echo:" + text)
		}
		return "", nil
	}}
}

// pipeConn is an in-process agent connection.
type pipeConn struct {
	io.ReadCloser                // from the agent
	w             io.WriteCloser // to the agent
}

func (p pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeConn) Close() error {
	p.w.Close()
	return p.ReadCloser.Close()
}

// pipeDial serves every connection from one in-process agent (so sessions
// outlive connections, as a real agent's on-disk state), counting dials.
type pipeDial struct {
	agent *acptest.Agent
	mu    sync.Mutex
	n     int
}

func newPipeDial(t testing.TB, opts *acptest.Options) *pipeDial {
	if opts == nil {
		opts = scriptOptions()
	}
	d := &pipeDial{agent: acptest.New(opts)}
	t.Cleanup(func() { d.agent.Close() })
	return d
}

func (d *pipeDial) Dial(ctx context.Context) (acp.Conn, error) {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
	r, w := d.agent.Pipe()
	return pipeConn{r, w}, nil
}

// start serves a gateway on an httptest server; cleanup shuts it down.
func start(t testing.TB, dial DialFunc, opts *Options) (*Gateway, string) {
	t.Helper()
	g := New(dial, opts)
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
	})
	return g, srv.URL
}

// client is a hand-written Streamable HTTP client: just enough to drive
// the gateway's routing from the tests.
type client struct {
	t      testing.TB
	url    string
	conn   string
	header http.Header
	hc     *http.Client // nil: http.DefaultClient
	h2     bool         // hc speaks HTTP/2 only (an http.ClientConn)
}

func (c *client) httpClient() *http.Client {
	if c.hc != nil {
		return c.hc
	}
	return http.DefaultClient
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(method, session, body string, extra ...string) reply {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.conn != "" {
		req.Header.Set(HeaderConnectionID, c.conn)
	}
	if session != "" {
		req.Header.Set(HeaderSessionID, session)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if resp.ProtoMajor != c.protoMajor() {
		c.t.Fatalf("%s over %s", method, resp.Proto)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func (c *client) post(session, body string) reply { c.t.Helper(); return c.do("POST", session, body) }

// initialize posts initialize and keeps the connection id.
func (c *client) initialize() reply {
	c.t.Helper()
	r := c.post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if r.status != 200 {
		c.t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	c.conn = r.header.Get(HeaderConnectionID)
	return r
}

// sse is an open SSE stream whose events arrive on ch.
type sse struct {
	status int
	body   io.ReadCloser
	ch     chan map[string]any
	done   chan struct{}
}

func (c *client) open(session string) *sse {
	c.t.Helper()
	s := c.openStatus(session)
	if s.status != 200 {
		c.t.Fatalf("GET stream %q: %d", session, s.status)
	}
	return s
}

func (c *client) openStatus(session string) *sse {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(HeaderConnectionID, c.conn)
	if session != "" {
		req.Header.Set(HeaderSessionID, session)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.ProtoMajor != c.protoMajor() {
		c.t.Fatalf("GET over %s", resp.Proto)
	}
	s := &sse{status: resp.StatusCode, body: resp.Body, ch: make(chan map[string]any, 4096), done: make(chan struct{})}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		close(s.done)
		close(s.ch)
		return s
	}
	go func() {
		defer close(s.done)
		defer close(s.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			line := sc.Bytes()
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				var m map[string]any
				if json.Unmarshal(data, &m) == nil {
					s.ch <- m
				}
			}
		}
	}()
	c.t.Cleanup(func() { s.body.Close(); <-s.done })
	return s
}

// next returns the next event; it fails the test if the stream ends.
func (s *sse) next(t testing.TB) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.ch:
		if !ok {
			t.Fatal("the SSE stream ended")
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no SSE event in 20s")
	}
	return nil
}

// until returns the first event for which f is true.
func (s *sse) until(t testing.TB, f func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		if m := s.next(t); f(m) {
			return m
		}
	}
}

// ended waits for the stream to end.
func (s *sse) ended(t testing.TB) {
	t.Helper()
	for {
		select {
		case _, ok := <-s.ch:
			if !ok {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the SSE stream did not end")
		}
	}
}

func isResponse(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool {
		v, ok := m["id"].(float64)
		_, hasMethod := m["method"]
		return ok && v == id && !hasMethod
	}
}

func isMethod(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == method }
}

// chunkText is the text of an agent_message_chunk notification, "" otherwise.
func chunkText(m map[string]any) string {
	p, _ := m["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	if u["sessionUpdate"] != "agent_message_chunk" {
		return ""
	}
	c, _ := u["content"].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

func result(m map[string]any) map[string]any {
	r, _ := m["result"].(map[string]any)
	return r
}

func newSession(t testing.TB, c *client, conn *sse, id int) string {
	t.Helper()
	r := c.post("", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`, id))
	if r.status != 202 {
		t.Fatalf("session/new: %d %s", r.status, r.body)
	}
	m := conn.until(t, isResponse(float64(id)))
	sid, _ := result(m)["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new answered %v", m)
	}
	return sid
}

func prompt(id int, session, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, id, session, text)
}

// waitFor polls cond (gateway state that has no event to wait on) for up
// to 20s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20s")
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *client) protoMajor() int {
	if c.h2 {
		return 2
	}
	if c.hc != nil {
		if tr, ok := c.hc.Transport.(*http.Transport); ok && tr.Protocols != nil && !tr.Protocols.HTTP1() {
			return 2
		}
	}
	return 1
}
