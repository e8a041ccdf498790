package gateway

// The drain of a rolling restart: the gateway refuses new connections and
// new requests, lets the requests in flight be answered and their answers
// written, then closes each connection as it falls idle.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/acpclient/acp"
)

// errDrained is the reason of a connection closed by Drain once idle.
var errDrained = fmt.Errorf("%w (drained)", ErrShutdown)

// notDeliveredMessage is the message of the error a draining connection
// answers a new request with.
const notDeliveredMessage = "gateway: draining: the request was not delivered to the agent; send it again on a new connection"

// Drain stops the gateway the way a rolling restart needs: no request is
// lost, none is cut short unless ctx ends first.
//
//   - New connections get 503 with Retry-After (as after Shutdown); the
//     health endpoint ([Gateway.Health]) answers 503. The server's owner
//     should keep its listener open and its idle keep-alive connections
//     too until Drain returns (acp serve does): the running turns'
//     requests may come on new TCP connections, and closing an idle
//     connection can make a proxy resend a request this gateway has
//     already forwarded (resend.go) to another backend.
//   - On every open connection, a new request is not forwarded: it is
//     answered, on the stream its answer would take, with the JSON-RPC
//     error [acp.CodeNotDelivered] (the agent never saw it: a supervised
//     acp.Client sends a prompt so answered again on its next connection).
//     Notifications and answers (session/cancel, a permission choice) are
//     still forwarded: they belong to the requests in flight. A proxy's
//     second copy of a request forwarded before the drain is neither
//     forwarded nor refused (resend.go): its answer is on its way.
//   - A connection closes once no request of its client awaits the agent's
//     answer, no ACP v2 turn runs (a v2 agent answers session/prompt when
//     it accepts the prompt; the turn runs until the agent reports the
//     session idle; at most MaxSessions turns a connection are followed)
//     and every answer has been written to its stream. Over
//     Streamable HTTP the session streams end first and the connection's
//     stream only when they have: a client learns of the end from a
//     session stream after it has read that stream's last answer, never
//     from the connection's stream ahead of an answer still on its way
//     (through a proxy each stream is a connection of its own, with no
//     order between them). The connection's stream ends once the client
//     has asked for each ended session stream again (a GET, answered 404:
//     it has read that stream to its end; package remote always asks), or
//     after 5 s for a client that does not. A POST that names the connection after that
//     gets 404, as after any close; package remote answers a prompt so
//     refused with acp.CodeNotDelivered too. A WebSocket gets close
//     status 1001 after its last message.
//
// Drain returns nil once every connection has closed, or ctx's error when
// it ends first; either way, call [Gateway.Shutdown] next, which closes
// what is left and waits for the agents to exit. A connection whose agent
// never answers is closed only by that Shutdown.
func (g *Gateway) Drain(ctx context.Context) error {
	g.mu.Lock()
	g.closing = true
	g.draining = true
	conns := make([]*conn, 0, len(g.conns))
	for _, c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		c.startDrain()
	}
	for {
		g.mu.Lock()
		left, changed := len(g.conns), g.changed
		g.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// startDrain marks c draining and closes it if it is idle already.
func (c *conn) startDrain() {
	c.mu.Lock()
	c.draining = true
	closeNow := c.drainStepLocked()
	c.mu.Unlock()
	if closeNow {
		c.close(errDrained)
	}
}

// drainStepLocked moves a draining connection on: once nothing awaits the
// agent (no request, no accepted v2 turn) and nothing waits to be
// written, its session streams end; once
// they have all lost their receivers (every SSE response has returned), it
// reports that the connection is to close now. c.mu is held.
func (c *conn) drainStepLocked() bool {
	if !c.draining || c.reason != nil {
		return false
	}
	if !c.sessionsEnded {
		if len(c.pending) > 0 || len(c.turns) > 0 || c.buffered > 0 || !c.readyLocked() {
			return false
		}
		c.sessionsEnded = true
		for s, st := range c.streams {
			if s != "" {
				c.knowLocked(s)
				signal(st.wake)
			}
		}
		// Every session the client named, not only the streams open now:
		// one it is (re)opening, its GET on its way, must find the
		// connection and learn of the drain from its 404.
		if len(c.known) > 0 {
			c.acks, c.known = c.known, nil
		}
		if len(c.acks) > 0 {
			// A client that does not come back for its streams (not
			// package remote) holds the connection no longer than a
			// held session stream would be.
			time.AfterFunc(c.g.hold, func() {
				c.mu.Lock()
				c.acks = nil
				c.mu.Unlock()
				c.drainStep()
			})
		}
	}
	return c.sessionReceivers == 0 && len(c.acks) == 0
}

// knowLocked records a session the client named (bounded by MaxSessions).
// c.mu is held.
func (c *conn) knowLocked(session string) {
	if c.known == nil {
		c.known = make(map[string]bool)
	}
	if len(c.known) < c.o.MaxSessions {
		c.known[session] = true
	}
}

// ackedLocked closes, from a goroutine of its own, a drained connection
// whose client has just come back for its last session stream (attach
// holds c.mu, which close takes).
func (c *conn) ackedLocked() {
	if len(c.acks) == 0 && c.sessionReceivers == 0 && c.reason == nil {
		go c.close(errDrained)
	}
}

// readyLocked: the connection has finished its initialize (HTTP: answered;
// WebSocket: answered, or not sent yet: nothing is in flight then).
func (c *conn) readyLocked() bool {
	if c.ws {
		return c.wsAnswered || c.wsInitKey == ""
	}
	return c.ready || len(c.initWait) == 0
}

// drainStep is drainStepLocked for callers without the lock, closing the
// connection when it says so.
func (c *conn) drainStep() {
	c.mu.Lock()
	closeNow := c.drainStepLocked()
	c.mu.Unlock()
	if closeNow {
		c.close(errDrained)
	}
}

// refuseDrainingLocked answers a client request of a draining connection
// in the gateway's name, on session's stream: the request is not
// forwarded. ok is false once the session streams have ended (the caller
// answers 404: the connection is as good as closed). c.mu is held.
func (c *conn) refuseDrainingLocked(session string, id []byte) (refused, ok bool) {
	if !c.draining {
		return false, true
	}
	if c.sessionsEnded {
		return true, false
	}
	if err := c.pushLocked(session, rpcError(id, acp.CodeNotDelivered, notDeliveredMessage)); err != nil {
		return true, false
	}
	return true, true
}

// Health is the gateway's health endpoint, for a proxy's or an
// orchestrator's probe; mount it on a path of its own (acp serve:
// /healthz). GET and HEAD answer 200 "ok" while the gateway takes new
// connections, 503 "draining" from the start of Drain or Shutdown on:
// a readiness check (take this backend out of rotation), which a process
// that is draining its last turns fails on purpose. It takes no token:
// it says nothing but that.
func (g *Gateway) Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			textError(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		g.mu.Lock()
		closing := g.closing
		g.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		if closing {
			textError(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintln(w, "ok")
	})
}

// A v2 agent answers session/prompt as soon as it accepts the prompt
// ({messageId}); the turn runs on until the agent reports the session
// idle (a state_update). Drain must wait for that, not for the answer:
// a connection closed in the middle of the turn would cut it short, and
// the client cannot send it again (the agent has it). So the gateway
// follows, per connection, the prompts awaiting their answer
// (turnCalls, bounded as pending is) and the sessions whose prompt was
// accepted until their idle (turns, at most MaxSessions: a turn past that
// does not hold the drain). A v1 answer ({stopReason}) or an error ends
// the turn there: nothing is followed for v1.

// promptSentLocked records the client's session/prompt request of id key
// on session. c.mu is held.
func (c *conn) promptSentLocked(key, session string) {
	if c.turnCalls == nil {
		c.turnCalls = make(map[string]string)
	}
	c.turnCalls[key] = session
}

// promptAnsweredLocked reads the agent's answer to the prompt of id key:
// a result with a messageId and no stopReason accepted a v2 turn, which
// holds the drain until its idle. c.mu is held.
func (c *conn) promptAnsweredLocked(key string, e *envelope) {
	session, ok := c.turnCalls[key]
	if !ok {
		return
	}
	delete(c.turnCalls, key)
	if e.Result == nil {
		return
	}
	var res struct {
		MessageID  *string `json:"messageId"`
		StopReason *string `json:"stopReason"`
	}
	if json.Unmarshal(e.Result, &res) != nil || res.MessageID == nil || res.StopReason != nil {
		return
	}
	if c.turns == nil {
		c.turns = make(map[string]bool)
	}
	if len(c.turns) < c.o.MaxSessions {
		c.turns[session] = true
	}
}

// turnUpdateLocked reads a message of the agent on session for the idle
// that ends the session's v2 turn. c.mu is held.
func (c *conn) turnUpdateLocked(session string, e *envelope) {
	if !c.turns[session] || e.method() != "session/update" {
		return
	}
	kind, body := e.Update.Kind, e.Update.Body
	if kind == nil { // not the plain shape Peek reads: decode it
		var p struct {
			Update json.RawMessage `json:"update"`
		}
		var u struct {
			Kind string `json:"sessionUpdate"`
		}
		if json.Unmarshal(e.Params, &p) != nil || json.Unmarshal(p.Update, &u) != nil {
			return
		}
		kind, body = []byte(u.Kind), p.Update
	}
	if string(kind) != "state_update" {
		return
	}
	var u struct {
		State string `json:"state"`
	}
	if json.Unmarshal(body, &u) == nil && u.State == "idle" {
		delete(c.turns, session)
	}
}
