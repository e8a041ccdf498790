package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/v2wire"
)

// ACP v2 on the wire, mapped to and from the one model: the initialize
// offer (both shapes), its answer, and results whose v2 names differ from
// v1's. The update kinds' v2 decoding is in updates_v2.go.

// CodeUnsupportedVersion is the agent's answer to an initialize offering
// no version it speaks (ACP v2, schema ErrorCode -32022).
const CodeUnsupportedVersion = -32022

// InitializeParams returns the params of an initialize that offers
// version (1 or 2), from the client's v1 capabilities. A v2 offer carries
// both shapes: the v2 keys (info, capabilities) for an agent that answers
// 2, and the v1 keys (clientInfo, clientCapabilities) for one that answers
// 1, so a v1 agent still learns of the client's fs and terminal handlers;
// each version ignores the other's keys. v2 has no fs and no terminal
// methods: its capabilities carry only terminal auth, elicitation and
// _meta.
func InitializeParams(version int, info *Implementation, caps ClientCapabilities) any {
	if version < 2 {
		return &InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps, ClientInfo: info}
	}
	return &initRequestV2{ProtocolVersion: version, Info: info, Capabilities: capabilitiesV2(&caps), ClientInfo: info, ClientCapabilities: &caps}
}

// capabilitiesV2 derives the v2 client capabilities from the v1 ones.
func capabilitiesV2(in *ClientCapabilities) v2wire.ClientCapabilities {
	var caps v2wire.ClientCapabilities
	if in.Auth.Terminal {
		caps.Auth = v2wire.Patch[v2wire.ClientAuthCapabilities]{Set: true,
			V: v2wire.ClientAuthCapabilities{Terminal: v2wire.Patch[v2wire.TerminalAuthCapabilities]{Set: true, V: v2wire.TerminalAuthCapabilities{}}}}
	}
	if e := in.Elicitation; e != nil && (e.Form != nil || e.URL != nil) {
		var ec v2wire.ElicitationCapabilities
		if e.Form != nil {
			ec.Form = v2wire.Patch[v2wire.ElicitationFormCapabilities]{Set: true}
		}
		if e.URL != nil {
			ec.URL = v2wire.Patch[v2wire.ElicitationUrlCapabilities]{Set: true}
		}
		caps.Elicitation = v2wire.Patch[v2wire.ElicitationCapabilities]{Set: true, V: ec}
	}
	if len(in.Meta) > 0 {
		caps.Meta = v2wire.Patch[v2wire.Raw]{Set: true, V: in.Meta}
	}
	return caps
}

// initRequestV2 is the initialize params of a v2 offer: both shapes.
type initRequestV2 struct {
	ProtocolVersion    int                       `json:"protocolVersion"`
	Info               *Implementation           `json:"info"`
	Capabilities       v2wire.ClientCapabilities `json:"capabilities"`
	ClientInfo         *Implementation           `json:"clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities       `json:"clientCapabilities,omitempty"`
}

// DecodeInitializeResponse decodes the agent's answer to an initialize
// that offered version offered (1 or 2): a v1 answer in the v1 shape, a v2
// answer in the v2 shape mapped onto the model (out.ProtocolVersion says
// which). Any other version, or an answer without one, is
// [ErrUnsupportedVersion].
func DecodeInitializeResponse(offered int, raw []byte, out *InitializeResponse) error {
	var head struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return fmt.Errorf("%w: the initialize answer is not an object: %v", ErrUnsupportedVersion, err)
	}
	var v int
	if err := json.Unmarshal(head.ProtocolVersion, &v); err != nil || len(head.ProtocolVersion) == 0 {
		return fmt.Errorf("%w: the agent answered protocolVersion %s; this client offered %d", ErrUnsupportedVersion, agenttext.Text(string(head.ProtocolVersion)), offered)
	}
	switch {
	case v == 1:
		return json.Unmarshal(raw, out)
	case v == 2 && offered >= 2:
		return decodeInitV2(raw, out)
	}
	return fmt.Errorf("%w: the agent answered version %d; this client offered %d", ErrUnsupportedVersion, v, offered)
}

// decodeInitV2 maps a v2 initialize answer onto the model.
func decodeInitV2(raw json.RawMessage, out *InitializeResponse) error {
	var w struct {
		ProtocolVersion int               `json:"protocolVersion"`
		Info            *Implementation   `json:"info"`
		Capabilities    json.RawMessage   `json:"capabilities"`
		AuthMethods     []json.RawMessage `json:"authMethods"`
		Meta            json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("decoding the v2 initialize answer: %w", err)
	}
	*out = InitializeResponse{ProtocolVersion: 2, AgentInfo: w.Info, Meta: w.Meta}
	// Capabilities are lenient (x-deserialize-default-on-error): a
	// malformed object reads as none.
	var caps v2wire.AgentCapabilities
	if json.Unmarshal(w.Capabilities, &caps) == nil {
		mapAgentCapsV2(&caps, &out.AgentCapabilities)
		// fork and systemPrompt are not in the stable v2 schema; the
		// agents send them, and v1's decoders read them.
		var extra struct {
			Session struct {
				Fork         *Capability                      `json:"fork"`
				SystemPrompt *SessionSystemPromptCapabilities `json:"systemPrompt"`
			} `json:"session"`
		}
		if json.Unmarshal(w.Capabilities, &extra) == nil && out.AgentCapabilities.LoadSession {
			out.AgentCapabilities.SessionCapabilities.Fork = extra.Session.Fork
			out.AgentCapabilities.SessionCapabilities.SystemPrompt = extra.Session.SystemPrompt
		}
	}
	for _, m := range w.AuthMethods {
		am, err := authMethodV2(m)
		if err != nil {
			continue // skip-invalid-items
		}
		out.AuthMethods = append(out.AuthMethods, am)
	}
	if len(out.AuthMethods) > 0 {
		// v2: a non-empty authMethods advertises auth/login and auth/logout.
		out.AgentCapabilities.Auth.Logout = &Capability{}
	}
	return nil
}

func marker[T any](p v2wire.Patch[T]) *Capability {
	if !p.Set || p.Null {
		return nil
	}
	return &Capability{}
}

// mapAgentCapsV2 maps v2 agent capabilities onto the model's. An agent that
// advertises session supports the baseline (new, list, resume, close,
// prompt, cancel, update): List, Resume and Close are set, and LoadSession,
// which the client serves in v2 as session/resume from the start.
func mapAgentCapsV2(in *v2wire.AgentCapabilities, out *AgentCapabilities) {
	if in.Meta.Set && !in.Meta.Null {
		out.Meta = in.Meta.V
	}
	if !in.Session.Set || in.Session.Null {
		return
	}
	s := &in.Session.V
	out.LoadSession = true
	out.SessionCapabilities.List = &Capability{}
	out.SessionCapabilities.Resume = &Capability{}
	out.SessionCapabilities.Close = &Capability{}
	out.SessionCapabilities.Delete = marker(s.Delete)
	out.SessionCapabilities.AdditionalDirectories = marker(s.AdditionalDirectories)
	if s.Prompt.Set && !s.Prompt.Null {
		p := s.Prompt.V
		out.PromptCapabilities.Image = marker(p.Image) != nil
		out.PromptCapabilities.Audio = marker(p.Audio) != nil
		out.PromptCapabilities.EmbeddedContext = marker(p.EmbeddedContext) != nil
	}
	if s.MCP.Set && !s.MCP.Null {
		out.MCPCapabilities.HTTP = marker(s.MCP.V.HTTP) != nil
	}
}

// authMethodV2 decodes a v2 auth method ("methodId" for v1's "id") with
// the v1 decoder.
func authMethodV2(raw json.RawMessage) (AuthMethod, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	id, ok := m["methodId"]
	if !ok {
		return nil, errors.New("auth method without methodId")
	}
	delete(m, "methodId")
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return unmarshalAuthMethod(b)
}

// DecodeResult decodes the result of a call to an agent speaking protocol
// version (1 or 2) into out, a pointer to the method's response type: in
// version 2 the names v2 changed (a config option's configId) are read as
// v1's first.
func DecodeResult(version int, raw []byte, out any) error {
	if version == 2 {
		raw = configIDsV1(raw)
	}
	return json.Unmarshal(raw, out)
}

// configIDsV1 renames v2's configId to v1's id in the configOptions of a
// result or update (v2 SessionConfigOption.configId; v1 calls it id), so
// the v1 decoders read them. Anything without configOptions, or that does
// not parse, is returned as is.
func configIDsV1(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"configId"`)) || !bytes.Contains(raw, []byte(`"configOptions"`)) {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	var opts []map[string]json.RawMessage
	if json.Unmarshal(m["configOptions"], &opts) != nil {
		return raw
	}
	for _, o := range opts {
		if id, ok := o["configId"]; ok {
			if _, has := o["id"]; !has {
				o["id"] = id
			}
			delete(o, "configId")
		}
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return raw
	}
	m["configOptions"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}
