package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Auth methods in the shapes real agents send: GitHub Copilot CLI's
// _meta["terminal-auth"] block (from its initialize reply), Qwen Code's
// _meta.type "terminal", and an agent method whose _meta is unrelated
// (gemini-cli's api-key hint).
const (
	copilotMethod = `{"id":"copilot-login","name":"Log in with Copilot CLI","description":"Run ` + "`copilot login`" + ` in the terminal","_meta":{"terminal-auth":{"command":"COMMAND","args":["login"],"label":"Copilot Login"}}}`
	qwenMethod    = `{"id":"openai","name":"Use OpenAI API key","description":"Requires setting the OPENAI_API_KEY environment variable","_meta":{"type":"terminal","args":["--auth-type=openai"]}}`
	geminiMethod  = `{"id":"gemini-api-key","name":"Gemini API key","description":"Use an API key with Gemini Developer API","_meta":{"api-key":{"provider":"google"}}}`
)

func decodeAuthMethods(t *testing.T, command string, methods ...string) []schema.AuthMethod {
	t.Helper()
	body := `{"protocolVersion":1,"authMethods":[` + strings.ReplaceAll(strings.Join(methods, ","), "COMMAND", command) + `]}`
	var r schema.InitializeResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r.AuthMethods
}

func TestAsTerminalAuthMethodLegacyConventions(t *testing.T) {
	ms := decodeAuthMethods(t, "/opt/copilot/bin/copilot", copilotMethod, qwenMethod, geminiMethod)
	want := []*schema.TerminalAuthMethod{
		{ID: "copilot-login", Name: "Log in with Copilot CLI", Description: "Run `copilot login` in the terminal",
			Args: []string{"login"}, Meta: json.RawMessage(`{"terminal-auth":{"command":"/opt/copilot/bin/copilot","args":["login"],"label":"Copilot Login"}}`)},
		{ID: "openai", Name: "Use OpenAI API key", Description: "Requires setting the OPENAI_API_KEY environment variable",
			Args: []string{"--auth-type=openai"}, Meta: json.RawMessage(`{"type":"terminal","args":["--auth-type=openai"]}`)},
		nil,
	}
	for i, m := range ms {
		got, ok := schema.AsTerminalAuthMethod(m)
		if ok != (want[i] != nil) {
			t.Errorf("%s: terminal %v, want %v", m.MethodID(), ok, want[i] != nil)
			continue
		}
		if d := cmp.Diff(want[i], got); d != "" {
			t.Errorf("%s (-want +got):\n%s", m.MethodID(), d)
		}
		// A terminal method is usable only when the client can run
		// terminals; the plain agent method always is.
		if got := schema.AuthMethodUsable(m, false, nil); got != (want[i] == nil) {
			t.Errorf("%s: usable without terminal auth = %v", m.MethodID(), got)
		}
		if !schema.AuthMethodUsable(m, true, nil) {
			t.Errorf("%s: not usable with terminal auth", m.MethodID())
		}
		desc := schema.DescribeAuthMethod(m)
		if isTerm := strings.Contains(desc, "in a terminal"); isTerm != (want[i] != nil) {
			t.Errorf("%s: described as %q", m.MethodID(), desc)
		}
	}
	if d := schema.DescribeAuthMethod(ms[0]); !strings.Contains(d, "the agent suggests /opt/copilot/bin/copilot login") {
		t.Errorf("copilot described as %q", d)
	}
}

// TestAsTerminalAuthMethodMalformed: a block of the wrong shape is not a
// terminal method; wrongly typed args or env read as empty.
func TestAsTerminalAuthMethodMalformed(t *testing.T) {
	for _, tc := range []struct {
		meta     string
		terminal bool
		args     []string
	}{
		{`{"terminal-auth":true}`, false, nil}, // the client capability marker, not a method
		{`{"terminal-auth":"copilot login"}`, false, nil},
		{`{"terminal-auth":{"command":7,"args":["a",1],"env":{"K":1}}}`, true, nil},
		{`{"type":"terminal","args":"--login"}`, true, nil},
		{`{"type":"Terminal"}`, false, nil},
		{`{"type":["terminal"]}`, false, nil},
		{`{"type":"terminal","args":["--x"],"env":{"K":"V"}}`, true, []string{"--x"}},
	} {
		m := &schema.AgentAuthMethod{ID: "m", Name: "M", Meta: json.RawMessage(tc.meta)}
		got, ok := schema.AsTerminalAuthMethod(m)
		if ok != tc.terminal {
			t.Errorf("%s: terminal %v", tc.meta, ok)
			continue
		}
		if ok && !cmp.Equal(got.Args, tc.args) {
			t.Errorf("%s: args %q, want %q", tc.meta, got.Args, tc.args)
		}
	}
}

// TestUsableAuthMethodsLegacyTerminal connects to a replayed agent that
// offers the three methods and refuses session/new with -32000.
func TestUsableAuthMethodsLegacyTerminal(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[` +
		strings.ReplaceAll(copilotMethod, "COMMAND", "/usr/bin/copilot") + `,` + qwenMethod + `,` + geminiMethod + `]}}`
	frames := []acptest.Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)},
		{Dir: "<", Msg: json.RawMessage(init)},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`)},
	}
	for _, terminalAuth := range []bool{false, true} {
		a := acptest.Replay(frames)
		r, w := a.Pipe()
		c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{TerminalAuth: terminalAuth})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range schema.UsableAuthMethods(c.InitializeResponse().AuthMethods, c.ClientCapabilities().Auth.Terminal, nil) {
			kind := "agent"
			if _, ok := m.(*schema.TerminalAuthMethod); ok {
				kind = "terminal"
			}
			got = append(got, kind+":"+m.MethodID())
		}
		want := []string{"agent:gemini-api-key"}
		if terminalAuth {
			want = append(want, "terminal:copilot-login", "terminal:openai")
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("terminalAuth=%v (-want +got):\n%s", terminalAuth, d)
		}
		_, err = c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/"})
		var ae *acp.AuthRequiredError
		if !errors.As(err, &ae) {
			t.Fatalf("NewSession: %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "copilot-login (Log in with Copilot CLI): run the agent's login command in a terminal") ||
			!strings.Contains(msg, "openai (Use OpenAI API key): run the agent's login command in a terminal (agent args --auth-type=openai)") {
			t.Errorf("error does not describe the terminal methods:\n%s", msg)
		}
		c.Close()
		a.Close()
	}
}

// TestTerminalLoginCommandLegacyBlock: the block's program is run only when
// it is the agent's own program; otherwise its args are appended to the
// agent's command line.
func TestTerminalLoginCommandLegacyBlock(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "copilot")
	other := filepath.Join(dir, "other")
	for _, p := range []string{prog, other} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "copilot-link")
	if err := os.Symlink(prog, link); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(prog, "--acp")
	for _, tc := range []struct {
		command string
		want    []string
	}{
		{prog, []string{prog, "login"}},
		{link, []string{prog, "login"}}, // the same file under another name
		{other, []string{prog, "--acp", "login"}},
		{filepath.Join(dir, "missing"), []string{prog, "--acp", "login"}},
	} {
		m, ok := schema.AsTerminalAuthMethod(decodeAuthMethods(t, tc.command, copilotMethod)[0])
		if !ok {
			t.Fatal("not a terminal method")
		}
		if got := schema.TerminalLoginCommand(m, agent); !cmp.Equal(got.Args, tc.want) || got.Path != prog {
			t.Errorf("command %s: login %s %q, want %q", tc.command, got.Path, got.Args, tc.want)
		}
	}
	// Qwen's convention means what a terminal method's args mean.
	m, _ := schema.AsTerminalAuthMethod(decodeAuthMethods(t, "", qwenMethod)[0])
	if got := schema.TerminalLoginCommand(m, agent); !cmp.Equal(got.Args, []string{prog, "--acp", "--auth-type=openai"}) {
		t.Errorf("qwen login %q", got.Args)
	}
}
