// This file holds the restore scenario in v2: a prompted session, then on
// new connections, each closed before the next, session/list,
// session/resume without and with replayFrom {"type":"start"}, and
// session/close followed by a prompt the closed session must refuse. v2
// has no session/load; the SDK 2.4.0 wire has no replay_complete: a
// replay ends with the current-state snapshot sent before the response.

package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

var restoreV2Rules = []string{"session.list", "session.resume", "session.close",
	"v2.resume-replay", "v2.resume-ids", "v2.resume-state", "v2.close"}

// liveTurn is what the prompted turn showed live: the user message's id
// (the session/prompt result's) and the agent messages' ids.
type liveTurn struct {
	userID   string
	agentIDs map[string]bool
}

func (r *runner) restoreV2(s *scene) {
	if !r.inits[2].resume {
		for _, id := range restoreV2Rules {
			r.notExercised(id, "the agent advertises no capabilities.session")
		}
		return
	}
	c, conn, err := s.client(false)
	if err != nil {
		r.fail("v2.resume-replay", "connecting: "+s.why(err))
		return
	}
	sess, err := s.newSession(c)
	if err != nil {
		c.Close()
		r.fail("v2.resume-replay", "session/new: "+s.why(err))
		return
	}
	id := sess.ID()
	s.prompt(conn, sess, "prompt.text", "a prompt before restoring", schema.Text(r.opts.Prompts.hello()))
	live := liveMessages(conn.log, id)
	c.Close()

	r.list(s)
	ro := r.resume(s, id)
	if ro.sess != nil {
		r.resumeState(ro, id, "session/resume without replayFrom")
	}
	resumed := ro.sess != nil
	ro.close()

	ro = r.reopen(s, "v2.resume-replay", "session/resume", func(c *acp.Client) (*acp.Session, error) {
		// LoadSession is v2's session/resume with replayFrom start.
		return c.LoadSession(s.ctx, &schema.LoadSessionRequest{SessionID: id, Cwd: r.opts.Workspace, MCPServers: []schema.MCPServer{}})
	})
	if ro.sess != nil {
		r.replayV2(ro, id, r.opts.Prompts.hello(), live)
		r.resumeState(ro, id, "session/resume from the start")
	} else {
		r.notExercised("v2.resume-ids", "no session was replayed")
		if !resumed {
			r.notExercised("v2.resume-state", "no session/resume succeeded")
		}
	}
	if ro.sess == nil {
		ro.close()
		ro = r.freshSession(s, "session.close")
	}
	defer ro.close()
	if ro.sess == nil {
		return
	}
	if r.closeSession(s, ro.conn, ro.sess) {
		r.promptClosed(s, ro, ro.sess.ID())
	} else {
		r.notExercised("v2.close", "session/close failed")
	}
}

// liveMessages collects the prompted turn's message ids from its
// connection.
func liveMessages(log *wireLog, id string) liveTurn {
	live := liveTurn{agentIDs: map[string]bool{}}
	if _, resp := requestSpan(log, "session/prompt"); resp != nil {
		var res struct {
			MessageID string `json:"messageId"`
		}
		if json.Unmarshal(resp.msg.Result, &res) == nil {
			live.userID = res.MessageID
		}
	}
	for _, f := range log.all() {
		if u, ok := updateOf(&f); ok && u.SessionID == id && strings.HasPrefix(u.Kind, "agent_message") && u.MessageID != nil {
			live.agentIDs[*u.MessageID] = true
		}
	}
	return live
}

// replayV2 grades the replay before the response of a session/resume
// from the start: the prompt as a user message, an agent message, and
// the ids they had live.
func (r *runner) replayV2(ro reopened, id, prompt string, live liveTurn) {
	want := jsonText(prompt)
	var user, agent, replayed int
	var wrong []string
	var ev *frame
	for _, f := range ro.beforeAnswer() {
		u, ok := updateOf(&f)
		if !ok || u.SessionID != id || !historyKinds[u.Kind] {
			continue
		}
		replayed++
		if !messageKinds[u.Kind] {
			continue
		}
		mid := ""
		if u.MessageID != nil {
			mid = *u.MessageID
		}
		hasText := strings.Contains(string(f.msg.Params), want)
		switch {
		// The prompt's message: by its text, or (replayed in chunks
		// that split the text) by the id session/prompt answered.
		case strings.HasPrefix(u.Kind, "user_message") && (hasText || mid != "" && mid == live.userID):
			user++
			if hasText && live.userID != "" && mid != live.userID {
				wrong = append(wrong, fmt.Sprintf("the user message as %q (session/prompt answered %q)", mid, live.userID))
				ev = &f
			}
		case strings.HasPrefix(u.Kind, "agent_message"):
			agent++
			if len(live.agentIDs) > 0 && !live.agentIDs[mid] {
				wrong = append(wrong, fmt.Sprintf("an agent message as %q (live: %s)", mid, strings.Join(sortedKeys(live.agentIDs), ", ")))
				ev = &f
			}
		}
		if mid == "" {
			wrong = append(wrong, "a "+u.Kind+" without a messageId")
			ev = &f
		}
	}
	switch {
	case replayed == 0:
		r.fail("v2.resume-replay", `session/resume with replayFrom {"type":"start"} answered without replaying any of the conversation`, ro.resp)
	case user == 0:
		r.fail("v2.resume-replay", fmt.Sprintf("the replay (%d updates) did not carry the earlier prompt as a user message", replayed), ro.resp)
	case agent == 0 && len(live.agentIDs) > 0:
		r.fail("v2.resume-replay", "the replay carried no agent message, though the turn had one", ro.resp)
	default:
		r.pass("v2.resume-replay", fmt.Sprintf("replayed %d updates, the prompt and the answer among them, before answering", replayed))
	}
	switch {
	case len(wrong) > 0:
		r.fail("v2.resume-ids", "the replay carried "+strings.Join(wrong, "; "), ev)
	case user > 0:
		r.pass("v2.resume-ids", "the replayed messages kept the ids they had live")
	default:
		r.notExercised("v2.resume-ids", "the prompt was not replayed")
	}
}

// resumeState grades the current-state snapshot ending a resume: a
// state_update for the session after the last replayed update and before
// the response.
func (r *runner) resumeState(ro reopened, id, what string) {
	state, last := -1, -1
	fs := ro.beforeAnswer()
	for i := range fs {
		u, ok := updateOf(&fs[i])
		switch {
		case !ok || u.SessionID != id:
		case u.Kind == "state_update":
			state = i
		case historyKinds[u.Kind]:
			last = i
		}
	}
	switch {
	case state < 0:
		r.fail("v2.resume-state", what+" answered without a state_update for the session first", ro.resp)
	case state < last:
		r.fail("v2.resume-state", what+" replayed history after its last state_update", &fs[last])
	default:
		r.pass("v2.resume-state", what+" sent the current state before answering")
	}
}

// promptClosed sends a prompt for session id, just closed on ro's
// connection: it must be refused (updates after the close fail v2.close
// in checkFrames).
func (r *runner) promptClosed(s *scene, ro reopened, id string) {
	err := ro.c.Call(s.ctx, "session/prompt", map[string]any{"sessionId": id,
		"prompt": []any{map[string]any{"type": "text", "text": r.opts.Prompts.hello()}}}, nil)
	var e *schema.Error
	switch {
	case errors.As(err, &e):
		r.pass("v2.close", fmt.Sprintf("a prompt for the closed session was refused with error %d", e.Code))
	case err != nil:
		r.fail("v2.close", "session/prompt for the closed session: "+s.why(err))
	default:
		_, resp := requestSpan(ro.conn.log, "session/prompt")
		r.fail("v2.close", "a session/prompt for the session was accepted after session/close closed it", resp)
	}
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
