package schema

import (
	"encoding/json"
)

// The hand-written decoders of protocol*.go: fields whose requirements
// depend on another field (a permission outcome's optionId, an elicitation's
// mode), a config value typed by a sibling, and select options that are a
// flat or a grouped list. Everything else, the unions included, decodes
// through protocol_gen.go (and, there, through internal/wirejson).

// terminalFromMeta turns an agent method that announces a terminal login
// in its _meta (Copilot, Qwen) into the *TerminalAuthMethod it stands for
// (see [AsTerminalAuthMethod]), so it is never passed to authenticate.
func terminalFromMeta(m AuthMethod) AuthMethod {
	if a, ok := m.(*AgentAuthMethod); ok {
		if t, ok := AsTerminalAuthMethod(a); ok {
			return t
		}
	}
	return m
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
	*o = PermissionOutcome{Kind: PermissionOutcomeKind(w.Outcome.v), OptionID: w.OptionID.v, Meta: w.Meta.raw()}
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
