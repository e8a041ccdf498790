package acp

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/acpclient/acp/schema"
	"strings"
	"testing"
)

// Calls the agent did not advertise fail locally and send nothing.
func TestCapabilityGating(t *testing.T) {
	c, a := connectRaw(t, nil, map[string]any{"protocolVersion": 1})
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["load"] = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "x", Cwd: "/tmp"})
	_, checks["resume"] = c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: "x", Cwd: "/tmp"})
	_, checks["delete"] = c.DeleteSession(ctx, &schema.DeleteSessionRequest{SessionID: "x"})
	_, checks["logout"] = c.Logout(ctx, nil)
	for _, err := range c.ListSessions(ctx, nil) {
		checks["list"] = err
	}
	_, checks["addDirs"] = c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp", AdditionalDirectories: []string{"/x"}})
	for name, err := range checks {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("%s: error %v, want ErrNotSupported", name, err)
		}
	}
	s := newSessionRaw(t, c, a) // the first thing the agent sees after initialize
	for _, b := range []schema.ContentBlock{schema.Image("aGk=", "image/png"), &schema.AudioContent{Data: "aGk=", MimeType: "audio/wav"}, &schema.EmbeddedResource{Resource: &schema.TextResourceContents{URI: "file:///x", Text: "x"}}} {
		if _, err := s.Prompt(ctx, schema.Text("look"), b); !errors.Is(err, ErrNotSupported) {
			t.Errorf("prompt with %T: %v, want ErrNotSupported", b, err)
		}
	}
	turn, err := s.Prompt(ctx, schema.Text("plain"), schema.Link("file:///x", "x"))
	if err != nil {
		t.Fatal(err)
	}
	m := a.expect("session/prompt")
	if !strings.Contains(m.line, `"plain"`) {
		t.Errorf("the first prompt on the wire is %s", m.line)
	}
	if _, err := s.Prompt(ctx, schema.Text("again")); !errors.Is(err, ErrTurnInProgress) {
		t.Errorf("second prompt: %v, want ErrTurnInProgress", err)
	}
	a.reply(m, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
}

// The capabilities sent in initialize come from the handlers set.
func TestCapabilitiesFromHandlers(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *ClientOptions
		want string
	}{
		{"none", nil, `{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}`},
		{"fs", &ClientOptions{FS: FileSystemHandlers{ReadTextFile: readOnlyFS{}.ReadTextFile, WriteTextFile: writeHandler}}, `{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false,"auth":{"terminal":false}}`},
		{"readonly", &ClientOptions{FS: FileSystemHandlers{ReadTextFile: readOnlyFS{}.ReadTextFile}}, `{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}`},
		{"terminal", &ClientOptions{Terminal: fakeTerminals()}, `{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":true,"auth":{"terminal":false}}`},
		{"extras", &ClientOptions{BooleanConfigOptions: true, TerminalAuth: true, Elicitation: &ElicitationHandlers{Form: true, Create: func(context.Context, *ElicitationRequest) (*schema.CreateElicitationResponse, error) { return nil, nil }}},
			`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"configOptions":{"boolean":{}}},"auth":{"terminal":true},"elicitation":{"form":{}}}`},
		{"plans, notices, compaction", &ClientOptions{PlanOperations: true, Notices: true, Compaction: true},
			`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{},"compaction":{}},"plan":{},"auth":{"terminal":false}}`},
		{"subagents", &ClientOptions{Subagents: true},
			`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"subagents":{},"auth":{"terminal":false}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, tr := newRawAgent(t)
			done := make(chan *Client, 1)
			go func() {
				c, _ := Connect(context.Background(), tr, tc.opts)
				done <- c
			}()
			m := a.expect("initialize")
			var p struct {
				ProtocolVersion    int                    `json:"protocolVersion"`
				ClientCapabilities json.RawMessage        `json:"clientCapabilities"`
				ClientInfo         *schema.Implementation `json:"clientInfo"`
			}
			json.Unmarshal(m.Params, &p)
			compareJSON(t, "clientCapabilities", []byte(tc.want), p.ClientCapabilities)
			if p.ProtocolVersion != 1 || p.ClientInfo == nil || p.ClientInfo.Name == "" {
				t.Errorf("initialize params %s", m.Params)
			}
			a.reply(m, defaultInit)
			if c := <-done; c != nil {
				c.Close()
			}
		})
	}
}
