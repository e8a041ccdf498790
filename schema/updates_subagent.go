package schema

import (
	"encoding/json"
	"fmt"
)

// The update kinds of subagent sessions, stable since schema 1.34.0 (see
// internal/schemagen/stabilised.json): a parent session announces the
// child sessions its agent creates (SubagentUpdate), and sessions send one
// another messages (SessionMessage, SessionMessageChunk). They decode into
// these types and are folded: see subagents.go (child sessions) and
// fold_session_messages.go (messages between sessions).

// SubagentUpdate ("subagent_update") announces a child session that the
// enclosing (parent) session's agent created and owns, or patches what the
// parent said about it earlier. The first one for an unknown SessionID
// announces the child; it comes before any traffic of the child. Only
// SessionID is required; the Field members follow patch rules: absent
// leaves the stored value, null clears it, a value replaces it. Clearing
// Capabilities withdraws the operations the client may perform on the
// child.
type SubagentUpdate struct {
	SessionID    string                             `json:"sessionId"`
	Title        Field[string]                      `json:"title,omitzero"`
	Description  Field[string]                      `json:"description,omitzero"`
	Capabilities Field[SubagentSessionCapabilities] `json:"capabilities,omitzero"`
	State        Field[StateUpdate]                 `json:"state,omitzero"`
	// CWD and AdditionalDirectories are strict in the schema (a malformed
	// value fails the update); null reads as absent here from a v1 agent.
	// A v2 agent's null clears the reported value, so the child inherits
	// its parent's again: cwd null reads as CWD "" (never a valid,
	// absolute path; an announcement's "" inherits the parent's cwd), and
	// additionalDirectories null as ClearAdditionalDirectories, with
	// AdditionalDirectories nil. A non-nil empty AdditionalDirectories is
	// the agent's [], which reports no additional directories.
	CWD                   *string  `json:"cwd,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitzero"`
	// ClearAdditionalDirectories: a v2 agent sent additionalDirectories
	// null (see AdditionalDirectories). Unstable: ACP v2 is in Preview.
	ClearAdditionalDirectories bool            `json:"-"`
	Meta                       json.RawMessage `json:"_meta,omitempty"`
}

// SubagentSessionCapabilities are the operations the client may perform on
// a child session. Without Cancel, the client must not send session/cancel
// for the child.
type SubagentSessionCapabilities struct {
	Cancel *Capability     `json:"cancel,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// SessionMessage ("session_message") is an upsert of a message from one
// session to another, by MessageID within the session it arrives on: from
// the parent to a child or back. The Field members follow patch rules
// (absent keeps, null clears, a value replaces); Content absent keeps the
// content, an empty list clears it, a list replaces it (null reads as
// absent here); content may also stream in SessionMessageChunk updates of
// the same MessageID.
type SessionMessage struct {
	MessageID          string         `json:"messageId"`
	SenderSessionID    Field[string]  `json:"senderSessionId,omitzero"`
	RecipientSessionID Field[string]  `json:"recipientSessionId,omitzero"`
	SenderMessageID    Field[string]  `json:"senderMessageId,omitzero"`
	RecipientMessageID Field[string]  `json:"recipientMessageId,omitzero"`
	Content            []ContentBlock `json:"content,omitzero"`
	// Meta is a new _meta for the message when set (null reads as absent).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionMessageChunk ("session_message_chunk") streams one block of the
// SessionMessage with the same MessageID.
type SessionMessageChunk struct {
	MessageID string          `json:"messageId"`
	Content   ContentBlock    `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

func (*SubagentUpdate) isUpdate()      {}
func (*SessionMessage) isUpdate()      {}
func (*SessionMessageChunk) isUpdate() {}

func (*SubagentUpdate) UpdateKind() string      { return "subagent_update" }
func (*SessionMessage) UpdateKind() string      { return "session_message" }
func (*SessionMessageChunk) UpdateKind() string { return "session_message_chunk" }

// The activity states of a StateUpdate. Values the schema does not list
// are kept.
const (
	StateRunning        = "running"
	StateIdle           = "idle"
	StateRequiresAction = "requires_action"
	StateUnknown        = "unknown"
)

// StopReasonError is the stop reason of an idle StateUpdate whose work
// ended because something failed; StateUpdate.Error holds the details.
//
// Unstable: ErrorStopReason is marked unstable in the schema; may change.
const StopReasonError StopReason = "error"

// StateUpdate is a session's activity as its agent reports it (in v1, a
// child session's, in SubagentUpdate.State): State is one of the State*
// constants or a value the schema does not list. An idle state may carry
// the StopReason of the work that ended (omitted or malformed: not
// reported), with Error set when that reason is [StopReasonError], and the
// work's Usage.
//
// The schema's StateUpdate is a union on "state" whose idle branch is a
// union on "stopReason"; its variants carry no fields of their own besides
// these, so one flat struct decodes them all (by hand: the generator reads
// neither nested union).
type StateUpdate struct {
	State      string     `json:"state"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Error      *Error     `json:"error,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	// Background lists the work running apart from the foreground
	// (ACP v2's state_update.background); nil when none was sent.
	// Unstable: ACP v2 is in Preview; may change.
	Background []BackgroundWork `json:"background,omitzero"`
	Meta       json.RawMessage  `json:"_meta,omitempty"`
}

// A StateUpdate is also ACP v2's "state_update" session update: a
// snapshot of the session's aggregate activity. Snapshots are not events:
// the same state twice means nothing new. A v2 turn ends at the first idle
// after its work began (see [Turn.Wait]).
func (*StateUpdate) isUpdate()          {}
func (*StateUpdate) UpdateKind() string { return "state_update" }

// UnmarshalJSON decodes the schema's StateUpdate (RunningStateUpdate,
// IdleStateUpdate, RequiresActionStateUpdate, UnknownStateUpdate, or another
// state): state is required; stopReason, error, usage and _meta read as
// absent when malformed, as the schema's marks say.
func (s *StateUpdate) UnmarshalJSON(b []byte) error {
	var w struct {
		State      *string         `json:"state"`
		StopReason json.RawMessage `json:"stopReason"`
		Error      json.RawMessage `json:"error"`
		Usage      json.RawMessage `json:"usage"`
		Meta       json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("state update", err)
	}
	if w.State == nil {
		return errMissing("state update", "state")
	}
	*s = StateUpdate{State: *w.State}
	var reason string
	if json.Unmarshal(w.StopReason, &reason) == nil {
		s.StopReason = StopReason(reason)
	}
	if s.StopReason == StopReasonError {
		var e Error
		if len(w.Error) > 0 && !jsonIsNull(w.Error) && json.Unmarshal(w.Error, &e) == nil {
			s.Error = &e
		}
	}
	var u Usage
	if len(w.Usage) > 0 && !jsonIsNull(w.Usage) && json.Unmarshal(w.Usage, &u) == nil {
		s.Usage = &u
	}
	if len(w.Meta) > 0 && w.Meta[0] == '{' {
		s.Meta = w.Meta
	}
	return nil
}

// String is the state, with the stop reason when there is one.
func (s StateUpdate) String() string {
	if s.StopReason == "" {
		return s.State
	}
	return fmt.Sprintf("%s (%s)", s.State, s.StopReason)
}

// MarshalJSON writes the update with its "sessionUpdate" kind, as the
// other update kinds do (the acp command's --json, a trace, a replay).
func (u SubagentUpdate) MarshalJSON() ([]byte, error) {
	type body SubagentUpdate
	var dirs any // the outer key hides body's: null, the list, or omitted
	switch {
	case u.ClearAdditionalDirectories:
		dirs = json.RawMessage("null")
	case u.AdditionalDirectories != nil:
		dirs = u.AdditionalDirectories
	}
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
		Dirs any `json:"additionalDirectories,omitempty"`
	}{"subagent_update", body(u), dirs})
}

func (u SessionMessage) MarshalJSON() ([]byte, error) {
	type body SessionMessage
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"session_message", body(u)})
}

func (u SessionMessageChunk) MarshalJSON() ([]byte, error) {
	if u.Content == nil {
		return nil, fmt.Errorf("acp: session_message_chunk: Content is nil")
	}
	type body SessionMessageChunk
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"session_message_chunk", body(u)})
}
