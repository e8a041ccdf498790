package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"io"
	"strings"
	"testing"
	"time"
)

// rawAgent is the agent side of an in-memory connection, driven line by line
// by a test: it is how the framing tests put exact bytes on the wire.
type rawAgent struct {
	t    *testing.T
	out  *io.PipeWriter // agent → client
	in   *bufio.Reader  // client → agent
	inR  *io.PipeReader
	msgs chan rawMsg
	rt   *rawTransport
}

type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *schema.Error   `json:"error"`
	line   string
}

func newRawAgent(t *testing.T) (*rawAgent, Transport) {
	t.Helper()
	a, st := rawPipes(t)
	rt := &rawTransport{t: t, first: st, next: make(chan *rawAgent, 1)}
	a.rt = rt
	return a, rt
}

// rawPipes makes a raw agent and the client's transport to it.
func rawPipes(t *testing.T) (*rawAgent, *StreamTransport) {
	cr, aw := io.Pipe() // client reads what the agent writes
	ar, cw := io.Pipe() // agent reads what the client writes
	a := &rawAgent{t: t, out: aw, in: bufio.NewReader(ar), inR: ar, msgs: make(chan rawMsg, 1000)}
	go func() {
		defer close(a.msgs)
		for {
			line, err := a.in.ReadString('\n')
			if err != nil {
				return
			}
			var m rawMsg
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("client sent a line that is not JSON: %q", line)
				continue
			}
			m.line = strings.TrimSpace(line)
			a.msgs <- m
		}
	}()
	t.Cleanup(func() { aw.Close(); ar.Close() })
	return a, &StreamTransport{Reader: cr, Writer: cw}
}

// rawTransport connects to a raw agent first, and to a new one at every
// later Connect (a restart, ClientOptions.Restart), handed to the test on
// next.
type rawTransport struct {
	t     *testing.T
	first *StreamTransport
	used  bool // only the client's restart goroutine, after Connect
	next  chan *rawAgent
}

func (rt *rawTransport) Connect(ctx context.Context) (Conn, error) { return rt.open(ctx, linkHooks{}) }

func (rt *rawTransport) open(ctx context.Context, h linkHooks) (*link, error) {
	if !rt.used {
		rt.used = true
		return rt.first.open(ctx, h)
	}
	a, st := rawPipes(rt.t)
	a.rt = rt
	select {
	case rt.next <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return st.open(ctx, h)
}

// restart ends the agent's connection, as the death of its process would,
// and returns the agent of the client's next connection once it has
// answered initialize with initResult (defaultInit when nil).
func (a *rawAgent) restart(initResult any) *rawAgent {
	a.t.Helper()
	a.out.Close()
	a.inR.Close()
	var b *rawAgent
	select {
	case b = <-a.rt.next:
	case <-time.After(10 * time.Second):
		a.t.Fatal("the client did not reconnect")
	}
	if initResult == nil {
		initResult = defaultInit
	}
	b.reply(b.expect("initialize"), initResult)
	return b
}

// write puts raw bytes on the client's input.
func (a *rawAgent) write(s string) {
	a.t.Helper()
	if _, err := io.WriteString(a.out, s); err != nil {
		a.t.Fatalf("agent write: %v", err)
	}
}

// send writes one JSON line.
func (a *rawAgent) send(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	a.write(string(b) + "\n")
}

// next returns the client's next message.
func (a *rawAgent) next() rawMsg {
	a.t.Helper()
	select {
	case m, ok := <-a.msgs:
		if !ok {
			a.t.Fatal("client closed its output")
		}
		return m
	case <-time.After(10 * time.Second):
		a.t.Fatal("timed out waiting for the client")
	}
	return rawMsg{}
}

// expect returns the client's next message, which must call method.
func (a *rawAgent) expect(method string) rawMsg {
	a.t.Helper()
	m := a.next()
	if m.Method != method {
		a.t.Fatalf("client sent %q, want %q: %s", m.Method, method, m.line)
	}
	return m
}

func (a *rawAgent) reply(m rawMsg, result any) {
	a.t.Helper()
	a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

func (a *rawAgent) replyError(m rawMsg, code int64, msg string, data any) {
	a.t.Helper()
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": e})
}

func (a *rawAgent) update(sessionID string, update any) {
	a.t.Helper()
	a.send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": sessionID, "update": update}})
}

// defaultInit is an initialize result advertising everything.
var defaultInit = map[string]any{
	"protocolVersion": 1,
	"agentCapabilities": map[string]any{
		"loadSession":         true,
		"promptCapabilities":  map[string]any{"image": true, "audio": true, "embeddedContext": true},
		"sessionCapabilities": map[string]any{"list": map[string]any{}, "resume": map[string]any{}, "close": map[string]any{}, "delete": map[string]any{}},
		"auth":                map[string]any{"logout": map[string]any{}},
	},
	"agentInfo": map[string]any{"name": "raw", "version": "1"},
}

// connectRaw connects a client to a raw agent that answers initialize with
// initResult (defaultInit when nil).
func connectRaw(t *testing.T, opts *ClientOptions, initResult any) (*Client, *rawAgent) {
	t.Helper()
	a, tr := newRawAgent(t)
	if initResult == nil {
		initResult = defaultInit
	}
	type res struct {
		c   *Client
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Connect(context.Background(), tr, opts)
		ch <- res{c, err}
	}()
	a.reply(a.expect("initialize"), initResult)
	r := <-ch
	if r.err != nil {
		t.Fatalf("Connect: %v", r.err)
	}
	t.Cleanup(func() { r.c.Close() })
	return r.c, a
}

// newSessionRaw creates a session "s1" on a raw agent.
func newSessionRaw(t *testing.T, c *Client, a *rawAgent) *Session {
	t.Helper()
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		if err != nil {
			t.Errorf("NewSession: %v", err)
		}
		ch <- s
	}()
	a.reply(a.expect("session/new"), map[string]any{"sessionId": "s1"})
	s := <-ch
	if s == nil {
		t.FailNow()
	}
	return s
}

func chunk(text string) map[string]any {
	return map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}
}

// noBackoff is a RestartPolicy timer that has always fired: tests restart
// as often as they like without waiting.
func noBackoff(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}
