package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// How a turn ends, whatever the protocol version: cancelled by the client
// (within a grace), failed locally, or answered by the agent; endTurn
// records the outcome once and hands the turn to the session's retention.
// What the outcome is, is turnLife's (turn_life.go).

// Cancel cancels the turn the way the spec demands, at once:
//  1. session/cancel is sent ahead of any queued traffic;
//  2. the turn's unfinished tool calls are marked cancelled (a local status,
//     ToolCallStatusCancelled), and so is every tool call the agent announces
//     or reopens afterwards with an unfinished status. The mark holds
//     against the agent's later pending or in_progress, and yields to its
//     later completed or failed, which say what the tool really did: an
//     agent that reports failed for the tools it stopped leaves no
//     cancelled status in the final state (see ToolCallStatusCancelled for
//     what a renderer should show);
//  3. every pending permission request of the session is answered
//     {"outcome":"cancelled"} and its handler's context cancelled (a later
//     answer from the handler is dropped);
//  4. the turn keeps folding what the agent still sends until the agent
//     answers session/prompt; Wait then reports StopReasonCancelled, whatever
//     the agent answered (its answer is kept in State);
//  5. if the agent does not answer within ClientOptions.CancelGrace, the turn
//     ends locally with an error wrapping ErrCancelGrace, and a late answer is
//     ignored.
//
// Cancel returns without waiting. Cancelling an ended or already cancelled
// turn does nothing, and so does cancelling a child session's turn when the
// child does not grant cancel ([Session.Cancel] says so with an error).
func (t *Turn) Cancel() { t.s.cancelTurn(t) }

// cancelTurn is Turn.Cancel, the session's to do: the cancel is
// session/cancel, and it answers the session's permission requests.
func (s *Session) cancelTurn(t *Turn) {
	c := s.c
	if s.checkCancel() != nil {
		return
	}
	s.mu.Lock()
	if !t.life.cancel() {
		s.mu.Unlock()
		return
	}
	t.logLocked(entCancel, nil, nil)
	t.markAllLocked()
	perms := make([]*inbound, 0, len(s.perms))
	for _, in := range s.perms {
		perms = append(perms, in)
	}
	grace := c.opts.CancelGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	t.life.grace = time.AfterFunc(grace, t.expire)
	s.notifyLocked()
	s.mu.Unlock()

	// Observed in the turn's context: its trace reaches the agent too.
	octx := t.octx
	if octx == nil { // a turn the agent started, or no Observer
		octx = context.Background()
	}
	params, end := c.observeCall(octx, schema.MethodSessionCancel, &schema.CancelNotification{SessionID: s.id}, true)
	frame, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  schema.MethodSessionCancel,
		"params":  params,
	})
	err := c.conn.Load().wire.SendRaw(frame, true)
	if end != nil {
		end(err)
	}
	for _, in := range perms {
		in.cancel(errTurnCancelled)
	}
}

// errTurnCancelled is the cancellation cause of a permission handler whose
// turn was cancelled: its request is answered with the cancelled outcome.
var errTurnCancelled = errors.New("acp: the turn was cancelled")

// expire ends a cancelled turn whose agent did not answer in time.
func (t *Turn) expire() {
	c := t.s.c
	c.mu.Lock()
	c.prompts.expireLocked(t)
	c.mu.Unlock()
	method := schema.MethodSessionPrompt
	if t.byAgent {
		method = schema.MethodSessionCancel // a child's turn: no prompt was sent
	}
	t.s.endTurn(t, func(l *turnLife) { l.expired(callError(method, ErrCancelGrace)) })
}

// fail ends the turn with err (connection lost, write failed, line too long).
func (t *Turn) fail(err error) {
	t.s.endTurn(t, func(l *turnLife) { l.failed(err) })
}

// endTurn ends t, one of the session's turns, once; set runs under s.mu
// to record the outcome. From here on, updates for the session are kept
// outside any turn. It is the session's: the turn's end is the session's
// to retain, to report and, for a closed session, to unregister.
func (s *Session) endTurn(t *Turn, set func(*turnLife)) {
	s.mu.Lock()
	if t.life.ended {
		s.mu.Unlock()
		return
	}
	t.life.ended = true
	set(&t.life)
	t.logLocked(entEnd, nil, nil)
	if s.turn == t {
		s.turn = nil
	}
	if t.life.grace != nil {
		t.life.grace.Stop()
	}
	released := s.retainLocked(t)
	endedKept := s.retained.bytes
	stop := t.life.stopCtx
	unregister := s.closed && s.turn == nil
	dropped, bytes := t.budget.dropped, t.budget.charged
	out := t.life.out
	s.notifyLocked()
	close(t.done)
	s.mu.Unlock()
	t.obs.end(out)
	if stop != nil {
		stop()
	}
	if dropped > 0 {
		s.c.diagIn(s.id, DiagLimitExceeded, fmt.Sprintf("a turn of session %s ended; %d of its updates and permission requests were not folded (it sent %d bytes, over twice Limits.MaxTurnBytes)", agenttext.Item(s.id), dropped, bytes), nil)
	}
	if released > 0 {
		s.c.diagIn(s.id, DiagLimitExceeded, fmt.Sprintf("released the %d oldest ended turns of session %s: its ended turns kept more than Limits.MaxEndedTurnBytes (%d); they keep %d bytes now", released, agenttext.Item(s.id), s.c.opts.Limits.MaxEndedTurnBytes, endedKept), nil)
	}
	if unregister {
		s.c.unregister(s)
	}
}
