package acptest

import (
	"encoding/json"

	"github.com/acpclient/acp/schema"
)

// This file holds the session/update senders of a Session and the
// builders of update objects (also usable in Options.History).

// Update sends a session/update notification for the session with the
// given update: a typed acp update (&schema.AgentMessageChunk{...},
// &schema.ToolCallUpdate{...}, ...), or any value that encodes to a JSON
// object — including what is not a valid update: unknown sessionUpdate
// kinds, unknown enum values and unknown tool-call ids are sent as given.
// Conversation updates are remembered for replay on session/load.
func (s *Session) Update(update any) error {
	b, err := marshal(update)
	if err != nil {
		return err
	}
	return s.send(b, true)
}

// UpdateAs sends a session/update bearing another session id on this
// connection: the updates of a child session the agent announced with a
// subagent_update on this one (see [SubagentUpdate]), or, in a hostile
// test, of any id at all. It is not remembered for replay.
func (s *Session) UpdateAs(sessionID string, update any) error {
	b, err := marshal(update)
	if err != nil {
		return err
	}
	return s.Notify(schema.MethodSessionUpdate, struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}{sessionID, b})
}

// SubagentUpdate builds a subagent_update announcing (the first time) or
// patching the child session childID with the members of patch (title,
// description, capabilities, state, cwd, _meta; a nil value sends null),
// for Session.Update on the parent.
func SubagentUpdate(childID string, patch map[string]any) map[string]any {
	u := map[string]any{"sessionUpdate": "subagent_update", "sessionId": childID}
	for k, v := range patch {
		u[k] = v
	}
	return u
}

func (s *Session) send(update []byte, remember bool) error {
	if s.isV2() {
		update = s.v2Form(update)
	}
	params := struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}{s.st.id, update}
	if err := s.Notify(schema.MethodSessionUpdate, params); err != nil {
		return err
	}
	if remember {
		s.remember(update)
	}
	return nil
}

// Say sends one agent_message_chunk with a text block.
func (s *Session) Say(text string) error { return s.Update(AgentMessage("", text)) }

// SayID sends one agent_message_chunk with a text block and a messageId.
func (s *Session) SayID(messageID, text string) error {
	return s.Update(AgentMessage(messageID, text))
}

// Think sends one agent_thought_chunk with a text block.
func (s *Session) Think(text string) error { return s.Update(AgentThought("", text)) }

// ThinkID sends one agent_thought_chunk with a text block and a messageId.
func (s *Session) ThinkID(messageID, text string) error {
	return s.Update(AgentThought(messageID, text))
}

// Stream sends n agent_message_chunk updates of the same text chunk, as
// fast as the client reads them. The frame is encoded once.
func (s *Session) Stream(n int, chunk string) error {
	b, err := marshal(AgentMessage("", chunk))
	if err != nil {
		return err
	}
	for range n {
		if err := s.send(b, true); err != nil {
			return err
		}
	}
	return nil
}

// ToolCallSpec sends a tool_call update creating tc. Kind and Status default
// to the spec's defaults ("other", "pending") when empty, by omission.
func (s *Session) ToolCall(tc ToolCallSpec) error {
	return s.Update(tc.object("tool_call"))
}

// UpdateToolCall sends a tool_call_update with the fields of tc that are
// set (ID is required). Content and Locations, when non-nil, replace the
// client's lists.
func (s *Session) UpdateToolCall(tc ToolCallSpec) error {
	return s.Update(tc.object("tool_call_update"))
}

// Plan sends a plan update with the complete list of entries.
func (s *Session) Plan(entries ...schema.PlanEntry) error {
	list := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		list = append(list, planEntry(e))
	}
	return s.Update(map[string]any{"sessionUpdate": "plan", "entries": list})
}

// Commands sends an available_commands_update with the complete list.
func (s *Session) Commands(cmds ...SlashCommand) error {
	list := make([]map[string]any, 0, len(cmds))
	for _, c := range cmds {
		m := map[string]any{"name": c.Name, "description": c.Description}
		if c.Hint != "" {
			m["input"] = map[string]any{"hint": c.Hint}
		}
		list = append(list, m)
	}
	return s.Update(map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": list})
}

// Mode sends a current_mode_update and makes modeID the session's current
// mode.
func (s *Session) Mode(modeID string) error {
	s.a.mu.Lock()
	if s.st.modes != nil {
		s.st.modes["currentModeId"] = modeID
	}
	s.a.mu.Unlock()
	return s.Update(map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": modeID})
}

// ConfigOptions sends a config_option_update with the complete option
// list. A non-nil options list first replaces the session's options; nil
// sends the current ones.
func (s *Session) ConfigOptions(options any) error {
	s.a.mu.Lock()
	if options != nil {
		s.st.config = cloneJSON[[]any](options)
	}
	list := s.Conn.configOut(cloneJSON[[]any](s.st.config))
	s.a.mu.Unlock()
	if list == nil {
		list = []any{}
	}
	return s.Update(map[string]any{"sessionUpdate": "config_option_update", "configOptions": list})
}

// Usage sends a usage_update (tokens in context, context window size).
func (s *Session) Usage(used, size uint64) error {
	return s.Update(map[string]any{"sessionUpdate": "usage_update", "used": used, "size": size})
}

// SessionInfo sends a session_info_update with a title, which
// session/list reports from then on.
func (s *Session) SessionInfo(title string) error {
	s.a.mu.Lock()
	s.st.title = title
	s.a.mu.Unlock()
	return s.Update(map[string]any{"sessionUpdate": "session_info_update", "title": title})
}

// AgentMessage returns an agent_message_chunk update with a text block;
// messageID "" omits the id.
func AgentMessage(messageID, text string) map[string]any {
	return chunk("agent_message_chunk", messageID, text)
}

// AgentThought returns an agent_thought_chunk update with a text block.
func AgentThought(messageID, text string) map[string]any {
	return chunk("agent_thought_chunk", messageID, text)
}

// UserMessage returns a user_message_chunk update with a text block, as
// replayed by session/load.
func UserMessage(messageID, text string) map[string]any {
	return chunk("user_message_chunk", messageID, text)
}

func chunk(kind, messageID, text string) map[string]any {
	m := map[string]any{"sessionUpdate": kind, "content": Text(text)}
	if messageID != "" {
		m["messageId"] = messageID
	}
	return m
}

// Text returns a text content block, like [schema.Text].
func Text(text string) map[string]any {
	return map[string]any{"type": "text", "text": text}
}

// ToolCallSpec says what the fake agent sends about a tool call, for
// [Session.ToolCall], [Session.UpdateToolCall] and
// [Session.RequestPermission]. Empty fields are omitted from the wire. It is
// not [schema.ToolCall], the client's decoded view: its fields take any value
// (raw content objects, unknown kinds) so a test can send what a real or
// hostile agent sends, and the same spec serves a create and a partial
// update.
type ToolCallSpec struct {
	ID        string // toolCallId, required
	Title     string
	Kind      schema.ToolKind       // "" omits it; any string is sent as given
	Status    schema.ToolCallStatus // "" omits it; any string is sent as given
	Content   []any                 // ToolCallContent items: ToolContent, Diff, TerminalContent, acp types (&schema.DiffContent{...}) or raw objects
	Locations []any                 // Location, schema.ToolCallLocation or raw objects
	RawInput  any
	RawOutput any
	Meta      any // _meta
}

func (tc ToolCallSpec) object(kind string) map[string]any {
	m := map[string]any{"toolCallId": tc.ID}
	if kind != "" {
		m["sessionUpdate"] = kind
	}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("title", tc.Title, tc.Title != "")
	set("kind", tc.Kind, tc.Kind != "")
	set("status", tc.Status, tc.Status != "")
	set("content", tc.Content, tc.Content != nil)
	set("locations", tc.Locations, tc.Locations != nil)
	set("rawInput", tc.RawInput, tc.RawInput != nil)
	set("rawOutput", tc.RawOutput, tc.RawOutput != nil)
	set("_meta", tc.Meta, tc.Meta != nil)
	return m
}

// ToolContent returns tool-call content holding a content block, like
// [schema.ToolContent] (note the spec's double nesting:
// {"type":"content","content":{"type":"text",…}}). block is any value that
// encodes to a content block: [Text], an acp block such as schema.Text(s), or
// a raw object.
func ToolContent(block any) map[string]any {
	return map[string]any{"type": "content", "content": block}
}

// Diff returns diff tool-call content, like [schema.DiffContent]. oldText nil
// means a new file.
func Diff(path string, oldText *string, newText string) map[string]any {
	m := map[string]any{"type": "diff", "path": path, "newText": newText}
	if oldText != nil {
		m["oldText"] = *oldText
	}
	return m
}

// TerminalContent returns tool-call content embedding a client terminal,
// like [schema.TerminalContent].
func TerminalContent(terminalID string) map[string]any {
	return map[string]any{"type": "terminal", "terminalId": terminalID}
}

// Location returns the location of path at line (nil: no line). Its
// line takes the type of [schema.ToolCallLocation].Line, and its result is
// that struct, so the location a test sends is also the one it expects in
// the client's state (ToolCallState.Locations): one value serves both.
func Location(path string, line *uint32) schema.ToolCallLocation {
	return schema.ToolCallLocation{Path: path, Line: line}
}

// planEntry is the wire object of e. Priority defaults to "medium" and
// Status to "pending", which the spec requires; Meta is sent when set.
func planEntry(e schema.PlanEntry) map[string]any {
	p, st := e.Priority, e.Status
	if p == "" {
		p = "medium"
	}
	if st == "" {
		st = "pending"
	}
	m := map[string]any{"content": e.Content, "priority": p, "status": st}
	if e.Meta != nil {
		m["_meta"] = e.Meta
	}
	return m
}

// SlashCommand is an available slash command; Hint, if set, becomes its input
// hint.
type SlashCommand struct {
	Name        string // without the leading "/"
	Description string
	Hint        string
}
