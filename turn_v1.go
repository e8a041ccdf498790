package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/schema"
	"github.com/creachadair/jrpc2"
)

// The v1 lifecycle of a turn: it starts when session/prompt is on the
// wire, with the request id jrpc2 gave it (onCallSent), and ends at the
// agent's answer to that request, read in wire order on the reader
// goroutine (onResponse): every update written before the answer is the
// turn's, every one after it is the session's. v2 ends a turn at the
// agent's idle state_update instead, the answer to session/prompt only
// accepting it; both end through Session.endTurn.

// startPrompt sends the session/prompt request of t, the session's
// running turn, and returns t once the request is on the wire (see
// Session.Prompt). The request is sent with octx, ctx as the Observer
// returned it.
func (c *Client) startPrompt(ctx, octx context.Context, t *Turn, req *schema.PromptRequest) (*Turn, error) {
	s := t.s
	c.mu.Lock()
	if c.life.ended {
		c.mu.Unlock()
		<-c.life.done
		t.fail(callError(schema.MethodSessionPrompt, c.life.endErr))
		return nil, callError(schema.MethodSessionPrompt, c.life.endErr)
	}
	c.prompts.calls.Add(1)
	g := c.conn.Load()
	c.mu.Unlock()
	// Observed before the prompt slot is taken: the observer's work is
	// not part of the few microseconds the slot is held.
	params, end := c.observeCall(octx, schema.MethodSessionPrompt, req, false)
	// jrpc2 picks the request id when it sends the frame; the wire's hook
	// (onCallSent) learns it there and gives it to the prompt being sent.
	// One prompt at a time passes this point, for the few microseconds
	// jrpc2 takes to encode and queue the frame, so the id always reaches
	// its own turn.
	c.prompts.take()
	c.mu.Lock()
	c.prompts.sendingLocked(t)
	c.mu.Unlock()
	go c.runPrompt(g, t, params, end)

	var err error
	select {
	case err = <-t.call.sent:
	case <-t.done:
		if t.RequestID() == "" {
			return nil, t.Err() // never handed to the wire (the connection ended)
		}
		// The answer can end the turn before the writer reports the write.
		err = <-t.call.sent
	case <-ctx.Done():
		// The frame may still go out; cancelling covers both cases.
		t.Cancel()
		return t, nil
	}
	if err != nil {
		err = c.mapSendErr(g, err)
		// The write failed, and then the connection's end proved the
		// agent never got the prompt (a drained end held it): it goes
		// out again after the restart, and the turn is the caller's.
		c.mu.Lock()
		held := t.call.holds > 0
		c.mu.Unlock()
		if !held {
			t.fail(callError(schema.MethodSessionPrompt, err))
			return nil, t.Err()
		}
	}
	stop := context.AfterFunc(ctx, t.Cancel)
	s.mu.Lock()
	if t.life.ended {
		stop()
	} else {
		t.life.stopCtx = stop
	}
	s.mu.Unlock()
	return t, nil
}

// runPrompt is the session/prompt call: an ordinary jrpc2 call, whose
// answer the reader also reads on its way to jrpc2 to end the turn in wire
// order (onResponse). What jrpc2 then delivers here only matters when the
// agent never answered: jrpc2 failed the call because the connection ended.
func (c *Client) runPrompt(g *agentConn, t *Turn, params any, end func(error)) {
	defer c.prompts.calls.Done()
	if end != nil {
		defer func() { end(t.Err()) }()
	}
	// The call is not tied to the Prompt context: ending a turn early is
	// session/cancel (see Turn.Cancel), never an abandoned call.
	for {
		rsps, err := g.rpc.Batch(g.ctx, []jrpc2.Spec{{Method: schema.MethodSessionPrompt, Params: params}})
		if err != nil {
			c.mu.Lock()
			neverSent := c.prompts.sending == t
			c.prompts.unsentLocked(t) // if it never reached the wire
			outcome := t.call.outcome
			c.mu.Unlock()
			if !neverSent && outcome != nil {
				// jrpc2 can fail the call before the wire reports its
				// write, whose outcome decides whether it is held.
				select {
				case <-outcome:
				case <-t.done:
				}
			}
			if neverSent && c.sup != nil {
				// jrpc2 refused the call: the connection has ended, and a
				// restart follows, after which the prompt goes out.
				<-g.done
				c.mu.Lock()
				if t.call.retry == nil && !c.life.closing && !c.life.ended {
					c.holdLocked(t, callError(schema.MethodSessionPrompt, c.mapSendErr(g, err)))
				}
				c.mu.Unlock()
			}
			c.mu.Lock()
			retry := t.call.retry != nil
			c.mu.Unlock()
			if retry { // refused unwritten (wrote): again after the restart
				var ok bool
				if g, ok = c.resume(t, g); !ok {
					return
				}
				continue
			}
			t.fail(callError(schema.MethodSessionPrompt, c.mapSendErr(g, err)))
			return
		}
		answered := g.wire.Settle(rsps[0].ID()).Answered
		c.mu.Lock()
		if !answered {
			c.mu.Unlock()
			<-g.done // connEnded has held t for a retry, or not
			c.mu.Lock()
			if t.call.retry == nil && errors.Is(g.endErr, ErrDrained) && c.sup != nil && !c.life.closing && !c.life.ended {
				// Sent as the connection ended: the server answered all
				// it received, so it never got this one.
				c.holdDrainedLocked(t)
			}
		}
		retry := t.call.retry != nil
		c.mu.Unlock()
		if !answered && !retry {
			t.fail(callError(schema.MethodSessionPrompt, g.endErr))
			return
		}
		if !retry {
			return // the reader ended the turn
		}
		// Not delivered (holdForRetry): again on the next connection.
		var ok bool
		if g, ok = c.resume(t, g); !ok {
			return
		}
	}
}

// onCallSent is the wire's hook for every call jrpc2 sends, called before
// the frame can reach the agent. A prompt's turn learns its request id here
// and is registered under it, so its response always finds it.
func (c *Client) onCallSent(id []byte, method string, params []byte) func(error) {
	if method != schema.MethodSessionPrompt {
		return c.onCreateSent(id, method, params)
	}
	c.mu.Lock()
	t := c.prompts.sentLocked(string(id))
	c.mu.Unlock()
	if t == nil {
		return nil
	}
	// Non-blocking: a prompt sent again (turn_retry.go) reports its write
	// to no one; Prompt has long returned.
	return func(err error) {
		if c.wrote(t, err) {
			return // sent again after the restart; Prompt waits for that
		}
		select {
		case t.call.sent <- err:
		default:
		}
	}
}

// mapSendErr replaces jrpc2's error for a call that could not be sent on
// g with why the client or g ended.
func (c *Client) mapSendErr(g *agentConn, err error) error {
	select {
	case <-c.life.done:
		return c.life.endErr
	default:
	}
	select {
	case <-g.done:
		return g.endErr
	default:
	}
	if errors.Is(err, ErrConnClosed) && g.wire.WriteFailed() {
		// Writing to the agent failed for good: the wire has closed the
		// read side, so the reader is ending the connection, and decides
		// the reason every call gets (ErrAgentRestarted under
		// supervision), not the bare write error.
		<-g.done
		return g.endErr
	}
	return err
}

// onResponse is the wire's hook for every response to a call of ours, on
// the reader goroutine, before jrpc2 has it. A prompt's turn ends here, in
// wire order: every update the agent wrote before the answer is in the
// turn, every one after it is not. jrpc2 still completes the call.
func (c *Client) onResponse(id []byte, method string, raw []byte) {
	if method != schema.MethodSessionPrompt {
		c.onCreateAnswered(id, method, raw)
		return
	}
	key := string(id)
	c.mu.Lock()
	t, dead := c.prompts.answeredLocked(key)
	if dead {
		c.mu.Unlock()
		c.diag(DiagLateResponse, "ignored the answer to a cancelled prompt that came after the cancel grace", raw)
		return
	}
	c.mu.Unlock()
	if t == nil || c.holdForRetry(t, raw) {
		return
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *schema.Error   `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.fail(callError(schema.MethodSessionPrompt, err))
		return
	}
	if c.version == 2 {
		c.acceptedV2(t, msg.Result, msg.Error)
		return
	}
	var res schema.PromptResponse
	var decodeErr error
	if msg.Error == nil {
		decodeErr = json.Unmarshal(msg.Result, &res)
	}
	a := agentAnswer{stop: res.StopReason, usage: res.Usage, meta: res.Meta, err: msg.Error}
	switch {
	case msg.Error != nil:
		a.fail = callError(schema.MethodSessionPrompt, c.authError(msg.Error))
	case decodeErr != nil:
		a.fail = callError(schema.MethodSessionPrompt, fmt.Errorf("decoding the result: %w", decodeErr))
	}
	t.s.endTurn(t, func(l *turnLife) { l.agentEnded(a) })
}
