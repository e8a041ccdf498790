package acp

import (
	"encoding/json"
	"fmt"
)

// Wire types of commands, plans, prompts, permission and elicitation; see
// protocol.go for how they decode.

// ---- commands and plans ----

// AvailableCommand is a slash command; Name has no leading "/". A malformed
// input reads as nil.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        json.RawMessage        `json:"_meta,omitempty"`
}

// AvailableCommandInput says the command takes free text; Hint describes it.
type AvailableCommandInput struct {
	Hint string          `json:"hint"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanEntry is one task of a plan. All three fields are required strings;
// unknown priority and status values are kept.
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// ---- prompt ----

// PromptRequest is the params of session/prompt. Prompt is always sent (as
// [] when nil); image, audio and embedded resources need the matching
// promptCapabilities.
type PromptRequest struct {
	SessionID string          `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt. stopReason is required
// (an unknown value is kept); a malformed usage reads as nil.
type PromptResponse struct {
	StopReason StopReason      `json:"stopReason"`
	Usage      *Usage          `json:"usage,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// Usage is token usage reported with a prompt response. It is UNSTABLE in
// the spec (whether it counts the turn or the session is unresolved).
type Usage struct {
	TotalTokens       uint64          `json:"totalTokens"`
	InputTokens       uint64          `json:"inputTokens"`
	OutputTokens      uint64          `json:"outputTokens"`
	ThoughtTokens     *uint64         `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64         `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64         `json:"cachedWriteTokens,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// CancelNotification is the params of the session/cancel notification.
type CancelNotification struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request. RequestID is
// the raw JSON-RPC id (number, string or null) of the request to cancel.
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ---- permission ----

// RequestPermissionRequest is the params of session/request_permission.
// ToolCall (only its toolCallId is required) and Options are strict: a bad
// option fails the request, since answering with an option id the agent did
// not offer would be worse.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// PermissionOption is one answer offered to the user.
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission:
// {"outcome":{"outcome":"selected","optionId":"..."}} or
// {"outcome":{"outcome":"cancelled"}}.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// PermissionOutcomeKind is the kind of a permission answer
// (PermissionOutcome.Outcome). Unknown values are kept.
type PermissionOutcomeKind string

// Permission outcomes.
const (
	OutcomeSelected  PermissionOutcomeKind = "selected"  // an offered option was chosen
	OutcomeCancelled PermissionOutcomeKind = "cancelled" // the turn was cancelled
)

// PermissionOutcome is the user's answer. OptionID is set only for
// OutcomeSelected. Unknown outcomes are kept, and must never be taken for
// approval.
type PermissionOutcome struct {
	Outcome  PermissionOutcomeKind `json:"outcome"`
	OptionID string                `json:"optionId,omitempty"`
	Meta     json.RawMessage       `json:"_meta,omitempty"`
}

// ---- elicitation ----

// ElicitationMode is how an elicitation asks (CreateElicitationRequest.Mode);
// other values are custom or future modes and must not be rendered as a
// known one.
type ElicitationMode string

// Elicitation modes.
const (
	ElicitationModeForm ElicitationMode = "form" // a form from RequestedSchema
	ElicitationModeURL  ElicitationMode = "url"  // a URL for the user to open
)

// CreateElicitationRequest is the params of elicitation/create. It is scoped
// to a session (SessionID, optionally ToolCallID) or to a pending JSON-RPC
// request (RequestID, raw). Form mode carries RequestedSchema (kept raw);
// URL mode carries ElicitationID and URL. message and mode are required, as
// are the fields of the form and url modes; other modes are kept as sent.
type CreateElicitationRequest struct {
	Message         string          `json:"message"`
	Mode            ElicitationMode `json:"mode"`
	SessionID       string          `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage `json:"requestId,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`

	// Turn and Seq place the request in its session's stream (they are not
	// on the wire): Turn is the session's running turn when the request
	// arrived (nil if none, or no known session), Seq the sequence number of
	// the last of Turn's events applied before it.
	Turn *Turn  `json:"-"`
	Seq  uint64 `json:"-"`
}

// ElicitationAction is the user's answer to an elicitation
// (CreateElicitationResponse.Action). Unknown values are kept.
type ElicitationAction string

// Elicitation actions.
const (
	ElicitationAccept  ElicitationAction = "accept"  // the user submitted Content
	ElicitationDecline ElicitationAction = "decline" // the user said no
	ElicitationCancel  ElicitationAction = "cancel"  // the user dismissed it
)

// CreateElicitationResponse is the result of elicitation/create. Content (an
// object of field values, kept raw) is only meaningful with
// ElicitationAccept.
type CreateElicitationResponse struct {
	Action  ElicitationAction `json:"action"`
	Content json.RawMessage   `json:"content,omitempty"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
// Unknown or already completed IDs must be ignored.
type CompleteElicitationNotification struct {
	ElicitationID string          `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// =====================================================================
// encoding
// =====================================================================

func (m AgentAuthMethod) MarshalJSON() ([]byte, error) {
	type body AgentAuthMethod
	return json.Marshal(body(m))
}

func (m TerminalAuthMethod) MarshalJSON() ([]byte, error) {
	type body TerminalAuthMethod
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"terminal", body(m)})
}

func (m EnvVarAuthMethod) MarshalJSON() ([]byte, error) {
	type body EnvVarAuthMethod
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"env_var", body(m)})
}

// MarshalJSON returns Raw unchanged.
func (m UnknownAuthMethod) MarshalJSON() ([]byte, error) {
	return marshalRaw(m.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		}{m.Type, m.ID, m.Name})
	})
}

// MarshalJSON writes no "type": v1 stdio servers have none.
func (s McpServerStdio) MarshalJSON() ([]byte, error) {
	type body McpServerStdio
	s.Args, s.Env = orEmpty(s.Args), orEmpty(s.Env)
	return json.Marshal(body(s))
}

func (s McpServerHTTP) MarshalJSON() ([]byte, error) {
	type body McpServerHTTP
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"http", body(s)})
}

func (s McpServerSSE) MarshalJSON() ([]byte, error) {
	type body McpServerSSE
	s.Headers = orEmpty(s.Headers)
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"sse", body(s)})
}

// MarshalJSON returns Raw unchanged.
func (s UnknownMcpServer) MarshalJSON() ([]byte, error) {
	return marshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{s.Type})
	})
}

func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type body NewSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type body LoadSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r ResumeSessionRequest) MarshalJSON() ([]byte, error) {
	type body ResumeSessionRequest
	r.McpServers = orEmpty(r.McpServers)
	return json.Marshal(body(r))
}

func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type body ListSessionsResponse
	r.Sessions = orEmpty(r.Sessions)
	return json.Marshal(body(r))
}

func (s SessionModeState) MarshalJSON() ([]byte, error) {
	type body SessionModeState
	s.AvailableModes = orEmpty(s.AvailableModes)
	return json.Marshal(body(s))
}

func (o SelectConfigOption) MarshalJSON() ([]byte, error) {
	type body SelectConfigOption
	var opts any = orEmpty(o.Options)
	if len(o.Groups) > 0 {
		opts = o.Groups
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		body
		Options any `json:"options"`
	}{"select", body(o), opts})
}

func (g SelectGroup) MarshalJSON() ([]byte, error) {
	type body SelectGroup
	g.Options = orEmpty(g.Options)
	return json.Marshal(body(g))
}

func (o BooleanConfigOption) MarshalJSON() ([]byte, error) {
	type body BooleanConfigOption
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"boolean", body(o)})
}

// MarshalJSON returns Raw unchanged.
func (o UnknownConfigOption) MarshalJSON() ([]byte, error) {
	return marshalRaw(o.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}{o.Type, o.ID})
	})
}

// MarshalJSON sends a select value without "type" and a boolean value with
// "type":"boolean" (see the type's doc).
func (r SetSessionConfigOptionRequest) MarshalJSON() ([]byte, error) {
	if r.Boolean != nil {
		return json.Marshal(struct {
			SessionID string          `json:"sessionId"`
			ConfigID  string          `json:"configId"`
			Type      string          `json:"type"`
			Value     bool            `json:"value"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}{r.SessionID, r.ConfigID, "boolean", *r.Boolean, r.Meta})
	}
	return json.Marshal(struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     string          `json:"value"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}{r.SessionID, r.ConfigID, r.Value, r.Meta})
}

func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type body SetSessionConfigOptionResponse
	r.ConfigOptions = orEmpty(r.ConfigOptions)
	return json.Marshal(body(r))
}

func (r PromptRequest) MarshalJSON() ([]byte, error) {
	for i, c := range r.Prompt {
		if c == nil {
			return nil, fmt.Errorf("acp: prompt request: Prompt[%d] is nil", i)
		}
	}
	type body PromptRequest
	r.Prompt = orEmpty(r.Prompt)
	return json.Marshal(body(r))
}

// MarshalJSON writes the tool call without a "sessionUpdate" key and the
// options as [] when nil.
func (r RequestPermissionRequest) MarshalJSON() ([]byte, error) {
	type toolCall ToolCallUpdate
	return json.Marshal(struct {
		SessionID string             `json:"sessionId"`
		ToolCall  toolCall           `json:"toolCall"`
		Options   []PermissionOption `json:"options"`
		Meta      json.RawMessage    `json:"_meta,omitempty"`
	}{r.SessionID, toolCall(r.ToolCall), orEmpty(r.Options), r.Meta})
}

func (r CancelRequestNotification) MarshalJSON() ([]byte, error) {
	type body CancelRequestNotification
	if len(r.RequestID) == 0 {
		r.RequestID = json.RawMessage("null")
	}
	return json.Marshal(body(r))
}

// =====================================================================
// decoding
// =====================================================================

// decodeMetaOnly decodes a type that has nothing but _meta. It never fails:
// agents answer null, {} or, in doc examples, other shapes for empty results.
// The generated decoders of _meta-only params and results use it.
func decodeMetaOnly(b []byte) json.RawMessage {
	var w struct {
		Meta wireMeta `json:"_meta"`
	}
	if json.Unmarshal(b, &w) != nil {
		return nil
	}
	return w.Meta.raw()
}

// authMethodCommon is what every auth method shares.
type authMethodCommon struct {
	ID          wireStr  `json:"id"`
	Name        wireStr  `json:"name"`
	Description wireStr  `json:"description"`
	Meta        wireMeta `json:"_meta"`
}

func (c authMethodCommon) check() error {
	if !c.ID.ok {
		return errMissing("auth method", "id")
	}
	if !c.Name.ok {
		return errMissing("auth method", "name")
	}
	return nil
}

// unmarshalAuthMethod decodes an auth method: no "type" (or null) is an
// agent method; "terminal" and "env_var" are known; any other string type is
// unknown. id and name are required for every variant.
func unmarshalAuthMethod(data []byte) (AuthMethod, error) {
	raw, found, err := jsonFindKey(data, "type")
	if err != nil {
		return nil, errDecode("auth method", err)
	}
	typ := ""
	if found && !jsonIsNull(raw) {
		s, ok := jsonString(raw)
		if !ok {
			return nil, errMissing("auth method", "type")
		}
		typ = s
	}
	switch typ {
	case "":
		var m AgentAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		// Copilot and Qwen announce terminal logins on agent methods, in
		// _meta; they must never be passed to authenticate.
		if t, ok := AsTerminalAuthMethod(&m); ok {
			return t, nil
		}
		return &m, nil
	case "terminal":
		var m TerminalAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &m, nil
	case "env_var":
		var m EnvVarAuthMethod
		if err := m.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &m, nil
	}
	var c authMethodCommon
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, errDecode("auth method", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &UnknownAuthMethod{Type: typ, ID: c.ID.v, Name: c.Name.v, Raw: rawCopy(data)}, nil
}

type authMethodField struct{ v AuthMethod }

func (f *authMethodField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalAuthMethod(b)
	return err
}

// UnmarshalJSON: id and name are required; bad vars are dropped.
func (m *EnvVarAuthMethod) UnmarshalJSON(b []byte) error {
	var w struct {
		authMethodCommon
		Vars wireList[EnvVarSpec] `json:"vars"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("auth method", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	*m = EnvVarAuthMethod{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Vars: w.Vars.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: name is required; the rest is lenient.
func (v *EnvVarSpec) UnmarshalJSON(b []byte) error {
	var w struct {
		Name     wireStr       `json:"name"`
		Label    wireStr       `json:"label"`
		Secret   wireOpt[bool] `json:"secret"`
		Optional wireOpt[bool] `json:"optional"`
		Meta     wireMeta      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("env var", err)
	}
	if !w.Name.ok {
		return errMissing("env var", "name")
	}
	*v = EnvVarSpec{Name: w.Name.v, Label: w.Label.v, Secret: w.Secret.ptr(),
		Optional: w.Optional.ptr(), Meta: w.Meta.raw()}
	return nil
}

// unmarshalMcpServer decodes an MCP server config: no "type" (or "stdio")
// is stdio, "http" and "sse" are known, any other type is unknown.
func unmarshalMcpServer(data []byte) (McpServer, error) {
	raw, found, err := jsonFindKey(data, "type")
	if err != nil {
		return nil, errDecode("mcp server", err)
	}
	typ := ""
	if found && !jsonIsNull(raw) {
		s, ok := jsonString(raw)
		if !ok {
			return nil, errMissing("mcp server", "type")
		}
		typ = s
	}
	var s interface {
		McpServer
		json.Unmarshaler
	}
	switch typ {
	case "", "stdio":
		s = new(McpServerStdio)
	case "http":
		s = new(McpServerHTTP)
	case "sse":
		s = new(McpServerSSE)
	default:
		if err := jsonObject(data); err != nil {
			return nil, errDecode("mcp server", err)
		}
		return &UnknownMcpServer{Type: typ, Raw: rawCopy(data)}, nil
	}
	if err := s.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return s, nil
}

type mcpServerField struct{ v McpServer }

func (f *mcpServerField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalMcpServer(b)
	return err
}

// configOptionCommon is what every config option shares.
type configOptionCommon struct {
	ID          wireStr  `json:"id"`
	Name        wireStr  `json:"name"`
	Description wireStr  `json:"description"`
	Category    wireStr  `json:"category"`
	Meta        wireMeta `json:"_meta"`
}

func (c configOptionCommon) check() error {
	if !c.ID.ok {
		return errMissing("config option", "id")
	}
	if !c.Name.ok {
		return errMissing("config option", "name")
	}
	return nil
}

// unmarshalConfigOption decodes a config option: "select" and "boolean" are
// known, other string types are kept as unknown; "type", id and name are
// required.
func unmarshalConfigOption(data []byte) (SessionConfigOption, error) {
	t, found, err := jsonDiscriminator(data, "type")
	if err != nil {
		return nil, errDecode("config option", err)
	}
	if !found {
		return nil, errMissing("config option", "type")
	}
	switch string(t) {
	case "select":
		var o SelectConfigOption
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &o, nil
	case "boolean":
		var o BooleanConfigOption
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return &o, nil
	}
	var c configOptionCommon
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, errDecode("config option", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &UnknownConfigOption{Type: string(t), ID: c.ID.v, Raw: rawCopy(data)}, nil
}

type configOptionField struct{ v SessionConfigOption }

func (f *configOptionField) UnmarshalJSON(b []byte) (err error) {
	f.v, err = unmarshalConfigOption(b)
	return err
}

// UnmarshalJSON: id, name, currentValue and options (an array) are
// required. Options are grouped when any element has a "group" key; invalid
// options and groups are dropped.
func (o *SelectConfigOption) UnmarshalJSON(b []byte) error {
	var w struct {
		configOptionCommon
		CurrentValue wireStr                    `json:"currentValue"`
		Options      wireOpt[[]json.RawMessage] `json:"options"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("select config option", err)
	}
	if err := w.check(); err != nil {
		return err
	}
	if !w.CurrentValue.ok {
		return errMissing("select config option", "currentValue")
	}
	if !w.Options.ok {
		return errMissing("select config option", "options")
	}
	*o = SelectConfigOption{ID: w.ID.v, Name: w.Name.v, Description: w.Description.v,
		Category: w.Category.v, CurrentValue: w.CurrentValue.v, Meta: w.Meta.raw()}
	grouped := false
	for _, e := range w.Options.v {
		if _, ok, _ := jsonFindKey(e, "group"); ok {
			grouped = true
			break
		}
	}
	if grouped {
		o.Groups = make([]SelectGroup, 0, len(w.Options.v))
		for _, e := range w.Options.v {
			var g SelectGroup
			if g.UnmarshalJSON(e) == nil {
				o.Groups = append(o.Groups, g)
			}
		}
		if len(o.Groups) > 0 {
			return nil
		}
		// No valid group left: "[]" cannot say "grouped", so read it as an
		// empty flat list, which is what re-encoding it would give.
		o.Groups = nil
	}
	o.Options = make([]SelectOption, 0, len(w.Options.v))
	for _, e := range w.Options.v {
		var v SelectOption
		if v.UnmarshalJSON(e) == nil {
			o.Options = append(o.Options, v)
		}
	}
	return nil
}

// UnmarshalJSON: sessionId, configId and value are required; "type":"boolean"
// with a boolean value sets Boolean, anything else must be a string value.
func (r *SetSessionConfigOptionRequest) UnmarshalJSON(b []byte) error {
	const typ = "set config option request"
	var w struct {
		SessionID wireStr  `json:"sessionId"`
		ConfigID  wireStr  `json:"configId"`
		Type      wireStr  `json:"type"`
		Value     wireRaw  `json:"value"`
		Meta      wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode(typ, err)
	}
	if !w.SessionID.ok {
		return errMissing(typ, "sessionId")
	}
	if !w.ConfigID.ok {
		return errMissing(typ, "configId")
	}
	*r = SetSessionConfigOptionRequest{SessionID: w.SessionID.v, ConfigID: w.ConfigID.v, Meta: w.Meta.raw()}
	if w.Type.v == "boolean" {
		var v bool
		if json.Unmarshal(w.Value.v, &v) != nil {
			return errMissing(typ, "value")
		}
		r.Boolean = &v
		return nil
	}
	s, ok := jsonString(w.Value.v)
	if !ok {
		return errMissing(typ, "value")
	}
	r.Value = s
	return nil
}

// UnmarshalJSON: outcome is a required string; optionId is required with
// "selected". Unknown outcomes are kept.
func (o *PermissionOutcome) UnmarshalJSON(b []byte) error {
	var w struct {
		Outcome  wireStr  `json:"outcome"`
		OptionID wireStr  `json:"optionId"`
		Meta     wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("permission outcome", err)
	}
	if !w.Outcome.ok {
		return errMissing("permission outcome", "outcome")
	}
	if w.Outcome.v == string(OutcomeSelected) && !w.OptionID.ok {
		return errMissing("permission outcome", "optionId")
	}
	*o = PermissionOutcome{Outcome: PermissionOutcomeKind(w.Outcome.v), OptionID: w.OptionID.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: see [CreateElicitationRequest] for what is required.
func (r *CreateElicitationRequest) UnmarshalJSON(b []byte) error {
	const typ = "create elicitation request"
	var w struct {
		Message         wireStr  `json:"message"`
		Mode            wireStr  `json:"mode"`
		SessionID       wireStr  `json:"sessionId"`
		ToolCallID      wireStr  `json:"toolCallId"`
		RequestID       wireAny  `json:"requestId"`
		RequestedSchema wireRaw  `json:"requestedSchema"`
		ElicitationID   wireStr  `json:"elicitationId"`
		URL             wireStr  `json:"url"`
		Meta            wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode(typ, err)
	}
	switch {
	case !w.Message.ok:
		return errMissing(typ, "message")
	case !w.Mode.ok:
		return errMissing(typ, "mode")
	case w.Mode.v == string(ElicitationModeForm) && (len(w.RequestedSchema.v) == 0 || w.RequestedSchema.v[0] != '{'):
		return errMissing(typ, "requestedSchema")
	case w.Mode.v == string(ElicitationModeURL) && !w.ElicitationID.ok:
		return errMissing(typ, "elicitationId")
	case w.Mode.v == string(ElicitationModeURL) && !w.URL.ok:
		return errMissing(typ, "url")
	}
	*r = CreateElicitationRequest{Message: w.Message.v, Mode: ElicitationMode(w.Mode.v), SessionID: w.SessionID.v,
		ToolCallID: w.ToolCallID.v, RequestID: w.RequestID.v, RequestedSchema: w.RequestedSchema.v,
		ElicitationID: w.ElicitationID.v, URL: w.URL.v, Meta: w.Meta.raw()}
	return nil
}

// UnmarshalJSON: action is a required string (unknown actions are kept);
// content is kept raw when it is an object.
func (r *CreateElicitationResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Action  wireStr  `json:"action"`
		Content wireMeta `json:"content"`
		Meta    wireMeta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return errDecode("create elicitation response", err)
	}
	if !w.Action.ok {
		return errMissing("create elicitation response", "action")
	}
	*r = CreateElicitationResponse{Action: ElicitationAction(w.Action.v), Content: w.Content.raw(), Meta: w.Meta.raw()}
	return nil
}
