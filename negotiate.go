package acp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/v2wire"
)

// Version negotiation: the client offers the highest version it was asked
// to speak (ClientOptions.ProtocolVersion) and takes what the agent picks,
// at most the offered one (schema v2 InitializeResponse.protocolVersion).
// A v2 offer carries both shapes of initialize: the v2 keys (info,
// capabilities) for an agent that answers 2, and the v1 keys (clientInfo,
// clientCapabilities) for one that answers 1, so a v1 agent still learns
// the client's fs and terminal handlers. Each version ignores the other's
// keys.

// CodeUnsupportedVersion is the agent's answer to an initialize offering
// no version it speaks (ACP v2, schema ErrorCode -32022).
const CodeUnsupportedVersion = -32022

// initRequestV2 is the initialize params of a v2 offer: both shapes.
type initRequestV2 struct {
	ProtocolVersion    int                       `json:"protocolVersion"`
	Info               *Implementation           `json:"info"`
	Capabilities       v2wire.ClientCapabilities `json:"capabilities"`
	ClientInfo         *Implementation           `json:"clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities       `json:"clientCapabilities,omitempty"`
}

// offeredVersion is the version the client offers: ClientOptions'
// ProtocolVersion, 1 when zero.
func (o *ClientOptions) offeredVersion() (int, error) {
	switch o.ProtocolVersion {
	case 0, 1:
		return 1, nil
	case 2:
		return 2, nil
	}
	return 0, fmt.Errorf("%w: ClientOptions.ProtocolVersion is %d; this client speaks 1 and 2", ErrUnsupportedVersion, o.ProtocolVersion)
}

// capabilitiesV2 derives the v2 client capabilities from the handlers.
// v2 has no fs and no terminal methods: those handlers are not offered.
func (c *Client) capabilitiesV2() v2wire.ClientCapabilities {
	var caps v2wire.ClientCapabilities
	if c.opts.TerminalAuth {
		caps.Auth = v2wire.Patch[v2wire.ClientAuthCapabilities]{Set: true,
			V: v2wire.ClientAuthCapabilities{Terminal: v2wire.Patch[v2wire.TerminalAuthCapabilities]{Set: true, V: v2wire.TerminalAuthCapabilities{}}}}
	}
	if e := c.opts.Elicitation; e != nil && e.Create != nil && (e.Form || e.URL) {
		var ec v2wire.ElicitationCapabilities
		if e.Form {
			ec.Form = v2wire.Patch[v2wire.ElicitationFormCapabilities]{Set: true}
		}
		if e.URL {
			ec.URL = v2wire.Patch[v2wire.ElicitationUrlCapabilities]{Set: true}
		}
		caps.Elicitation = v2wire.Patch[v2wire.ElicitationCapabilities]{Set: true, V: ec}
	}
	if len(c.opts.CapabilitiesMeta) > 0 {
		caps.Meta = v2wire.Patch[v2wire.Raw]{Set: true, V: c.opts.CapabilitiesMeta}
	}
	return caps
}

// initParams returns the initialize params offering version v.
func (c *Client) initParams(v int) any {
	info := c.opts.ClientInfo
	if info == nil {
		info = &Implementation{Name: "acp-go", Version: Version}
	}
	caps := c.capabilities()
	if v == 1 {
		return &InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps, ClientInfo: info}
	}
	return &initRequestV2{ProtocolVersion: v, Info: info, Capabilities: c.capabilitiesV2(), ClientInfo: info, ClientCapabilities: &caps}
}

// negotiated decodes the agent's answer to an initialize that offered
// version offered: a v1 answer in the v1 shape, a v2 answer in the v2 shape
// mapped onto the model. Any other version is ErrUnsupportedVersion.
func negotiated(offered int, raw json.RawMessage, out *InitializeResponse) error {
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

// checkSessionBaseline fails a session method of a v2 agent that
// advertised no session capability: in v2, omitting capabilities.session
// means the agent supports no session/* method. (v1 has no such marker.)
func (c *Client) checkSessionBaseline(method string) error {
	if c.version == 2 && c.agent().AgentCapabilities.SessionCapabilities.Resume == nil {
		return notSupported(method, "capabilities.session")
	}
	return nil
}

// onInitAnswered is the reader's hook for the answer to initialize: a
// version-2 answer to a v2 offer switches the connection to v2 here, on
// the reader, before the next line (an agent may write an update right
// after answering). Connect validates the rest of the answer; a version it
// refuses closes the connection anyway.
//
// On a restarted connection (g.n > 1) the version the client speaks is
// already fixed: the answer's is only recorded in g, and the restart
// refuses a connection whose agent picked another.
func (c *Client) onInitAnswered(g *agentConn, raw []byte) {
	var msg struct {
		Result struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &msg) != nil {
		return
	}
	if string(msg.Result.ProtocolVersion) == "2" {
		if offered, err := c.opts.offeredVersion(); err == nil && offered >= 2 {
			g.version = 2
			if g.n == 1 {
				c.version = 2
			}
		}
	}
}
