package acp

import (
	"bufio"
	"context"
	"github.com/acpclient/acp/schema"
	"io"
	"strings"
	"sync"
	"testing"
)

// recordingConn is a Conn of the caller's own, over pipes, that records how
// the client ends it.
type recordingConn struct {
	r *io.PipeReader
	w *io.PipeWriter

	mu    sync.Mutex
	calls []string
}

func (c *recordingConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *recordingConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c *recordingConn) record(s string) {
	c.mu.Lock()
	c.calls = append(c.calls, s)
	c.mu.Unlock()
}
func (c *recordingConn) CloseWrite() error { c.record("CloseWrite"); return c.w.Close() }
func (c *recordingConn) Close() error {
	c.record("Close")
	c.r.Close()
	return c.w.Close()
}

type connTransport struct{ conn Conn }

func (t connTransport) Connect(context.Context) (Conn, error) { return t.conn, nil }

// A caller's own Transport carries a whole session: the client frames,
// calls and folds over the Conn it returns, and on Close ends the agent's
// input first (CloseWrite), then the Conn, each once.
func TestCustomTransport(t *testing.T) {
	a, st := newRawAgent(t)
	s := st.(*rawTransport).first
	conn := &recordingConn{r: s.Reader.(*io.PipeReader), w: s.Writer.(*io.PipeWriter)}
	type res struct {
		c   *Client
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Connect(context.Background(), connTransport{conn}, nil)
		ch <- res{c, err}
	}()
	a.reply(a.expect("initialize"), defaultInit)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	c := r.c
	sess := newSessionRaw(t, c, a)
	turn, err := sess.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.update("s1", chunk("hello"))
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	if _, err := turn.Wait(); err != nil || textOf(turn.State()) != "hello" {
		t.Fatalf("turn: %v, %q", err, textOf(turn.State()))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if got := strings.Join(conn.calls, ","); got != "CloseWrite,Close" {
		t.Errorf("the client ended the Conn with %s, want CloseWrite,Close", got)
	}
}

// CommandTransport.Connect hands out the agent's stdio as a plain Conn:
// usable without a Client, and closing it shuts the agent down.
func TestCommandTransportConnect(t *testing.T) {
	conn, err := (&CommandTransport{Command: agentCommand("echo")}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":7`) || !strings.Contains(line, `"protocolVersion":1`) {
		t.Fatalf("answer = %q, %v", line, err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if p := conn.(*link).proc; p.exitError() == nil {
		t.Error("the agent is still running after Close")
	}
}
