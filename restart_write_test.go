package acp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// brokenWrites is a transport whose first connection stops taking writes
// when broken is set, while its agent lives on and its output stays open:
// the direction to the agent fails first, and nothing tells the reader.
type brokenWrites struct {
	*acptest.Transport
	broken atomic.Bool
}

func (t *brokenWrites) Connect(ctx context.Context) (acp.Conn, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil || t.Transport.Connects() > 1 {
		return c, err
	}
	return &failingWriter{Conn: c, broken: &t.broken}, nil
}

type failingWriter struct {
	acp.Conn
	broken *atomic.Bool
}

var errPipeGone = errors.New("the pipe to the agent is gone")

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.broken.Load() {
		return 0, errPipeGone
	}
	return w.Conn.Write(b)
}

// A write to the agent that fails closes the link, so that the reader ends
// the connection (with the write's error as its reason: the reader read no
// end of its own):
// under supervision the prompt whose frame failed fails with
// ErrAgentRestarted (not a bare "writing to the agent"), the client
// restarts, and the session goes on. Before, the connection stayed half
// alive (the reader never saw an end) and the prompt failed with the
// write error, a dead end for the caller.
func TestRestartOnWriteFailure(t *testing.T) {
	ctx := context.Background()
	a := acptest.New(&acptest.Options{}) // every turn ends at once, end_turn
	defer a.Close()
	tr := &brokenWrites{Transport: &acptest.Transport{Agent: a}}
	c, err := acp.Connect(ctx, tr, &acp.ClientOptions{Restart: &acp.RestartPolicy{MinBackoff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tr.broken.Store(true)
	turn, err := s.Prompt(ctx, schema.Text("first"))
	if err == nil {
		_, err = turn.Wait()
	}
	if !errors.Is(err, acp.ErrAgentRestarted) || !errors.Is(err, errPipeGone) {
		t.Fatalf("the prompt whose write failed: %v; want ErrAgentRestarted wrapping the write's error", err)
	}
	turn, err = s.Prompt(ctx, schema.Text("second"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("after the restart: %q, %v", stop, err)
	}
	if n := tr.Transport.Connects(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}
