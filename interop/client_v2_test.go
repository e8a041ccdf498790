package interop

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// connectTSV2 starts the TypeScript SDK's v2 agent (agent_v2.mjs) and
// connects our client to it offering v2: the same Go code as the v1
// interop tests, with ClientOptions.ProtocolVersion 2. The scenarios the
// v1 interop tests (client_test.go) run and their v2 counterparts are
// listed in README.md ("Our client against it").
// env is added to the agent's environment.
func connectTSV2(t *testing.T, opts *acp.ClientOptions, env ...string) *acp.Client {
	t.Helper()
	node := needTool(t, "node")
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript agent's dependencies failed: %v", npmErr)
	}
	cmd := exec.Command(node, tsagentV2)
	cmd.Dir = tsagentDir
	cmd.Env = append(os.Environ(), env...)
	o := acp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = 2
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, &o)
	if err != nil {
		t.Fatalf("acp.Connect to the TypeScript v2 agent: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("tsagent stderr tail:\n%s", c.StderrTail())
		}
	})
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("negotiated %d, want 2", c.InitializeResponse().ProtocolVersion)
	}
	return c
}

func v2Session(t *testing.T, c *acp.Client) *acp.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func v2Turn(t *testing.T, s *acp.Session, text string) *acp.Turn {
	t.Helper()
	turn, err := s.Prompt(context.Background(), schema.Text(text))
	if err != nil {
		t.Fatal(err)
	}
	return turn
}

// Every stable v2 update kind the SDK sends, folded by our client: the turn
// ends at the idle, upserts keep, clear and replace.
func TestInteropV2Updates(t *testing.T) {
	t.Parallel()
	s := v2Session(t, connectTSV2(t, nil))
	turn := v2Turn(t, s, "updates")
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	st := turn.State()
	if len(st.Messages) != 1 || st.Messages[0].Text != "Hello, world!" {
		t.Errorf("messages %+v", st.Messages)
	}
	if len(st.Thoughts) != 1 || st.Thoughts[0].Text != "thought it over" {
		t.Errorf("thoughts %+v", st.Thoughts)
	}
	if len(st.UserMessages) != 1 || st.UserMessages[0].Text != "updates" || st.UserMessages[0].MessageID != turn.MessageID() {
		t.Errorf("user messages %+v, messageId %q", st.UserMessages, turn.MessageID())
	}
	if len(st.ToolCalls) != 1 {
		t.Fatalf("tool calls %+v", st.ToolCalls)
	}
	tc := st.ToolCalls[0]
	if tc.Unannounced || tc.Title != "Edit /tmp/acp-interop/a.txt" || tc.Status != schema.ToolCallStatusCompleted || len(tc.Locations) != 0 || len(tc.Content) != 2 {
		t.Errorf("tool call %+v", tc)
	}
	if len(tc.Content) == 2 {
		if d, ok := tc.Content[1].(*schema.DiffContent); !ok || len(d.Changes) != 1 || d.Changes[0].Path != "/tmp/acp-interop/a.txt" {
			t.Errorf("the v2 diff: %#v", tc.Content[1])
		}
	}
	ss := s.State()
	if ss.Title != "" || ss.Activity == nil || ss.Activity.State.State != schema.StateIdle || ss.Usage == nil {
		t.Errorf("session: title %q activity %+v usage %+v", ss.Title, ss.Activity, ss.Usage)
	}
}

// Load is resume from the start: the replay lands in History.
func TestInteropV2Load(t *testing.T) {
	t.Parallel()
	c := connectTSV2(t, nil)
	s := v2Session(t, c)
	if _, err := v2Turn(t, s, "remember this").Wait(); err != nil {
		t.Fatal(err)
	}
	cwd := s.State().Cwd
	s.Release()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	loaded, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID(), Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	h := loaded.State().History
	if len(h.UserMessages) == 0 || h.UserMessages[0].Text != "remember this" || len(h.Messages) == 0 {
		t.Fatalf("history %+v", h)
	}
}

// The agent's own terminal outlives the turn in the background and
// streams on; CancelTerminal stops it, and the exit status arrives.
func TestInteropV2BackgroundTerminal(t *testing.T) {
	t.Parallel()
	s := v2Session(t, connectTSV2(t, nil))
	if _, err := v2Turn(t, s, "terminal").Wait(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var id string
	for range s.Changes(ctx) {
		st := s.State()
		if len(st.Terminals) == 1 && strings.Contains(string(st.Terminals[0].Output), "tick 1") {
			id = st.Terminals[0].TerminalID
			break
		}
	}
	if id == "" {
		t.Fatal("no terminal output after the turn")
	}
	if err := s.CancelTerminal(ctx, id); err != nil {
		t.Fatal(err)
	}
	for range s.Changes(ctx) {
		st := s.State()
		if st.Terminals[0].Exit != nil {
			if st.Terminals[0].Exit.Signal == nil || *st.Terminals[0].Exit.Signal != "SIGTERM" {
				t.Errorf("exit %+v", st.Terminals[0].Exit)
			}
			return
		}
	}
	t.Fatal("no exit status")
}

// A prompt the agent rejects ends the turn with its error.
func TestInteropV2Reject(t *testing.T) {
	t.Parallel()
	s := v2Session(t, connectTSV2(t, nil))
	_, err := v2Turn(t, s, "reject").Wait()
	var ae *schema.Error
	if !errors.As(err, &ae) || ae.Code != -32603 {
		t.Fatalf("Wait err = %v", err)
	}
}

// Offered 2, the TypeScript SDK's v1 agent (agent.mjs) answers 1: the
// client takes it and speaks v1, fs handlers and all ("offer the highest,
// take what the agent picks"). The real agents of the e2e suite both speak
// v2 now, so this v1-only peer is the one that shows the fallback.
func TestInteropV2OfferToV1Agent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c := connectTS(t, &acp.ClientOptions{ProtocolVersion: 2})
	if v := c.InitializeResponse().ProtocolVersion; v != 1 {
		t.Fatalf("negotiated %d, want 1", v)
	}
	s := newSession(t, ctx, c, t.TempDir())
	checkReports(t, "echo", mustRun(t, ctx, s, "hello there"), "echo:hello there")
}
