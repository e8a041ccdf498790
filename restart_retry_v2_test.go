package acp_test

// v2 prompts a draining server never delivered, sent again after the
// restart (turn_retry.go), and the v2 prompt the agent accepted, which
// never is.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
)

// drainMode is how a drainingConn treats the client's first session/prompt.
type drainMode int

const (
	// refuse answers it CodeNotDelivered in the server's name, then ends
	// the connection drained (a draining gateway's new request).
	refuse drainMode = iota
	// swallow ends the connection drained with it unanswered (its POST
	// answered 404 by a gateway that has just closed the connection).
	swallow
	// unwritten fails its Write before any byte (engine.ErrNotWritten).
	unwritten
	// accept passes it on; the test ends the connection drained (end)
	// once the agent has answered it.
	accept
)

// drainingTransport is an acptest.Transport whose first connection plays
// a draining server (drainMode); the later ones are plain.
type drainingTransport struct {
	*acptest.Transport
	mode  drainMode
	first *drainingConn
}

func (d *drainingTransport) Connect(ctx context.Context) (acp.Conn, error) {
	c, err := d.Transport.Connect(ctx)
	if err != nil || d.Transport.Connects() > 1 {
		return c, err
	}
	d.first = &drainingConn{Conn: c, mode: d.mode, ended: make(chan struct{})}
	return d.first, nil
}

// drainingConn is the first connection of a drainingTransport. What the
// agent wrote before the end is read first, then the server's own answer,
// then the end, acp.ErrDrained: as a drained gateway orders them.
type drainingConn struct {
	acp.Conn
	mode drainMode

	mu     sync.Mutex
	inject []byte // the server's answers, read after the agent's output
	done   bool   // the first prompt was taken
	once   sync.Once
	ended  chan struct{}
}

var errTestDrained = fmt.Errorf("%w: the test's server drained it", acp.ErrDrained)

// end ends the connection drained.
func (d *drainingConn) end() {
	d.once.Do(func() {
		close(d.ended)
		d.Conn.Close() // the blocked Read returns
	})
}

func (d *drainingConn) Write(b []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.mode == accept || !bytes.Contains(b, []byte(`"method":"session/prompt"`)) {
		return d.Conn.Write(b)
	}
	d.done = true
	if d.mode == unwritten {
		return 0, fmt.Errorf("%w: the test's transport took none of it", engine.ErrNotWritten)
	}
	for line := range bytes.Lines(b) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != schema.MethodSessionPrompt {
			if _, err := d.Conn.Write(line); err != nil {
				return 0, err
			}
			continue
		}
		if d.mode == refuse {
			d.inject = fmt.Appendf(d.inject, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"draining: not delivered"}}`+"\n", m.ID, acp.CodeNotDelivered)
		}
	}
	go d.end()
	return len(b), nil
}

func (d *drainingConn) Read(p []byte) (int, error) {
	n, err := d.Conn.Read(p)
	select {
	case <-d.ended:
	default:
		return n, err
	}
	if n > 0 {
		return n, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.inject) > 0 {
		n = copy(p, d.inject)
		d.inject = d.inject[n:]
		return n, nil
	}
	return 0, errTestDrained
}

// v2: a prompt the draining server never delivered — refused
// CodeNotDelivered, or left unanswered by a drained end — is sent again after the restart as the same
// Turn, once: the agent gets it exactly once, and the turn ends with its
// idle and its text. Without supervision it fails with why it was not
// delivered.
func TestRestartRetriesUndeliveredPromptV2(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode drainMode
	}{{"refused", refuse}, {"unanswered", swallow}} {
		for _, supervised := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/supervised=%v", tc.name, supervised), func(t *testing.T) {
				var prompts atomic.Int32
				a := acptest.New(&acptest.Options{Version: 2, OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
					prompts.Add(1)
					return schema.StopReasonEndTurn, tn.Say("answer to " + tn.PromptText())
				}})
				t.Cleanup(func() { a.Close() })
				tr := &drainingTransport{Transport: &acptest.Transport{Agent: a}, mode: tc.mode}
				evs := newRestartEvents()
				opts := &acp.ClientOptions{ProtocolVersion: 2}
				if supervised {
					opts.Restart = &acp.RestartPolicy{MinBackoff: time.Millisecond, OnRestart: evs.on}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				c, err := acp.Connect(ctx, tr, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				turn, err := s.Prompt(ctx, schema.Text("hello"))
				if err == nil {
					_, err = turn.Wait()
				}
				if !supervised {
					if err == nil {
						t.Fatal("unsupervised: the undelivered prompt's turn succeeded")
					}
					if tc.mode == refuse {
						var se *schema.Error
						if !errors.As(err, &se) || se.Code != acp.CodeNotDelivered {
							t.Errorf("unsupervised: %v; want the CodeNotDelivered error", err)
						}
					}
					if n := prompts.Load(); n != 0 {
						t.Errorf("the agent got %d prompts, want 0", n)
					}
					return
				}
				if err != nil {
					t.Fatalf("the retried turn: %v", err)
				}
				if st := turn.State(); st.StopReason != schema.StopReasonEndTurn || len(st.Messages) != 1 || st.Messages[0].Text != "answer to hello" {
					t.Errorf("the retried turn: %+v", st)
				}
				if turn.MessageID() == "" {
					t.Error("the retried turn has no messageId")
				}
				if n := prompts.Load(); n != 1 {
					t.Errorf("the agent got the prompt %d times, want once", n)
				}
				if ev := evs.wait(t, ctx, acp.RestartRestored); len(ev.Restored) != 1 {
					t.Errorf("the restart: %+v", ev)
				}
				if n := tr.Connects(); n != 2 {
					t.Errorf("%d connections, want 2", n)
				}
			})
		}
	}
}

// v2: a prompt the agent accepted (its answer, {messageId}, was read) is
// never sent again, even when its connection then ends drained: the
// agent has it. The turn fails with ErrAgentRestarted, and the session
// goes on after the restart.
func TestRestartV2AcceptedPromptNotRetried(t *testing.T) {
	var prompts atomic.Int32
	// The "wait" turn ends only when the test is over. Ended by its
	// connection's end, the script raced the drain: its idle, written as
	// the connection closed, could still be read before the drained end,
	// and the turn then ended as the agent said (1 run in 20 under -race),
	// not with the connection.
	release := make(chan struct{})
	a := acptest.New(&acptest.Options{Version: 2, OnPrompt: func(tn *acptest.Turn) (schema.StopReason, error) {
		prompts.Add(1)
		if tn.PromptText() == "wait" {
			tn.Say("waiting")
			<-release
			return schema.StopReasonCancelled, nil
		}
		return schema.StopReasonEndTurn, tn.Say("answer to " + tn.PromptText())
	}})
	t.Cleanup(func() { close(release); a.Close() })
	tr := &drainingTransport{Transport: &acptest.Transport{Agent: a}, mode: accept}
	evs := newRestartEvents()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := acp.Connect(ctx, tr, &acp.ClientOptions{ProtocolVersion: 2, Restart: &acp.RestartPolicy{MinBackoff: time.Millisecond, OnRestart: evs.on}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("wait"))
	if err != nil {
		t.Fatal(err)
	}
	for u := range turn.Updates() {
		if m, ok := u.(*schema.AgentMessageChunk); ok && strings.Contains(fmt.Sprint(m.Content), "waiting") {
			break
		}
	}
	if turn.MessageID() == "" {
		t.Fatal("the prompt was not accepted before its first chunk")
	}
	tr.first.end()
	if _, err := turn.Wait(); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatalf("the accepted turn: %v, want ErrAgentRestarted", err)
	}
	evs.wait(t, ctx, acp.RestartRestored)
	next, err := s.Prompt(ctx, schema.Text("again"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := next.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("the next turn: %q, %v", stop, err)
	}
	if n := prompts.Load(); n != 2 {
		t.Errorf("the agent got %d prompts, want 2 (the accepted one once, then the next)", n)
	}
}
