package gateway

import (
	"errors"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// When the agent exits, the connection stream ends at once and a session
// stream stays open, silent, until the client drops it — or, for a client
// that does not, sessionStreamHold later: a client that learns the
// connection's end from the connection stream must not see a session's
// stream end first and fail that session's calls for a reason of its own.
func TestSessionStreamHeldAfterAgentExit(t *testing.T) {
	saved := sessionStreamHold
	sessionStreamHold = time.Hour
	t.Cleanup(func() { sessionStreamHold = saved })
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	cl := &client{t: t, url: url}
	cl.initialize()
	conn := cl.open("")
	sess := cl.open("s1")
	d.agent.Kill()
	conn.ended(t)
	select {
	case <-sess.done:
		t.Fatal("the session stream ended with the connection stream")
	default:
	}
	sess.body.Close() // the client drops it: the handler returns
	<-sess.done

	// A client that never drops it: the stream ends after the bound.
	sessionStreamHold = time.Millisecond
	_, url = start(t, d.Dial, nil)
	cl = &client{t: t, url: url}
	cl.initialize()
	conn = cl.open("")
	sess = cl.open("s1")
	d.agent.Kill()
	conn.ended(t)
	sess.ended(t)
}

// The in-flight turn of a remote client over Streamable HTTP whose agent
// dies: its error is the connection's end (ErrAgentRestarted under
// supervision), never a session stream's — repeated, since the two streams
// end on two TCP connections read by two goroutines.
func TestRemoteAgentDiesInTurnRepeated(t *testing.T) {
	d := newPipeDial(t, nil)
	_, url := start(t, d.Dial, nil)
	c, events := supervised(t, remoteProfiles[0].tr(url))
	s, err := c.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		turn, err := s.Prompt(bounded(t), schema.Text("wait"))
		if err != nil {
			t.Fatal(err)
		}
		for u := range turn.Updates() {
			if _, ok := u.(*schema.AgentMessageChunk); ok {
				break
			}
		}
		d.agent.Kill()
		if _, err := turn.Wait(); !errors.Is(err, acp.ErrAgentRestarted) || errors.Is(err, acp.ErrConnClosed) {
			t.Fatalf("round %d: the interrupted turn: %v, want ErrAgentRestarted", i, err)
		}
		restored(t, events, s.ID())
	}
	echo(t, s, "still here")
}
