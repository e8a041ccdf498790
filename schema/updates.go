package schema

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/jsonscan"
)

// Update is the payload of a session/update notification, told apart on the
// wire by "sessionUpdate" (which UpdateKind returns):
//
//   - *UserMessageChunk ("user_message_chunk")
//   - *AgentMessageChunk ("agent_message_chunk")
//   - *AgentThoughtChunk ("agent_thought_chunk")
//   - *ToolCall ("tool_call")
//   - *ToolCallUpdate ("tool_call_update")
//   - *Plan ("plan")
//   - *AvailableCommandsUpdate ("available_commands_update")
//   - *CurrentModeUpdate ("current_mode_update")
//   - *ConfigOptionUpdate ("config_option_update")
//   - *SessionInfoUpdate ("session_info_update")
//   - *UsageUpdate ("usage_update")
//   - unstable (schema.unstable.json; may change): *PlanUpdate
//     ("plan_update"), *PlanRemoved ("plan_removed"), *Notice ("notice"),
//     *CompactionUpdate ("compaction_update"), *CompactionSummaryChunk
//     ("compaction_summary_chunk")
//   - *UnknownUpdate (any other kind; the raw JSON is kept)
//
// New kinds keep appearing within v1 without a capability, so an unknown kind
// is never an error. A known kind whose required field is missing or malformed
// is: it is never guessed into shape.
type Update interface {
	// UpdateKind is the "sessionUpdate" value. (It is not called Kind
	// because ToolCall and ToolCallUpdate have a Kind field.)
	UpdateKind() string
	isUpdate()
}

func (*UserMessageChunk) isUpdate()        {}
func (*AgentMessageChunk) isUpdate()       {}
func (*AgentThoughtChunk) isUpdate()       {}
func (*ToolCall) isUpdate()                {}
func (*ToolCallUpdate) isUpdate()          {}
func (*Plan) isUpdate()                    {}
func (*AvailableCommandsUpdate) isUpdate() {}
func (*CurrentModeUpdate) isUpdate()       {}
func (*ConfigOptionUpdate) isUpdate()      {}
func (*SessionInfoUpdate) isUpdate()       {}
func (*UsageUpdate) isUpdate()             {}
func (*UnknownUpdate) isUpdate()           {}

func (*UserMessageChunk) UpdateKind() string        { return "user_message_chunk" }
func (*AgentMessageChunk) UpdateKind() string       { return "agent_message_chunk" }
func (*AgentThoughtChunk) UpdateKind() string       { return "agent_thought_chunk" }
func (*ToolCall) UpdateKind() string                { return "tool_call" }
func (*ToolCallUpdate) UpdateKind() string          { return "tool_call_update" }
func (*Plan) UpdateKind() string                    { return "plan" }
func (*AvailableCommandsUpdate) UpdateKind() string { return "available_commands_update" }
func (*CurrentModeUpdate) UpdateKind() string       { return "current_mode_update" }
func (*ConfigOptionUpdate) UpdateKind() string      { return "config_option_update" }
func (*SessionInfoUpdate) UpdateKind() string       { return "session_info_update" }
func (*UsageUpdate) UpdateKind() string             { return "usage_update" }
func (u *UnknownUpdate) UpdateKind() string         { return u.Kind }

// UserMessageChunk is one content block of a user message: the echo of a
// prompt, or history replayed by session/load. MessageID is optional ("" =
// none); chunks with the same ID belong to one message. A malformed messageId
// reads as none; content is required and strict.
type UserMessageChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID string          `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// AgentMessageChunk is one content block of the agent's reply; see
// [UserMessageChunk] for MessageID.
type AgentMessageChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID string          `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// AgentThoughtChunk is one content block of the agent's reasoning; see
// [UserMessageChunk] for MessageID.
type AgentThoughtChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID string          `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ToolCall creates (announces) a tool call. ToolCallID and Title are required.
// Kind and Status are lenient: a non-string reads as "" (= other / pending),
// an unknown string is kept. Content and Locations skip invalid items;
// nil means the agent sent none. RawInput and RawOutput are any JSON value,
// kept raw with numbers intact.
type ToolCall struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title"`
	// Name is the tool's programmatic name, "" when the agent sent none.
	// Unstable: follows schema.unstable.json; may change.
	Name      string             `json:"name,omitempty"`
	Kind      ToolKind           `json:"kind,omitempty"`
	Status    ToolCallStatus     `json:"status,omitempty"`
	Content   []ToolCallContent  `json:"content,omitzero"`
	Locations []ToolCallLocation `json:"locations,omitzero"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
	// Cancellable: the agent advertised capabilities.cancel, so
	// Session.CancelToolCall may cancel it (ACP v2 only: a v2 upsert that
	// creates the tool call). Unstable: ACP v2 is in Preview; may change.
	Cancellable bool `json:"cancellable,omitempty" schema:"v2"`
}

// ToolCallUpdate patches a tool call; it is also the toolCall of a
// session/request_permission. Only ToolCallID is required. For every other
// field nil means "unchanged": v1 sends absent and null alike and cannot clear
// a field. Content and Locations, when non-nil, REPLACE the whole list; a
// non-nil empty slice (wire "[]") empties it. Malformed optional fields read
// as unchanged; invalid list items are dropped.
type ToolCallUpdate struct {
	ToolCallID string  `json:"toolCallId"`
	Title      *string `json:"title,omitempty"`
	// Name is the tool's programmatic name (nil: unchanged). Unstable:
	// follows schema.unstable.json; may change.
	Name      *string            `json:"name,omitempty"`
	Kind      *ToolKind          `json:"kind,omitempty"`
	Status    *ToolCallStatus    `json:"status,omitempty"`
	Content   []ToolCallContent  `json:"content,omitzero"`
	Locations []ToolCallLocation `json:"locations,omitzero"`
	RawInput  json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput json.RawMessage    `json:"rawOutput,omitempty"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
	// Cancellable, when non-nil, says whether the tool call now accepts
	// tool_call/cancel (ACP v2's capabilities: an object replaces, null
	// clears; a cancel member present and not null means cancellable).
	// Never set by a v1 agent. Unstable: ACP v2 is in Preview; may change.
	Cancellable *bool `json:"cancellable,omitempty" schema:"v2"`
}

// Plan is the agent's complete plan; it replaces the previous one. Entries
// is required (a malformed list reads as empty; invalid entries are dropped).
type Plan struct {
	Entries []PlanEntry     `json:"entries"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate is the complete list of slash commands; it replaces
// the previous one. Invalid entries are dropped.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              json.RawMessage    `json:"_meta,omitempty"`
}

// CurrentModeUpdate says the agent switched its mode. The schema's key is
// currentModeId; "modeId", which a doc example shows, is accepted on input.
type CurrentModeUpdate struct {
	CurrentModeID string          `json:"currentModeId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// ConfigOptionUpdate is the complete list of config options; it replaces the
// previous one. Invalid options are dropped; unknown types are kept.
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// SessionInfoUpdate patches session metadata: an absent field is unchanged,
// null clears it, a value replaces it. A malformed value reads as absent.
type SessionInfoUpdate struct {
	Title     Field[string]   `json:"title,omitzero"`
	UpdatedAt Field[string]   `json:"updatedAt,omitzero"` // ISO 8601
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// UsageUpdate is a snapshot of context usage: Used tokens of a Size-token
// window, and optionally the session's cumulative cost. used and size are
// required; a malformed cost reads as absent.
type UsageUpdate struct {
	Used uint64          `json:"used"`
	Size uint64          `json:"size"`
	Cost *Cost           `json:"cost,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Cost is an amount of money in an ISO 4217 currency.
type Cost struct {
	Amount   float64         `json:"amount"`
	Currency string          `json:"currency"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// UnknownUpdate is an update of a kind this package does not know (or, when
// returned together with an error by the decoder, a known kind that failed
// to decode). Kind is its "sessionUpdate" value; Raw is the whole update
// object as received, re-sent byte for byte.
type UnknownUpdate struct {
	Kind string
	Raw  json.RawMessage
}

// SessionNotification is the params of session/update.
//
// UnmarshalJSON requires sessionId and an update object with a string
// "sessionUpdate". An update of an unknown kind decodes as *UnknownUpdate
// without error. A known kind that is malformed yields an error, but the
// notification is still filled in, with the update as *UnknownUpdate, so a
// caller may log the error and go on.
type SessionNotification struct {
	SessionID string          `json:"sessionId"`
	Update    Update          `json:"update"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ---- encoding ----

type chunkBody struct {
	Kind      string          `json:"sessionUpdate"`
	Content   ContentBlock    `json:"content"`
	MessageID string          `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

func marshalChunk(kind string, c ContentBlock, id string, meta json.RawMessage) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("acp: %s: Content is nil", kind)
	}
	return json.Marshal(chunkBody{kind, c, id, meta})
}

func (u UserMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalChunk("user_message_chunk", u.Content, u.MessageID, u.Meta)
}

func (u AgentMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalChunk("agent_message_chunk", u.Content, u.MessageID, u.Meta)
}

func (u AgentThoughtChunk) MarshalJSON() ([]byte, error) {
	return marshalChunk("agent_thought_chunk", u.Content, u.MessageID, u.Meta)
}

func (u ToolCall) MarshalJSON() ([]byte, error) {
	type body ToolCall
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"tool_call", body(u)})
}

// MarshalJSON writes "sessionUpdate":"tool_call_update". Inside a
// [RequestPermissionRequest] the tool call is written without it.
func (u ToolCallUpdate) MarshalJSON() ([]byte, error) {
	type body ToolCallUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"tool_call_update", body(u)})
}

func (u Plan) MarshalJSON() ([]byte, error) {
	type body Plan
	u.Entries = orEmpty(u.Entries)
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"plan", body(u)})
}

func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type body AvailableCommandsUpdate
	u.AvailableCommands = orEmpty(u.AvailableCommands)
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"available_commands_update", body(u)})
}

func (u CurrentModeUpdate) MarshalJSON() ([]byte, error) {
	type body CurrentModeUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"current_mode_update", body(u)})
}

func (u ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type body ConfigOptionUpdate
	u.ConfigOptions = orEmpty(u.ConfigOptions)
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"config_option_update", body(u)})
}

func (u SessionInfoUpdate) MarshalJSON() ([]byte, error) {
	type body SessionInfoUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"session_info_update", body(u)})
}

func (u UsageUpdate) MarshalJSON() ([]byte, error) {
	type body UsageUpdate
	return json.Marshal(struct {
		Kind string `json:"sessionUpdate"`
		body
	}{"usage_update", body(u)})
}

// MarshalJSON returns Raw unchanged (or a bare {"sessionUpdate":...} when Raw
// is empty).
func (u UnknownUpdate) MarshalJSON() ([]byte, error) {
	return marshalRaw(u.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Kind string `json:"sessionUpdate"`
		}{u.Kind})
	})
}

func (n SessionNotification) MarshalJSON() ([]byte, error) {
	if n.Update == nil {
		return nil, fmt.Errorf("acp: session notification: Update is nil")
	}
	type body SessionNotification
	return json.Marshal(body(n))
}

// ---- decoding ----

// malformedUpdate pairs err with the raw update, when the bytes are at least
// a JSON object, for the caller to keep.
func malformedUpdate(data []byte, err error) (Update, error) {
	if jsonObject(data) != nil {
		return nil, err
	}
	kind, _, _ := jsonDiscriminator(data, "sessionUpdate")
	return &UnknownUpdate{Kind: string(kind), Raw: rawCopy(data)}, err
}

// UnmarshalJSON decodes the body of the update ("sessionUpdate" is not
// checked). currentModeId (or, failing that, modeId) is required.
func (u *CurrentModeUpdate) UnmarshalJSON(b []byte) error {
	var w struct {
		CurrentModeID wireStr  `json:"currentModeId"`
		ModeID        wireStr  `json:"modeId"`
		Meta          wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("current_mode_update", err)
	}
	id := w.CurrentModeID
	if !id.ok {
		id = w.ModeID
	}
	if !id.ok {
		return errMissing("current_mode_update", "currentModeId")
	}
	*u = CurrentModeUpdate{CurrentModeID: id.v, Meta: w.Meta.raw()}
	return nil
}

// updateField decodes an Update inside another wire struct, keeping a
// malformed known kind as unknown next to its error.
type updateField struct {
	v   Update
	err error
}

func (f *updateField) UnmarshalJSON(b []byte) error {
	f.v, f.err = decodeUpdate(b)
	return nil
}

// UnmarshalJSON: see [SessionNotification].
func (n *SessionNotification) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID wireStr     `json:"sessionId"`
		Update    updateField `json:"update"`
		Meta      wireMeta    `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("session notification", err)
	}
	if !w.SessionID.ok {
		return errMissing("session notification", "sessionId")
	}
	*n = SessionNotification{SessionID: w.SessionID.v, Update: w.Update.v, Meta: w.Meta.raw()}
	if w.Update.v == nil && w.Update.err == nil {
		return errMissing("session notification", "update")
	}
	return w.Update.err
}

// DecodeNotification decodes the params of a session/update notification
// from an agent speaking protocol version 1 or 2 (0 reads as 1): the one
// way into the Update union from the wire, used by the client, the
// gateway, the trace viewer and acptest alike. In version 2 the kinds v2
// defines or redefines decode from v2's wire shapes onto the same model
// types; every other kind as in version 1.
//
// An update that does not decode is kept as *[UnknownUpdate] (never
// mis-decoded into another kind) and returned with the error; the error
// alone, with no update, means the params have no update object. params
// must be valid JSON, as the params of a decoded JSON-RPC message always
// are: it is not checked again. Nothing returned aliases params.
func DecodeNotification(version int, params []byte) (SessionNotification, error) {
	var n SessionNotification
	var err error
	if version == 2 {
		n.SessionID, n.Update, n.Meta, err = decodeNotificationV2(params)
	} else {
		n.SessionID, n.Update, n.Meta, err = decodeNotificationMeta(params)
	}
	return n, err
}

// decodeNotification decodes the params of a session/update. An update that
// does not decode is kept as *UnknownUpdate (never mis-decoded into another
// kind) and the error is returned for the diagnostics. params must be valid
// JSON (the wire hands over only validated lines) and may alias a read
// buffer: nothing returned refers to it.
//
// Text chunks, the bulk of any turn, take a one-pass path; every other
// update is decoded once by decodeUpdate; anything irregular falls back to
// the encoding/json path, which is the reference for results and errors.
func decodeNotification(params []byte) (string, Update, error) {
	sid, u, _, err := decodeNotificationMeta(params)
	return sid, u, err
}

// decodeNotificationMeta is decodeNotification that also returns the
// notification's own _meta (beside sessionId and update), when it is an
// object.
func decodeNotificationMeta(params []byte) (string, Update, json.RawMessage, error) {
	if sid, upd, meta, ok := splitNotification(params); ok {
		// The tool call decoder first: it gives up at the discriminator,
		// usually the first member, where the chunk scan walks the whole
		// update before it does.
		if u, ok := decodeToolCallUpdate(upd); ok {
			return sid, u, meta, nil
		}
		if u, ok := decodeTextChunk(upd); ok {
			return sid, u, meta, nil
		}
		if u, ok := decodeToolCall(upd); ok { // rarer than a chunk: after it
			return sid, u, meta, nil
		}
		if u, err := decodeUpdate(upd); err == nil {
			return sid, u, meta, nil
		}
	}
	sid, u, meta, err := decodeNotificationSlow(params)
	return sid, u, meta, err
}

func decodeNotificationSlow(params []byte) (string, Update, json.RawMessage, error) {
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &n); err != nil {
		return "", nil, nil, err
	}
	meta := n.Meta
	if len(meta) == 0 || meta[0] != '{' {
		meta = nil // only an object is a _meta
	}
	if len(n.Update) == 0 {
		return n.SessionID, nil, meta, errors.New("no update")
	}
	u, err := decodeUpdate(n.Update)
	if err != nil {
		var probe struct {
			Kind string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(n.Update, &probe)
		return n.SessionID, &UnknownUpdate{Kind: probe.Kind, Raw: n.Update}, meta, err
	}
	return n.SessionID, u, meta, nil
}

// splitNotification finds sessionId (a plain string) and update in
// validated params; ok is false for any shape it does not handle exactly.
func splitNotification(params []byte) (sid string, update, meta []byte, ok bool) {
	in, update, meta, ok := jsonscan.SplitNotification(params)
	return string(in), update, meta, ok
}

// Chunks with a text block are allocated in one piece with their block.
type (
	agentTextChunk struct {
		u AgentMessageChunk
		t TextContent
	}
	thoughtTextChunk struct {
		u AgentThoughtChunk
		t TextContent
	}
	userTextChunk struct {
		u UserMessageChunk
		t TextContent
	}
)

// AgentMessageText returns an agent_message_chunk of one text block with
// no annotations, the chunk and its block in one allocation: the bulk of
// every turn, as the decoder makes it.
func AgentMessageText(messageID, text string) *AgentMessageChunk {
	c := &agentTextChunk{t: TextContent{Text: text}}
	c.u = AgentMessageChunk{Content: &c.t, MessageID: messageID}
	return &c.u
}

// AgentThoughtText is [AgentMessageText] for an agent_thought_chunk.
func AgentThoughtText(messageID, text string) *AgentThoughtChunk {
	c := &thoughtTextChunk{t: TextContent{Text: text}}
	c.u = AgentThoughtChunk{Content: &c.t, MessageID: messageID}
	return &c.u
}

// UserMessageText is [AgentMessageText] for a user_message_chunk.
func UserMessageText(messageID, text string) *UserMessageChunk {
	c := &userTextChunk{t: TextContent{Text: text}}
	c.u = UserMessageChunk{Content: &c.t, MessageID: messageID}
	return &c.u
}

// decodeTextChunk decodes a validated message, thought or user chunk whose
// content is a bare text block ({"type":"text","text":...}, no annotations
// or _meta), in one pass. ok is false for anything else, which then takes
// the general path; the result is the same as decodeUpdate's.
func decodeTextChunk(data []byte) (Update, bool) {
	kc, msgID, text, ok := jsonscan.TextChunk(data)
	if !ok {
		return nil, false
	}
	var id string
	if msgID != nil {
		if id, ok = jsonscan.Unquote(msgID); !ok {
			return nil, false
		}
	}
	t, ok := jsonscan.Unquote(text)
	if !ok {
		return nil, false
	}
	switch kc {
	case jsonscan.ChunkMessage:
		return AgentMessageText(id, t), true
	case jsonscan.ChunkThought:
		return AgentThoughtText(id, t), true
	}
	return UserMessageText(id, t), true
}
