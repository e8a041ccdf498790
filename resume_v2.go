package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
)

// Replay cursors (ACP v2 session/resume replayFrom; schema v2 ReplayFrom).
// A v2 agent has no session/load: LoadSession is session/resume replaying
// from a cursor, by default {"type":"start"} (the whole retained history).
// Schema 2.4.0 defines only start; any other type is custom ("_…",
// implementation-specific) or a future ACP variant, which an agent that
// does not support it MUST refuse with -32602 rather than substitute
// another cursor or resume without replay. Intermediaries SHOULD keep the
// raw payload, so a cursor is kept as sent, byte for byte. Nothing in
// schema 2.4.0 (stable or unstable) hands a cursor to the client: the
// session remembers the one it used (Session.ReplayFrom).

// ErrUnsupportedReplayCursor: the agent refused a LoadSession whose
// cursor is not start with -32602 (Invalid params), which the schema
// makes the answer to a cursor it does not support. The agent's *Error is
// wrapped too (errors.As). The session was not loaded.
var ErrUnsupportedReplayCursor = errors.New("acp: the agent does not support this replay cursor")

// ReplayFrom returns the replay cursor the session was loaded with
// (LoadSession; a v1 session/load replays from the start), and false for
// a session that was created, resumed without replay, forked or announced
// as a child. Unstable: ACP v2 is in Preview; may change.
func (s *Session) ReplayFrom() (schema.ReplayCursor, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restore.replay == nil {
		return schema.ReplayCursor{}, false
	}
	return *s.restore.replay, true
}

// checkReplayFrom refuses, before anything is sent or registered, a
// cursor other than start to a v1 agent: v1's session/load always replays
// from the start.
func (c *Client) checkReplayFrom(cur schema.ReplayCursor) error {
	if c.version == 2 || cur.IsStart() {
		return nil
	}
	return notSupported(schema.MethodSessionLoad+" from replay cursor "+cur.String(), "ACP v2 (v1's session/load replays from the start)")
}

// loadCall sends the request that loads a session: v1's session/load (a
// replay from the start), or v2's session/resume with the request's replayFrom.
// The replay arrives before the answer in both, and in v2 ends with the
// current-state snapshot the agent sends before answering (there is no
// replay_complete in the v2 the agents speak). On success the session
// keeps the cursor.
func (c *Client) loadCall(ctx context.Context, s *Session, r *schema.LoadSessionRequest, res *schema.LoadSessionResponse) error {
	cur := r.ReplayFrom
	var err error
	if c.version != 2 {
		err = c.call(ctx, schema.MethodSessionLoad, r, res)
	} else {
		err = c.call(ctx, schema.MethodSessionResume, resumeWithReplay(r), res)
		var e *schema.Error
		if !cur.IsStart() && errors.As(err, &e) && e.Code == schema.CodeInvalidParams {
			err = callError(schema.MethodSessionResume, fmt.Errorf("%w: replayFrom %s: %w", ErrUnsupportedReplayCursor, cur, e))
		}
	}
	if err == nil {
		s.mu.Lock()
		s.restore.replay = &cur
		s.mu.Unlock()
	}
	return err
}

// resumeWithReplay is the v2 session/resume params that load a session:
// the load request's fields and its replayFrom (default start).
func resumeWithReplay(r *schema.LoadSessionRequest) any {
	b, err := json.Marshal(r)
	if err != nil {
		return r
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return r
	}
	m["replayFrom"] = r.ReplayFrom.Raw()
	return m
}
