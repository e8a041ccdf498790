package acptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"
)

// lineClient is a test-only ACP client that speaks raw JSON lines.
type lineClient struct {
	t      *testing.T
	w      io.WriteCloser
	lines  chan []byte // raw lines from the agent, line ending included
	nextID int
	junk   []string // non-JSON lines skipped by next
	// onRequest answers agent→client requests met while waiting in call;
	// nil fails the test.
	onRequest func(m wireMsg) (result any, err *Error)
}

// wireMsg is a message read from the agent with its raw bytes.
type wireMsg struct {
	message
	raw []byte
}

// timeout bounds every wait so that a broken agent fails the test instead
// of hanging it; it is not used for synchronisation.
const timeout = 10 * time.Second

func dial(t *testing.T, a *Agent) *lineClient {
	t.Helper()
	fromAgent, toAgent := a.Pipe()
	c := newLineClient(t, fromAgent, toAgent)
	t.Cleanup(func() {
		toAgent.Close()
		a.Close()
		for range c.lines { // the reader ends at EOF
		}
	})
	return c
}

func newLineClient(t *testing.T, r io.Reader, w io.WriteCloser) *lineClient {
	c := &lineClient{t: t, w: w, lines: make(chan []byte, 1024), nextID: 1}
	go func() {
		defer close(c.lines)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *lineClient) sendLine(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, s+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *lineClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendLine(string(b))
}

// rawLine returns the next line exactly as read; ok is false at EOF.
func (c *lineClient) rawLine() (line []byte, ok bool) {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		return l, ok
	case <-time.After(timeout):
		c.t.Fatal("timed out waiting for the agent")
		return nil, false
	}
}

func (c *lineClient) next() wireMsg {
	c.t.Helper()
	for {
		line, ok := c.rawLine()
		if !ok {
			c.t.Fatal("agent closed its stdout")
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			c.junk = append(c.junk, string(line)) // a tolerant client skips junk
			continue
		}
		return wireMsg{m, bytes.TrimRight(line, "\r\n")}
	}
}

// expectEOF asserts that the agent closes its stdout next.
func (c *lineClient) expectEOF() {
	c.t.Helper()
	if line, ok := c.rawLine(); ok {
		c.t.Fatalf("got %q, want EOF", line)
	}
}

// request sends a request and returns its id.
func (c *lineClient) request(method string, params any) json.RawMessage {
	c.t.Helper()
	id := json.RawMessage(strconv.Itoa(c.nextID))
	c.nextID++
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id
}

func (c *lineClient) notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *lineClient) reply(id json.RawMessage, result any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (c *lineClient) replyError(id json.RawMessage, e *Error) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

// await reads until the response to id, returning it and the messages
// before it; agent requests go to onRequest.
func (c *lineClient) await(id json.RawMessage) (resp wireMsg, before []wireMsg) {
	c.t.Helper()
	for {
		m := c.next()
		switch {
		case m.Method == "" && idKey(m.ID) == idKey(id):
			return m, before
		case m.Method != "" && m.ID != nil && c.onRequest != nil:
			res, err := c.onRequest(m)
			if err != nil {
				c.replyError(m.ID, err)
			} else {
				c.reply(m.ID, res)
			}
		}
		before = append(before, m)
	}
}

// call sends a request and waits for a successful result.
func (c *lineClient) call(method string, params any) (result json.RawMessage, before []wireMsg) {
	c.t.Helper()
	resp, before := c.await(c.request(method, params))
	if resp.Error != nil {
		c.t.Fatalf("%s: %v", method, resp.Error)
	}
	return resp.Result, before
}

// callErr sends a request and returns its error reply.
func (c *lineClient) callErr(method string, params any) *Error {
	c.t.Helper()
	resp, _ := c.await(c.request(method, params))
	if resp.Error == nil {
		c.t.Fatalf("%s: got result %s, want an error", method, resp.Result)
	}
	return resp.Error
}

func (c *lineClient) initialize(caps any) json.RawMessage {
	c.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	res, _ := c.call("initialize", map[string]any{
		"protocolVersion": 1, "clientCapabilities": caps,
		"clientInfo": map[string]any{"name": "lineclient", "version": "0"},
	})
	return res
}

func (c *lineClient) newSession() string {
	c.t.Helper()
	res, _ := c.call("session/new", map[string]any{"cwd": "/work", "mcpServers": []any{}})
	var r struct {
		SessionID string `json:"sessionId"`
	}
	mustUnmarshal(c.t, res, &r)
	return r.SessionID
}

func prompt(sessionID, text string) map[string]any {
	return map[string]any{"sessionId": sessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
}

// decode turns JSON into plain Go values for cmp.Diff.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	mustUnmarshal(t, b, &v)
	return v
}

// updates returns the update objects of the session/update notifications
// among msgs.
func updates(t *testing.T, msgs []wireMsg) []any {
	t.Helper()
	var out []any
	for _, m := range msgs {
		if m.Method == "session/update" {
			var p struct {
				Update json.RawMessage `json:"update"`
			}
			mustUnmarshal(t, m.Params, &p)
			out = append(out, decode(t, p.Update))
		}
	}
	return out
}
