package acp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
)

// restartRaw connects a supervised client to a raw agent with session s1
// and one ended turn that said said.
func restartRaw(t *testing.T, said ...map[string]any) (*Client, *rawAgent, *Session) {
	t.Helper()
	c, a := connectRaw(t, &ClientOptions{Restart: &RestartPolicy{after: noBackoff}}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	for _, u := range said {
		a.update("s1", u)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	return c, a, s
}

var loadOnlyInit = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}}

func waitReady(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.connFor(ctx); err != nil {
		t.Fatal(err)
	}
}

// A restarted agent that answers another protocol version ends the
// client at once: another attempt would get the same answer.
func TestHostileRestartOtherVersion(t *testing.T) {
	c, a, _ := restartRaw(t)
	a.restart(map[string]any{"protocolVersion": 7, "agentCapabilities": map[string]any{}})
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not end")
	}
	if err := c.Err(); !errors.Is(err, schema.ErrUnsupportedVersion) || !errors.Is(err, ErrConnClosed) {
		t.Errorf("Err = %v", err)
	}
}

// An agent that replays a longer version of a message the client has (by
// messageId) and a rewritten id-less history: the client keeps its own
// copy of what it had, and folds what disagrees as new, once.
func TestHostileRestartReplayDisagrees(t *testing.T) {
	c, a, s := restartRaw(t,
		map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": map[string]any{"type": "text", "text": "short"}},
		chunk("id-less text"))
	a = a.restart(loadOnlyInit)
	m := expectCall(a, "session/load")
	a.update("s1", map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": "go"}})
	a.update("s1", map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": map[string]any{"type": "text", "text": "short and much longer"}})
	a.update("s1", chunk("rewritten"))
	a.reply(m, map[string]any{})
	waitReady(t, c)
	st := s.State()
	if got := s.Turns()[0].State().Messages[0].Text; got != "short" {
		t.Errorf("the client's own message became %q", got)
	}
	if h := st.History; len(h.Messages) != 1 || h.Messages[0].Text != "rewritten" || len(h.UserMessages) != 0 {
		t.Errorf("History %+v", h)
	}
}

// An agent that dies in every restore's replay spends the budget; the
// client ends with ErrTooManyRestarts, and the session counts no restart
// (Restarts counts restores that succeeded, not attempts).
func TestHostileRestartDiesInEveryReplay(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Restart: &RestartPolicy{MaxRestarts: 3, after: noBackoff}}, loadOnlyInit)
	s := newSessionRaw(t, c, a)
	for range 3 {
		a = a.restart(loadOnlyInit)
		expectCall(a, "session/load")
		a.update("s1", chunk("half a replay"))
	}
	a.out.Close()
	a.inR.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not give up")
	}
	if err := c.Err(); !errors.Is(err, ErrTooManyRestarts) || !strings.Contains(err.Error(), "3 restarts") {
		t.Errorf("Err = %v", err)
	}
	// No attempt restored the session: no restart is counted. What the
	// replays brought is folded once.
	if st := s.State(); st.Restarts != 0 || len(st.History.Messages) != 1 {
		t.Errorf("Restarts %d, History %+v", st.Restarts, st.History)
	}
}
