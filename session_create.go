package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// How session/new and session/fork make their session known. The agent
// names the new session's id in its answer and may write a request for it
// (terminal/create, fs/*, a permission request) on the very next line. The
// reader hands that request on as soon as it has read it, so the session is
// registered by the reader itself, in the response hook, before it reads
// the next line — not by the caller once jrpc2 has woken it, which comes
// too late. The caller then picks the registered session up by its call's
// request id.

// creation is a session/new or session/fork in flight, keyed in
// Client.creating by its request id from the moment its frame is queued
// until its caller has the result.
type creation struct {
	cwd  string
	dirs []string
	s    *Session // registered by the reader from the agent's answer
	err  error    // why the answer registered no session
}

// onCreateSent is the wire's CallSent hook for session/new and
// session/fork (nil for other methods): it records the call before its
// frame can reach the agent, so the answer always finds it. params is what
// the caller built (cwd and additional directories already cleaned).
func (c *Client) onCreateSent(id []byte, method string, params []byte) func(error) {
	if method != schema.MethodSessionNew && method != schema.MethodSessionFork {
		return nil
	}
	var p struct {
		Cwd                   string   `json:"cwd"`
		AdditionalDirectories []string `json:"additionalDirectories"`
	}
	_ = json.Unmarshal(params, &p) // our own frame
	key := string(id)
	c.mu.Lock()
	c.creating[key] = &creation{cwd: p.Cwd, dirs: p.AdditionalDirectories}
	c.mu.Unlock()
	return func(err error) {
		if err != nil { // never reached the agent: no answer will come
			c.mu.Lock()
			delete(c.creating, key)
			c.mu.Unlock()
		}
	}
}

// onCreateAnswered is the wire's Response hook for session/new and
// session/fork, on the reader goroutine, before jrpc2 has the answer. It
// registers the session the answer names, unless that id is already open on
// this client: an agent must not take over a live session (its running
// turn's updates, its roots) by naming it again.
func (c *Client) onCreateAnswered(id []byte, method string, raw []byte) {
	if method != schema.MethodSessionNew && method != schema.MethodSessionFork {
		return
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &msg) != nil || len(msg.Error) > 0 {
		return // the caller gets the error from jrpc2
	}
	var res schema.NewSessionResponse
	var err error
	if method == schema.MethodSessionFork {
		var fr schema.ForkSessionResponse
		err = schema.DecodeResult(c.version, msg.Result, &fr)
		res = schema.NewSessionResponse(fr)
	} else {
		err = schema.DecodeResult(c.version, msg.Result, &res)
	}
	dup := false
	c.mu.Lock()
	cr := c.creating[string(id)]
	switch {
	case cr == nil:
		// The caller gave up as the answer arrived and has left.
	case err != nil:
		cr.err = fmt.Errorf("decoding the result: %w", err)
	case res.SessionID == "":
		cr.err = errors.New("the agent answered without a sessionId")
	case c.routing.sessions[res.SessionID] != nil:
		dup = true
		cr.err = fmt.Errorf("%w: %s", ErrDuplicateSessionID, agenttext.Quote(res.SessionID))
	default:
		s := newSession(c, res.SessionID, cr.cwd, cr.dirs)
		s.adopt(res.Modes, res.ConfigOptions, res.Models, res.Meta)
		after := c.registerLocked(s)
		cr.s = s
		c.mu.Unlock()
		after()
		return
	}
	c.mu.Unlock()
	if dup {
		c.diagIn(res.SessionID, DiagDuplicateSessionID, method+": the agent answered with session id "+agenttext.Quote(res.SessionID)+", which is already open on this client; the call fails and that session is left as it was", nil)
	}
}

// createSession performs session/new or session/fork and returns the
// session the reader registered from the answer.
func (c *Client) createSession(ctx context.Context, method string, params any) (*Session, error) {
	id, err := c.callID(ctx, method, params, nil)
	c.mu.Lock()
	cr := c.creating[id]
	delete(c.creating, id)
	c.mu.Unlock()
	switch {
	case err != nil:
		if cr != nil && cr.s != nil {
			// The answer registered a session as the caller's context
			// ended: the caller never gets it, so nobody may route to it.
			c.unregister(cr.s)
		}
		return nil, err
	case cr == nil:
		return nil, callError(method, errors.New("the answer passed no reader (internal error)"))
	case cr.err != nil:
		return nil, callError(method, cr.err)
	}
	return cr.s, nil
}
