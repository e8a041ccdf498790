package remote

// A connection the server drained (package gateway's Drain): it answered
// every request it received, then closed, and says so; what is still
// unanswered was never delivered (acp.ErrDrained).
//
// The server says so on each stream: it ends every session stream once
// all its answers are written, and answers the client's GET for it again
// 404 "(drained)"; the connection's stream ends last. Each stream is a
// request of its own (through a proxy, a connection of its own), with no
// order between them, so the first 404 says nothing of the answers still
// on their way on the others: the connection ends drained only once every
// stream has been read to its end (drainedAt). Ending it at the first
// would lose those answers, and the client would take their prompts for
// undelivered and send them a second time.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/engine"
)

// drainedMark ends what a drained gateway says about the connection: the
// 404 bodies of its requests and its WebSocket close reason (1001).
const drainedMark = "(drained)"

// isDrained: err is a 404 that names a drained connection.
func isDrained(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == http.StatusNotFound && strings.Contains(se.Body, drainedMark)
}

// drainWait bounds how long, after the first stream said the connection
// is drained, the others have to reach their ends (the gateway holds a
// connection for a client that does not come back for 5 s). Past it the
// connection ends, but not as drained: what is unanswered on a stream not
// read to its end may have reached the agent.
const drainWait = 10 * time.Second

// connDrainWait is how long the session streams have once the
// connection's stream has ended too: the server has closed the
// connection then, and what it wrote is read within moments; a proxy may
// hold an idle stream's end much longer (nginx, measured: past
// drainWait), which must not hold the restart.
const connDrainWait = time.Second

// drainState is a drained connection's wait for its streams (c.mu).
type drainState struct {
	err error // the first 404 "(drained)"; nil while only pending
	// pending is the end of the connection's stream, or a POST's failure,
	// that came with session streams still open (deferEnd): the end, if
	// no stream says drained before they have all ended.
	pending error
	left    map[string]bool // streams not yet read to their ends: "" the connection's, session ids
	timer   *time.Timer
}

// postStream names, for drainedAt, a POST's 404: it ends no stream. The
// connection's stream ("") is read to its end when it ends cleanly after
// the drain began, or its GET again gets 404 "(drained)".
const postStream = "\x00post"

// drainedAt notes that stream (a session id, "" the connection's stream,
// postStream) has met the server's drain, with err its 404, and ends the
// connection drained once every stream open at the first such 404 has
// been read to its end, or was closed since.
func (c *httpConn) drainedAt(stream string, err error) {
	c.mu.Lock()
	if c.closing || c.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	d := c.startDrainLocked()
	if d.err == nil {
		d.err = err
	}
	c.finishDrain(d, stream)
}

// startDrainLocked returns the connection's drain state, made with every
// stream open now left to end. c.mu is held.
func (c *httpConn) startDrainLocked() *drainState {
	if c.drain == nil {
		d := &drainState{left: map[string]bool{"": true}}
		for id := range c.sessions {
			d.left[id] = true
		}
		d.timer = time.AfterFunc(drainWait, c.drainExpired)
		c.drain = d
	}
	return c.drain
}

// deferEnd is for an end of the connection learnt from stream (""'s
// clean end whose GET again failed, a POST that failed: postStream) while
// session streams are open. A gateway closes a drained connection as the
// client comes back for its last session stream, so the connection's
// stream can end, and be asked for in vain (the server gone, or a new one
// in its place), before the client has read the 404 "(drained)" of that
// very request: the session streams then still say drained. So the end
// waits for them, as for a drain (drainedAt): drained if one says so,
// else err. It reports false, and does nothing, with no session stream
// open: the caller ends the connection now.
func (c *httpConn) deferEnd(stream string, err error) bool {
	c.mu.Lock()
	if c.closing || c.ctx.Err() != nil {
		c.mu.Unlock()
		return true // ending already
	}
	if c.drain == nil && len(c.sessions) == 0 {
		c.mu.Unlock()
		return false
	}
	d := c.startDrainLocked()
	if d.pending == nil {
		d.pending = err
	}
	c.finishDrain(d, stream)
	if h := testHookDeferredEnd; h != nil {
		h(stream)
	}
	return true
}

// testHookDeferredEnd, set by tests only, is called once deferEnd has
// deferred an end learnt from stream: what the order of two streams' ends
// depends on.
var testHookDeferredEnd func(stream string)

// finishDrain marks stream read to its end and ends the connection once
// none is left: drained when a stream said so, else with the pending end.
// c.mu is held, and released.
func (c *httpConn) finishDrain(d *drainState, stream string) {
	if stream == "" && d.left[""] {
		d.timer.Reset(connDrainWait)
	}
	delete(d.left, stream)
	for id := range d.left {
		if id != "" && c.sessions[id] == nil {
			delete(d.left, id) // failed or released since: not coming back
		}
	}
	done := len(d.left) == 0
	drainErr, pending := d.err, d.pending
	c.mu.Unlock()
	if !done {
		return
	}
	d.timer.Stop()
	if drainErr != nil {
		c.drainedEnd(drainErr)
	} else {
		_ = c.fatal(pending)
	}
}

// drainedVerdict: a stream has met the server's drain, and said so with
// its 404 "(drained)".
func (c *httpConn) drainedVerdict() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drain != nil && c.drain.err != nil
}

// drainExpired ends a drained connection whose streams did not all reach
// their ends within drainWait.
func (c *httpConn) drainExpired() {
	c.mu.Lock()
	if c.closing || c.ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	d := c.drain
	left := make([]string, 0, len(d.left))
	for id := range d.left {
		left = append(left, fmt.Sprintf("%q", id))
	}
	c.mu.Unlock()
	if d.err == nil {
		_ = c.fatal(d.pending)
		return
	}
	_ = c.fatal(fmt.Errorf("acp/remote: the server drained the connection (%v), but the streams %s did not end within %v", d.err, strings.Join(left, ", "), drainWait))
}

// drainedEnd ends the connection as drained (first: an end already under
// way keeps its reason).
func (c *httpConn) drainedEnd(err error) {
	c.mu.Lock()
	first := c.ctx.Err() == nil
	if first {
		c.drained = true
	}
	c.mu.Unlock()
	if first {
		_ = c.fatal(fmt.Errorf("%w: %w", acp.ErrDrained, err))
	}
}

// wasDrained: the connection ended drained, so a message whose POST
// failed since was not delivered, and is no write error (the client
// learns of the end from its reader, with acp.ErrDrained).
func (c *httpConn) wasDrained() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drained
}

// notDelivered is the write error of a message the server answered without
// forwarding it (404: it does not know the connection). It wraps
// engine.ErrNotWritten, which tells the client the agent cannot have seen
// it; Write returns it only when nothing of its buffer was sent.
type notDelivered struct{ err error }

func (e notDelivered) Error() string   { return e.err.Error() }
func (e notDelivered) Unwrap() []error { return []error{e.err, engine.ErrNotWritten} }

// replyNotDelivered answers the request id (its JSON text) with
// acp.CodeNotDelivered in the server's name: the server forwarded nothing
// of it (a 404 for its POST). From a goroutine of its own, as reply.
func (c *httpConn) replyNotDelivered(id string, err error) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id),
		"error": map[string]any{"code": acp.CodeNotDelivered, "message": err.Error()}})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.in.put(append(line, '\n'))
	}()
}
