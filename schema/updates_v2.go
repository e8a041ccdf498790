package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/internal/v2wire"
)

// The update kinds of ACP v2 that v1 has none of, as model types. A v2
// agent's updates decode into the same [Update] values as a v1 agent's
// where the kinds agree (message chunks, plans, commands, config, session
// info, usage); tool_call_update, which v2 makes an upsert, decodes into
// [*ToolCallUpdate] with v2's null clearing the field. These types are
// only ever sent by a v2 agent. Unstable: ACP v2 is in Preview; may change.

// BackgroundWork is one item of StateUpdate.Background: a terminal
// (TerminalID set), a tool call (ToolCallID set) or a child session
// (SessionID set) whose work continues
// independently of the foreground; Type is the wire's discriminator. It
// names the work; what the client knows of it is joined in
// SessionState.Activity ([BackgroundItem]).
type BackgroundWork struct {
	Type       string `json:"type"`
	TerminalID string `json:"terminalId,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// SessionID is set for a child session (type "subagent"; the schema
	// lists it as unstable).
	SessionID string          `json:"sessionId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// AgentMessage ("agent_message") upserts a whole agent message by id:
// Content nil leaves the content unchanged (the wire omitted it), a
// non-nil slice replaces it (empty: cleared, wire null or []). Later chunks
// with the same id append. Unstable: ACP v2 is in Preview; may change.
type AgentMessage struct {
	MessageID string          `json:"messageId"`
	Content   []ContentBlock  `json:"content,omitzero"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// UserMessage ("user_message") upserts a whole user message (the echo of
// a prompt, whose id the prompt's answer names); see [AgentMessage].
// Unstable: ACP v2 is in Preview; may change.
type UserMessage struct {
	MessageID string          `json:"messageId"`
	Content   []ContentBlock  `json:"content,omitzero"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// AgentThought ("agent_thought") upserts a whole thought; see
// [AgentMessage]. Unstable: ACP v2 is in Preview; may change.
type AgentThought struct {
	MessageID string          `json:"messageId"`
	Content   []ContentBlock  `json:"content,omitzero"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ToolCallContentChunk ("tool_call_content_chunk") appends one content
// item to a tool call's content. Unstable: ACP v2 is in Preview; may
// change.
type ToolCallContentChunk struct {
	ToolCallID string          `json:"toolCallId"`
	Content    ToolCallContent `json:"content"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalUpdate ("terminal_update") upserts an agent-owned terminal, for
// display only: the client runs nothing. Nil fields are unchanged; Output,
// when non-nil, replaces the output so far. ExitStatus set means the
// terminal exited. Unstable: ACP v2 is in Preview; may change.
type TerminalUpdate struct {
	TerminalID string             `json:"terminalId"`
	Command    *string            `json:"command,omitempty"`
	Cwd        *string            `json:"cwd,omitempty"`
	Output     []byte             `json:"output,omitempty"`
	ExitStatus *AgentTerminalExit `json:"exitStatus,omitempty"`
	// Cancellable, when non-nil, says whether the terminal now accepts
	// terminal/cancel (capabilities.cancel; null clears it to false).
	Cancellable *bool           `json:"cancellable,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// AgentTerminalExit is how an agent-owned terminal exited: its exit code
// (v2 allows negative ones, e.g. signed Windows codes) and signal, each nil
// when unknown. Unstable: ACP v2 is in Preview; may change.
type AgentTerminalExit struct {
	ExitCode *int64  `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
}

// TerminalOutputChunk ("terminal_output_chunk") appends output bytes to
// an agent-owned terminal (display only). Unstable: ACP v2 is in Preview;
// may change.
type TerminalOutputChunk struct {
	TerminalID string          `json:"terminalId"`
	Data       []byte          `json:"data"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

func (*AgentMessage) isUpdate()         {}
func (*UserMessage) isUpdate()          {}
func (*AgentThought) isUpdate()         {}
func (*ToolCallContentChunk) isUpdate() {}
func (*TerminalUpdate) isUpdate()       {}
func (*TerminalOutputChunk) isUpdate()  {}

func (*AgentMessage) UpdateKind() string         { return "agent_message" }
func (*UserMessage) UpdateKind() string          { return "user_message" }
func (*AgentThought) UpdateKind() string         { return "agent_thought" }
func (*ToolCallContentChunk) UpdateKind() string { return "tool_call_content_chunk" }
func (*TerminalUpdate) UpdateKind() string       { return "terminal_update" }
func (*TerminalOutputChunk) UpdateKind() string  { return "terminal_output_chunk" }

// isV2Kind reports whether a session/update of a v2 agent decodes through
// decodeUpdateV2 rather than the v1 decoders.
func isV2Kind(kind []byte) bool {
	switch string(kind) { // no allocation: the compiler compares in place
	case "state_update", "agent_message", "user_message", "agent_thought", "tool_call_content_chunk",
		"terminal_update", "terminal_output_chunk", "tool_call_update":
		return true
	}
	return false
}

// decodeUpdateV2 decodes an update of one of the v2 kinds (isV2Kind) from
// its generated wire type and maps it onto the model.
func decodeUpdateV2(kind string, raw []byte) (Update, error) {
	switch kind {
	case "state_update":
		u := &StateUpdate{}
		if err := json.Unmarshal(raw, u); err != nil {
			return nil, err
		}
		var w struct {
			Background json.RawMessage `json:"background"`
		}
		_ = json.Unmarshal(raw, &w)
		// Lenient (x-deserialize-default-on-error): malformed background
		// reads as none.
		var bg []BackgroundWork
		if json.Unmarshal(w.Background, &bg) == nil && bg != nil {
			u.Background = bg
		}
		return u, nil
	case "agent_message", "user_message", "agent_thought":
		var w v2wire.AgentMessage // the three share the shape
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		if w.MessageID == "" {
			return nil, errMissing(kind, "messageId")
		}
		content, err := v2Content(w.Content)
		if err != nil {
			return nil, err
		}
		meta := v2Meta(w.Meta)
		switch kind {
		case "agent_message":
			return &AgentMessage{MessageID: string(w.MessageID), Content: content, Meta: meta}, nil
		case "user_message":
			return &UserMessage{MessageID: string(w.MessageID), Content: content, Meta: meta}, nil
		}
		return &AgentThought{MessageID: string(w.MessageID), Content: content, Meta: meta}, nil
	case "tool_call_content_chunk":
		var w v2wire.ToolCallContentChunk
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		if w.ToolCallID == "" {
			return nil, errMissing(kind, "toolCallId")
		}
		c, err := toolCallContentV2(w.Content)
		if err != nil {
			return nil, err
		}
		return &ToolCallContentChunk{ToolCallID: string(w.ToolCallID), Content: c, Meta: v2Meta(w.Meta)}, nil
	case "tool_call_update":
		// Without a null (v2: clear) or a diff (v2's shape differs), a v2
		// upsert reads exactly as v1's patch: the generated v1 decoder
		// takes it, with v1's allocations (BenchmarkFoldV1V2).
		if fastUpsert(raw) {
			if u, err := decodeUpdate(raw); err == nil && upsertReadAsV2(u, raw) {
				return u, nil
			}
		}
		return decodeToolCallUpsert(raw)
	case "terminal_update":
		var w v2wire.TerminalUpdate
		badCaps := false
		if err := json.Unmarshal(raw, &w); err != nil {
			if raw, badCaps = withoutBadCapabilities(raw); !badCaps {
				return nil, err
			}
			w = v2wire.TerminalUpdate{}
			if err := json.Unmarshal(raw, &w); err != nil {
				return nil, err
			}
		}
		if w.TerminalID == "" {
			return nil, errMissing(kind, "terminalId")
		}
		u := &TerminalUpdate{TerminalID: string(w.TerminalID), Meta: v2Meta(w.Meta)}
		if w.Command.Set {
			u.Command = new(string)
			*u.Command = w.Command.V
		}
		if w.Cwd.Set {
			u.Cwd = new(string)
			*u.Cwd = string(w.Cwd.V)
		}
		if w.Output.Set {
			u.Output = []byte{}
			if !w.Output.Null {
				b, err := base64.StdEncoding.DecodeString(w.Output.V.Data)
				if err != nil {
					return nil, fmt.Errorf("terminal_update output: %w", err)
				}
				u.Output = b
			}
		}
		if w.Capabilities.Set || badCaps {
			can := !badCaps && !w.Capabilities.Null && w.Capabilities.V.Cancel.Set && !w.Capabilities.V.Cancel.Null
			u.Cancellable = &can
		}
		if w.ExitStatus.Set && !w.ExitStatus.Null {
			es := &AgentTerminalExit{}
			if w.ExitStatus.V.ExitCode.Set && !w.ExitStatus.V.ExitCode.Null {
				n := w.ExitStatus.V.ExitCode.V
				es.ExitCode = &n
			}
			if w.ExitStatus.V.Signal.Set && !w.ExitStatus.V.Signal.Null {
				sig := w.ExitStatus.V.Signal.V
				es.Signal = &sig
			}
			u.ExitStatus = es
		}
		return u, nil
	case "terminal_output_chunk":
		var w v2wire.TerminalOutputChunk
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		if w.TerminalID == "" {
			return nil, errMissing(kind, "terminalId")
		}
		b, err := base64.StdEncoding.DecodeString(w.Data)
		if err != nil {
			return nil, fmt.Errorf("terminal_output_chunk data: %w", err)
		}
		return &TerminalOutputChunk{TerminalID: string(w.TerminalID), Data: b, Meta: v2Meta(w.Meta)}, nil
	}
	return nil, fmt.Errorf("not a v2 update kind: %s", kind)
}

func v2Meta(p v2wire.Patch[v2wire.Raw]) json.RawMessage {
	if !p.Set || p.Null {
		return nil
	}
	return p.V
}

// v2Content maps an upsert's content: omitted keeps (nil), null clears
// (empty), an array replaces; invalid items are dropped.
func v2Content(p v2wire.Patch[[]v2wire.ContentBlock]) ([]ContentBlock, error) {
	if !p.Set {
		return nil, nil
	}
	out := make([]ContentBlock, 0, len(p.V))
	for _, raw := range p.V {
		b, err := unmarshalContentBlock(raw)
		if err != nil {
			continue // x-deserialize-skip-invalid-items
		}
		out = append(out, b)
	}
	return out, nil
}

// decodeToolCallUpsert maps v2's tool_call_update, an upsert: omitted keeps,
// a value replaces, null clears to the field's default (title, name "";
// kind other; status pending; content, locations emptied; rawInput,
// rawOutput JSON null). A tool call id not seen before starts at the
// defaults, announced (not Unannounced as a v1 update of an unknown id).
func decodeToolCallUpsert(raw []byte) (Update, error) {
	var w v2wire.ToolCallUpdate
	badCaps := false
	if err := json.Unmarshal(raw, &w); err != nil {
		if raw, badCaps = withoutBadCapabilities(raw); !badCaps {
			return nil, err
		}
		w = v2wire.ToolCallUpdate{}
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
	}
	if w.ToolCallID == "" {
		return nil, errMissing("tool_call_update", "toolCallId")
	}
	u := &ToolCallUpdate{ToolCallID: string(w.ToolCallID), Meta: v2Meta(w.Meta)}
	str := func(p v2wire.Patch[string]) *string {
		if !p.Set {
			return nil
		}
		s := p.V
		return &s
	}
	u.Title, u.Name = str(w.Title), str(w.Name)
	// kind and status are open unions (raw): a string is kept, null or a
	// malformed value reads as the default (x-deserialize-default-on-error).
	if w.Kind.Set {
		k := ToolKindOther
		var v string
		if !w.Kind.Null && json.Unmarshal(w.Kind.V, &v) == nil && v != "" {
			k = ToolKind(v)
		}
		u.Kind = &k
	}
	if w.Status.Set {
		st := ToolCallStatusPending
		var v string
		if !w.Status.Null && json.Unmarshal(w.Status.V, &v) == nil && v != "" {
			st = ToolCallStatus(v)
		}
		u.Status = &st
	}
	if w.Content.Set {
		u.Content = make([]ToolCallContent, 0, len(w.Content.V))
		for _, r := range w.Content.V {
			if c, err := toolCallContentV2(r); err == nil {
				u.Content = append(u.Content, c)
			}
		}
	}
	if w.Locations.Set {
		u.Locations = []ToolCallLocation{}
		for _, l := range w.Locations.V {
			loc := ToolCallLocation{Path: string(l.Path)}
			if l.Line.Set && !l.Line.Null && l.Line.V >= 0 && l.Line.V <= 1<<32-1 {
				n := uint32(l.Line.V)
				loc.Line = &n
			}
			u.Locations = append(u.Locations, loc)
		}
	}
	// rawInput and rawOutput are any JSON value, null included: a present
	// key replaces (null reads as null).
	u.RawInput, u.RawOutput = rawField(raw, "rawInput"), rawField(raw, "rawOutput")
	// capabilities: an object replaces the whole value, null clears it (a
	// new tool call starts with none); cancel present and not null means
	// cancellable, anything malformed none (ToolCallCapabilities: "the
	// Client never sends a request the Agent did not advertise").
	if w.Capabilities.Set || badCaps {
		can := !badCaps && !w.Capabilities.Null && w.Capabilities.V.Cancel.Set && !w.Capabilities.V.Cancel.Null
		u.Cancellable = &can
	}
	return u, nil
}

// rawField returns the value of key in the object raw, nil when absent.
func rawField(raw []byte, key string) json.RawMessage {
	v, ok, err := jsonscan.FindKey(raw, key)
	if !ok || err != nil {
		return nil
	}
	return rawCopy(v)
}

// decodeNotificationV2 is decodeNotificationMeta for a v2 agent: the kinds
// v2 defines or redefines (isV2Kind) decode from the v2 wire types, every
// other kind as in v1. A v2 kind that does not decode is kept as unknown,
// with the error, as in v1.
func decodeNotificationV2(params []byte) (string, Update, json.RawMessage, error) {
	sid, upd, meta, ok := splitNotification(params)
	if !ok {
		var n struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
			Meta      json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(params, &n); err != nil || len(n.Update) == 0 {
			return decodeNotificationSlow(params)
		}
		sid, upd, meta = n.SessionID, n.Update, n.Meta
		if len(meta) == 0 || meta[0] != '{' {
			meta = nil
		}
	}
	kind, _, _ := jsonDiscriminator(upd, "sessionUpdate")
	if string(kind) == "config_option_update" {
		u, err := decodeUpdate(configIDsV1(upd))
		if err != nil {
			return sid, &UnknownUpdate{Kind: string(kind), Raw: rawCopy(upd)}, meta, err
		}
		return sid, u, meta, nil
	}
	if string(kind) == "subagent_update" {
		u, err := decodeUpdate(upd)
		if err != nil {
			return sid, &UnknownUpdate{Kind: string(kind), Raw: rawCopy(upd)}, meta, err
		}
		subagentNullsV2(u, upd)
		return sid, u, meta, nil
	}
	if string(kind) == "tool_call_update" && fastUpsert(upd) {
		// The one walk gives what decodeUpdate gives: when v2 reads its
		// result otherwise, so would it, and only the v2 decoder is left.
		u, ok := decodeToolCallUpdate(upd)
		if !ok {
			var err error
			u, err = decodeUpdate(upd)
			ok = err == nil
		}
		if ok && upsertReadAsV2(u, upd) {
			return sid, u, meta, nil
		}
	}
	if !isV2Kind(kind) {
		return decodeNotificationMeta(params)
	}
	u, err := decodeUpdateV2(string(kind), upd)
	if err != nil {
		return sid, &UnknownUpdate{Kind: string(kind), Raw: rawCopy(upd)}, meta, err
	}
	return sid, u, meta, nil
}

// subagentNullsV2 maps the nulls of a v2 subagent_update that v1's
// decoder reads as absent: in v2, cwd or additionalDirectories null
// clears the reported value, read as "" and ClearAdditionalDirectories
// (see SubagentUpdate.CWD), kept apart from additionalDirectories []. They
// are read through the type generated from the unstable v2 schema
// (v2wire.SubagentUpdate), whose Patch fields tell omitted, null and a
// value apart. That type is strict where the schema lets a malformed
// title, description, capabilities or state read as absent (v1's decoder
// did that already); then the two members, strict in the schema too, are
// read alone with the same generated field types.
func subagentNullsV2(u Update, raw []byte) {
	su, ok := u.(*SubagentUpdate)
	if !ok {
		return
	}
	var w v2wire.SubagentUpdate
	cwd, dirs := &w.Cwd, &w.AdditionalDirectories
	if json.Unmarshal(raw, &w) != nil {
		var strict struct {
			Cwd                   v2wire.Patch[v2wire.AbsolutePath]   `json:"cwd"`
			AdditionalDirectories v2wire.Patch[[]v2wire.AbsolutePath] `json:"additionalDirectories"`
		}
		if json.Unmarshal(raw, &strict) != nil {
			return
		}
		cwd, dirs = &strict.Cwd, &strict.AdditionalDirectories
	}
	if su.CWD == nil && cwd.Set && cwd.Null {
		su.CWD = new(string)
	}
	if su.AdditionalDirectories == nil && dirs.Set && dirs.Null {
		su.ClearAdditionalDirectories = true
	}
}

// toolCallContentV2 decodes one tool call content item of a v2 agent. v2's
// diff is a list of file changes (and an optional patch), not v1's path
// with old and new text: it maps onto DiffContent's Changes and Patch
// (decodeDiffV2). A diff without changes but in v1's shape (path,
// newText) is read as v1's, leniently.
func toolCallContentV2(raw []byte) (ToolCallContent, error) {
	if kind, _, _ := jsonDiscriminator(raw, "type"); string(kind) == "diff" {
		if _, ok, _ := jsonscan.FindKey(raw, "changes"); ok {
			return decodeDiffV2(raw)
		}
	}
	return unmarshalToolCallContent(raw)
}

// fastUpsert reports whether a v2 tool_call_update reads exactly as v1's
// patch: it has no null (v2: clear; v1: unchanged), no diff (v2's diff
// has another shape) and no capabilities (v1 has none). Then the generated v1 decoder takes it, with v1's
// allocations (BenchmarkFoldV1V2). A string that merely contains the
// words takes the v2 decoder, which gives the same result.
func fastUpsert(raw []byte) bool {
	return !bytes.Contains(raw, []byte("null")) && !containsQuoted(raw, []byte(`diff"`)) &&
		!containsQuoted(raw, []byte(`capabilities"`)) // v1 has none: its decoder would drop them
}

// upsertReadAsV2 reports whether u, a v2 tool_call_update (raw) that a
// v1 decoder read, reads as v2 reads it. The one difference fastUpsert
// cannot see in the bytes is in kind and status: v1 keeps an empty string
// and drops a value that is not a string, while v2 reads both as the
// field's default (ToolKindOther, ToolCallStatusPending), as it reads an
// unknown string. Checked on the result, so the common case (a non-empty
// string) costs two comparisons; a kind or status v1 left unset is
// looked for in the bytes, and a mere key "kind" elsewhere (in rawInput)
// only sends the update to the v2 decoder, which reads it the same.
func upsertReadAsV2(u Update, raw []byte) bool {
	t, ok := u.(*ToolCallUpdate)
	if !ok {
		return false
	}
	if t.Kind != nil && *t.Kind == "" || t.Status != nil && *t.Status == "" {
		return false
	}
	return (t.Kind != nil || !containsQuoted(raw, []byte(`kind"`))) &&
		(t.Status != nil || !containsQuoted(raw, []byte(`status"`)))
}

// containsQuoted reports whether raw holds w, which ends in a quote, just
// after a quote: bytes.Contains(raw, `"`+w), found by w's first byte, rarer
// in an update than the quote that starts each of its strings.
func containsQuoted(raw, w []byte) bool {
	for i := 1; i < len(raw); {
		j := bytes.Index(raw[i:], w)
		if j < 0 {
			return false
		}
		if raw[i+j-1] == '"' {
			return true
		}
		i += j + 1
	}
	return false
}

// withoutBadCapabilities is the slow path of an upsert that did not decode:
// when its capabilities are what is malformed, it returns the upsert
// without them and true. The schema reads malformed capabilities as none
// (ToolCallCapabilities, TerminalCapabilities: x-deserialize-default-on-error,
// "so the Client never sends a request the Agent did not advertise"),
// and the rest of the update stands.
func withoutBadCapabilities(raw []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw, false
	}
	caps, ok := m["capabilities"]
	if !ok {
		return raw, false
	}
	var w struct {
		Cancel v2wire.Patch[struct{}] `json:"cancel"`
	}
	if json.Unmarshal(caps, &w) == nil {
		return raw, false // well-formed: the error is elsewhere
	}
	delete(m, "capabilities")
	b, err := json.Marshal(m)
	if err != nil {
		return raw, false
	}
	return b, true
}
