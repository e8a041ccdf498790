package acp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
)

// v2Init is a v2 initialize answer in the shape codex-acp 2.6.0 sends
// (testdata/transcripts/v2/codex-offer2.jsonl).
var v2Init = map[string]any{
	"protocolVersion": 2,
	"info":            map[string]any{"name": "v2raw", "title": "V2", "version": "2"},
	"capabilities": map[string]any{
		"session": map[string]any{
			"prompt": map[string]any{"image": map[string]any{}, "embeddedContext": map[string]any{}},
			"mcp":    map[string]any{"stdio": map[string]any{}, "http": map[string]any{}},
			"delete": map[string]any{}, "additionalDirectories": map[string]any{}, "fork": map[string]any{},
			"systemPrompt": map[string]any{},
		},
		"_meta": map[string]any{"x": 1},
	},
	"authMethods": []any{
		map[string]any{"methodId": "api-key", "type": "agent", "name": "API Key"},
		map[string]any{"type": "agent", "name": "no id"}, // invalid: dropped
	},
}

// connectOffer runs Connect offering version offer against an agent that
// answers initialize with answer (a result, or an *Error), and returns the
// client, the initialize params the client sent and Connect's error.
func connectOffer(t *testing.T, opts *ClientOptions, answer any) (*Client, map[string]json.RawMessage, error) {
	t.Helper()
	a, tr := newRawAgent(t)
	type res struct {
		c   *Client
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Connect(context.Background(), tr, opts)
		ch <- res{c, err}
	}()
	var params map[string]json.RawMessage
	if opts == nil || opts.ProtocolVersion <= 2 {
		m := a.expect("initialize")
		if err := json.Unmarshal(m.Params, &params); err != nil {
			t.Fatal(err)
		}
		if e, ok := answer.(*schema.Error); ok {
			a.replyError(m, e.Code, e.Message, nil)
		} else {
			a.reply(m, answer)
		}
	}
	r := <-ch
	if r.c != nil {
		t.Cleanup(func() { r.c.Close() })
	}
	return r.c, params, r.err
}

// Rule: the zero value offers v1, in the v1 shape.
func TestV2ZeroValueOffersV1(t *testing.T) {
	c, params, err := connectOffer(t, nil, defaultInit)
	if err != nil {
		t.Fatal(err)
	}
	if string(params["protocolVersion"]) != "1" || params["info"] != nil || params["clientCapabilities"] == nil {
		t.Fatalf("offer = %v", params)
	}
	if c.InitializeResponse().ProtocolVersion != 1 {
		t.Fatalf("ProtocolVersion() = %d", c.InitializeResponse().ProtocolVersion)
	}
}

// Rule: offering v2 sends the v2 shape (info, capabilities) beside the v1
// one, and a v2 answer is mapped onto the model.
func TestV2OfferTakesV2(t *testing.T) {
	read := func(context.Context, *schema.ReadTextFileRequest) (*schema.ReadTextFileResponse, error) {
		return nil, nil
	}
	c, params, err := connectOffer(t, &ClientOptions{ProtocolVersion: 2, FS: FileSystemHandlers{ReadTextFile: read}}, v2Init)
	if err != nil {
		t.Fatal(err)
	}
	if string(params["protocolVersion"]) != "2" || params["info"] == nil {
		t.Fatalf("offer = %v", params)
	}
	// v2 has no fs methods: the v2 capabilities do not offer the handler;
	// the v1 ones do, for an agent that answers 1.
	if strings.Contains(string(params["capabilities"]), "fs") || !strings.Contains(string(params["clientCapabilities"]), `"readTextFile":true`) {
		t.Fatalf("capabilities = %s, clientCapabilities = %s", params["capabilities"], params["clientCapabilities"])
	}
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("ProtocolVersion() = %d", c.InitializeResponse().ProtocolVersion)
	}
	init := c.InitializeResponse()
	caps := init.AgentCapabilities
	switch {
	case init.AgentInfo == nil || init.AgentInfo.Name != "v2raw":
		t.Errorf("AgentInfo = %+v", init.AgentInfo)
	case !caps.LoadSession || caps.SessionCapabilities.Resume == nil || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Close == nil:
		t.Errorf("the session baseline is not mapped: %+v", caps)
	case caps.SessionCapabilities.Delete == nil || caps.SessionCapabilities.Fork == nil || caps.SessionCapabilities.SystemPrompt == nil || caps.SessionCapabilities.AdditionalDirectories == nil:
		t.Errorf("session markers: %+v", caps.SessionCapabilities)
	case !caps.PromptCapabilities.Image || caps.PromptCapabilities.Audio || !caps.PromptCapabilities.EmbeddedContext:
		t.Errorf("prompt: %+v", caps.PromptCapabilities)
	case !caps.MCPCapabilities.HTTP:
		t.Errorf("mcp: %+v", caps.MCPCapabilities)
	case caps.Auth.Logout == nil:
		t.Errorf("auth methods advertise logout in v2")
	case string(caps.Meta) != `{"x":1}`:
		t.Errorf("meta %s", caps.Meta)
	}
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].MethodID() != "api-key" {
		t.Errorf("auth methods: %+v", init.AuthMethods)
	}
}

// Rule: an agent without capabilities.session advertises no session
// methods; the client sends none.
func TestV2NoSessionCapabilityNoSessions(t *testing.T) {
	c, _, err := connectOffer(t, &ClientOptions{ProtocolVersion: 2}, map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "x", "version": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(context.Background(), nil); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("NewSession = %v, want ErrNotSupported", err)
	}
}

// Rule: offered 2, a v1 answer is taken (offer the highest, take what the
// agent picks).
func TestV2OfferAcceptsV1Answer(t *testing.T) {
	c, _, err := connectOffer(t, &ClientOptions{ProtocolVersion: 2}, defaultInit)
	if err != nil {
		t.Fatal(err)
	}
	if c.InitializeResponse().ProtocolVersion != 1 || !c.InitializeResponse().AgentCapabilities.LoadSession {
		t.Fatalf("version %d caps %+v", c.InitializeResponse().ProtocolVersion, c.InitializeResponse().AgentCapabilities)
	}
}

// Rule: -32022, a version above the offer, or garbage is ErrUnsupportedVersion.
func TestV2UnsupportedVersionAnswers(t *testing.T) {
	for name, c := range map[string]struct {
		offer  int
		answer any
	}{
		"-32022":         {2, &schema.Error{Code: schema.CodeUnsupportedVersion, Message: "Unsupported protocol version"}},
		"above offer v1": {1, v2Init},
		"above offer v2": {2, map[string]any{"protocolVersion": 3}},
		"zero":           {2, map[string]any{"protocolVersion": 0}},
		"string":         {2, map[string]any{"protocolVersion": "2"}},
		"missing":        {2, map[string]any{"info": map[string]any{}}},
	} {
		t.Run(name, func(t *testing.T) {
			cl, _, err := connectOffer(t, &ClientOptions{ProtocolVersion: c.offer}, c.answer)
			if !errors.Is(err, schema.ErrUnsupportedVersion) || cl != nil {
				t.Fatalf("Connect = %v, %v; want ErrUnsupportedVersion", cl, err)
			}
		})
	}
	if _, _, err := connectOffer(t, &ClientOptions{ProtocolVersion: 3}, nil); !errors.Is(err, schema.ErrUnsupportedVersion) {
		t.Fatalf("ProtocolVersion 3: %v", err)
	}
}

// Rule: the connection is v2 from the line after the initialize answer (the
// version is set on the reader, in wire order): a v2 update written right
// after the answer decodes as v2.
func TestV2VersionFromTheNextLine(t *testing.T) {
	a, tr := newRawAgent(t)
	ch := make(chan *Client, 1)
	go func() {
		c, err := Connect(context.Background(), tr, &ClientOptions{ProtocolVersion: 2})
		if err != nil {
			t.Error(err)
		}
		ch <- c
	}()
	a.reply(a.expect("initialize"), v2Init)
	a.update("s1", map[string]any{"sessionUpdate": "agent_message", "messageId": "m0", "content": []any{map[string]any{"type": "text", "text": "early"}}})
	c := <-ch
	if c == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close() })
	s := newSessionRaw(t, c, a)
	if h := s.State().History; len(h.Messages) != 1 || h.Messages[0].Text != "early" {
		t.Fatalf("history %+v", h.Messages)
	}
}
