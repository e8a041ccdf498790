package acp

import (
	"encoding/json"
	"fmt"
	"github.com/acpclient/acp/schema"
)

// The v2 lifecycle of a turn (ACP v2 prompt lifecycle, schema
// PromptResponse and StateUpdate): the turn starts as in v1, when
// session/prompt is on the wire (turn_v1.go: startPrompt, onCallSent), but
// the agent's answer only accepts the prompt ({messageId}, the id of the
// user message it inserted); the turn's progress and end are the
// session's state_update snapshots: running, requires_action, then idle
// with the stop reason. The turn ends at the first idle after its work was
// reported running or requires_action — an idle before that is the
// snapshot of the time before the prompt, and a repeated idle after the
// end belongs to no turn (snapshots are aggregate: the same state twice is
// not a second completion). A rejected prompt (an error answer) ends the
// turn with the error. Both end through Session.endTurn, as in v1.

// turnV2 is what a v2 turn knows of the agent's state. Guarded by s.mu.
type turnV2 struct {
	active    bool   // a running or requires_action snapshot arrived
	messageID string // the prompt's user message, from the answer
	stop      schema.StopReason
	usage     *schema.Usage
	err       *schema.Error // the idle's error, with stop reason "error"
}

// turnStateLocked folds a state_update into the running turn's lifecycle
// and returns the turn if the update ends it. s.mu is held.
func (s *Session) turnStateLocked(u *schema.StateUpdate) *Turn {
	t := s.turn
	if t == nil || t.life.ended {
		return nil
	}
	switch u.State {
	case schema.StateRunning, schema.StateRequiresAction:
		t.v2.active = true
	case schema.StateIdle:
		if !t.v2.active {
			return nil
		}
		t.v2.stop, t.v2.usage, t.v2.err = u.StopReason, u.Usage, u.Error
		return t
	}
	return nil
}

// acceptedV2 handles the v2 answer to session/prompt: a result accepts the
// prompt (the turn runs on until idle), an error ends the turn with it.
func (c *Client) acceptedV2(t *Turn, result json.RawMessage, rpcErr *schema.Error) {
	if rpcErr != nil {
		a := agentAnswer{err: rpcErr, fail: callError(schema.MethodSessionPrompt, c.authError(rpcErr))}
		t.s.endTurn(t, func(l *turnLife) { l.agentEnded(a) })
		return
	}
	var res struct {
		MessageID *string `json:"messageId"`
	}
	if err := json.Unmarshal(result, &res); err != nil || res.MessageID == nil {
		// Required and non-null (schema PromptResponse.messageId). The
		// turn still runs: its end is the idle, not this answer.
		c.diag(DiagBadUpdate, fmt.Sprintf("the v2 answer to session/prompt has no messageId: %v", err), result)
		return
	}
	s := t.s
	s.mu.Lock()
	t.v2.messageID = *res.MessageID
	s.mu.Unlock()
}

// MessageID returns the id of the user message a v2 agent inserted for
// this turn's prompt (its answer to session/prompt); "" for a v1 agent or
// before the answer. Unstable: ACP v2 is in Preview; may change.
func (t *Turn) MessageID() string {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.v2.messageID
}

// permissionParamsV1 reads a v2 session/request_permission (title,
// description, an optional subject, options) in the v1 shape the
// permission handlers take: the subject's tool call (or none: an empty
// toolCallId) with the permission's title. The handlers are the same for
// both versions.
func permissionParamsV1(params []byte) []byte {
	var w struct {
		SessionID string          `json:"sessionId"`
		Title     *string         `json:"title"`
		Subject   json.RawMessage `json:"subject"`
		Options   json.RawMessage `json:"options"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}
	if json.Unmarshal(params, &w) != nil {
		return params // the v1 decoder reports what is wrong
	}
	var subj struct {
		Type     string `json:"type"`
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
	}
	_ = json.Unmarshal(w.Subject, &subj)
	tc := map[string]any{"toolCallId": subj.ToolCall.ToolCallID}
	if w.Title != nil {
		tc["title"] = *w.Title
	}
	out := map[string]any{"sessionId": w.SessionID, "toolCall": tc, "options": w.Options}
	if len(w.Meta) > 0 {
		out["_meta"] = w.Meta
	}
	b, err := json.Marshal(out)
	if err != nil {
		return params
	}
	return b
}
