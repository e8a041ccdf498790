package acp

// A prompt that never reached the agent (answered with CodeNotDelivered:
// a draining gateway, a connection already closed), sent again on the
// connection a restart brings, as the same Turn. The same for v1 and v2:
// what proves the agent never got a prompt (the refusal, a write refused
// before any byte, a drained connection that left it unanswered) comes
// before the answer, and v2's answer only accepts the prompt, so a v2
// turn whose prompt was answered is never sent again, whatever ends its
// connection.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/schema"
)

// notDeliveredWait bounds how long a turn whose prompt was not delivered
// waits for its connection to end (a draining gateway closes it once its
// other answers are written) before it fails with the answer's error.
const notDeliveredWait = 30 * time.Second

// retryPrompt is the state of a turn held for a retry, guarded by c.mu.
type retryPrompt struct {
	err error // the answer's error, for a retry that cannot be made
}

// holdForRetry takes t out of its session, when the answer to its prompt
// says the agent never got it and a restart can send it again: the
// restart's restore (its replay) must not land in it, nor wait for it.
// It reports whether t is held; runPrompt then sends it again (resume).
func (c *Client) holdForRetry(t *Turn, raw []byte) bool {
	if c.sup == nil {
		return false
	}
	var msg struct {
		Error *schema.Error `json:"error"`
	}
	if json.Unmarshal(raw, &msg) != nil || msg.Error == nil || msg.Error.Code != CodeNotDelivered {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.life.closing || c.life.ended {
		return false
	}
	return c.holdLocked(t, callError(schema.MethodSessionPrompt, msg.Error))
}

// wrote records the outcome of writing t's prompt, and holds t as
// holdForRetry does when the wire refused it before writing any of it
// (engine.ErrNotWritten: an earlier write failed, the connection is
// ending): the agent cannot have seen it. One step under c.mu: the
// connection's end, which leaves a prompt being written to this outcome
// (connEnded, failRunningTurns), must not find it written and unheld.
func (c *Client) wrote(t *Turn, err error) (held bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t.call.writing = false
	if t.call.outcome != nil {
		defer close(t.call.outcome) // after the hold, under c.mu
	}
	if c.sup == nil || !errors.Is(err, engine.ErrNotWritten) || c.life.closing || c.life.ended {
		return false
	}
	c.prompts.forgetLocked(t)
	return c.holdLocked(t, callError(schema.MethodSessionPrompt, err))
}

// holdDrainedLocked is holdForRetry for a prompt left unanswered by a
// drained connection (ErrDrained): the server answered all it received,
// so the agent never got this one. c.mu is held.
func (c *Client) holdDrainedLocked(t *Turn) bool {
	return c.holdLocked(t, callError(schema.MethodSessionPrompt, fmt.Errorf("%w: %w", ErrAgentRestarted, ErrDrained)))
}

// holdRunningLocked holds, when a connection ended drained, the turns
// still running whose prompts were not yet registered (on their way to
// the wire): unanswered, so never delivered. A v2 turn whose prompt was
// answered (accepted) runs on without being registered, and the agent has
// it: it is left to fail with the connection. c.mu is held.
func (c *Client) holdRunningLocked() {
	for _, s := range c.routing.sessions {
		s.mu.Lock()
		t := s.turn
		s.mu.Unlock()
		if t != nil && !t.byAgent && !t.call.answered {
			c.holdDrainedLocked(t)
		}
	}
}

// holdLocked takes t out of its session for a retry that, if it cannot be
// made, fails t with err. c.mu is held.
func (c *Client) holdLocked(t *Turn, err error) bool {
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.life.ended {
		return false
	}
	if s.turn == t {
		s.turn = nil
	}
	c.prompts.forgetLocked(t) // the next connection's ids start again
	t.call.retry = &retryPrompt{err: err}
	t.call.answered = false // the sending again is a call of its own
	t.call.holds++
	return true
}

// resume waits, for the held turn t, until the connection g that refused
// its prompt has ended and a restart has brought the next one, makes t its
// session's turn again and takes the prompt slot for it (runPrompt sends
// it). false: t ended instead (it was cancelled meanwhile, the client
// ended, or g did not end within notDeliveredWait).
func (c *Client) resume(t *Turn, g *agentConn) (*agentConn, bool) {
	c.mu.Lock()
	r := t.call.retry
	t.call.retry = nil
	c.mu.Unlock()
	timer := time.NewTimer(notDeliveredWait)
	defer timer.Stop()
	select {
	case <-g.done:
	case <-t.done:
		return nil, false
	case <-timer.C:
		t.fail(r.err)
		return nil, false
	}
	next, err := c.connFor(context.Background())
	select {
	case <-c.life.done:
		t.fail(callError(schema.MethodSessionPrompt, c.life.endErr))
		return nil, false
	default:
	}
	if err != nil {
		t.fail(r.err)
		return nil, false
	}
	s := t.s
	c.mu.Lock()
	s.mu.Lock()
	switch {
	case t.life.ended:
		s.mu.Unlock()
		c.mu.Unlock()
		return nil, false
	case s.turn != nil:
		s.mu.Unlock()
		c.mu.Unlock()
		t.fail(callError(schema.MethodSessionPrompt, ErrTurnInProgress))
		return nil, false
	}
	s.turn = t
	s.mu.Unlock()
	c.mu.Unlock()
	c.prompts.take()
	c.mu.Lock()
	c.prompts.sendingLocked(t)
	c.mu.Unlock()
	return next, true
}
