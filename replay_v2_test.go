package acp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// replayV2 connects a v2-offering client to the replay of a v2 recording.
func replayV2(t *testing.T, name string, opts *acp.ClientOptions) *acp.Client {
	t.Helper()
	f, err := os.Open("testdata/transcripts/v2/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := acptest.ReadTranscript(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	agent := acptest.Replay(frames)
	t.Cleanup(func() { agent.Close() })
	fromAgent, toAgent := agent.Pipe()
	o := acp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.ProtocolVersion = 2
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("negotiated %d", c.InitializeResponse().ProtocolVersion)
	}
	return c
}

// Rule: a v2 turn ends at the agent's idle state_update, not at the
// prompt's answer ({messageId}, accepted only); the same Go code as v1
// gets the text, with the real agents' recordings.
func TestV2ReplayTextRealAgents(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"codex-text", "Hello from the model."},
		{"claude-text", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := replayV2(t, c.name, nil)
			ctx := context.Background()
			s, err := cl.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/e2e/work"})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx, schema.Text("Say hello"))
			if err != nil {
				t.Fatal(err)
			}
			stop, err := turn.Wait()
			if err != nil || stop != schema.StopReasonEndTurn {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
			st := turn.State()
			if len(st.Messages) == 0 || (c.text != "" && st.Messages[len(st.Messages)-1].Text != c.text) {
				t.Fatalf("messages %+v", st.Messages)
			}
			if turn.MessageID() == "" {
				t.Errorf("no messageId from the prompt's answer")
			}
			if a := s.State().Activity; a == nil || a.State.State != schema.StateIdle {
				t.Errorf("Activity = %+v", a)
			}
		})
	}
}

// Rule: LoadSession on a v2 agent is session/resume with replayFrom
// {"type":"start"} (v2 has no session/load); the replay, whole messages
// with their ids, lands in History before LoadSession returns, and ends
// with the agent's idle snapshot (no replay_complete). The TypeScript v2
// agent's recording.
func TestV2LoadIsResumeFromStart(t *testing.T) {
	cl := replayV2(t, "tsagent-v2-resume", nil)
	ctx := context.Background()
	s, err := cl.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/e2e/work"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("remember this"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	s.Release()
	loaded, err := cl.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: s.ID(), Cwd: "/tmp/e2e/work"})
	if err != nil {
		t.Fatal(err)
	}
	h := loaded.State().History
	if len(h.UserMessages) != 1 || h.UserMessages[0].Text != "remember this" || len(h.Messages) != 1 || h.Messages[0].Text != "echo:remember this" {
		t.Fatalf("history %+v", h)
	}
	if o := loaded.State().Outside; len(o) == 0 || !o[0].Replay {
		t.Fatalf("outside %+v", o)
	}
}

// Rule: a v2 permission request (title, subject) reaches the same
// handler as v1's, with the subject's tool call, and its answer goes back;
// then the turn ends at the idle. Recordings of the TS agent, codex-acp
// and claude-agent-acp.
func TestV2ReplayPermission(t *testing.T) {
	for _, c := range []struct{ name, prompt, mode string }{
		{"tsagent-v2-permission", "permission", ""},
		{"codex-permission", "create made.txt", "read-only"},
		{"claude-permission", "create made.txt", "default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := make(chan *acp.PermissionRequest, 1)
			perm := func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
				asked <- req
				return acp.AllowAll(ctx, req)
			}
			cl := replayV2(t, c.name, &acp.ClientOptions{Permission: perm})
			ctx := context.Background()
			s, err := cl.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/e2e/work"})
			if err != nil {
				t.Fatal(err)
			}
			if c.mode != "" {
				if _, err := s.SetConfigOption(ctx, "mode", c.mode); err != nil {
					t.Fatal(err)
				}
			}
			turn, err := s.Prompt(ctx, schema.Text(c.prompt))
			if err != nil {
				t.Fatal(err)
			}
			stop, err := turn.Wait()
			if err != nil || stop != schema.StopReasonEndTurn {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
			req := <-asked
			if req.ToolCall.ToolCallID == "" || len(req.Options) == 0 {
				t.Fatalf("permission request %+v", req)
			}
		})
	}
}

// Rule: Cancel on a v2 agent: session/cancel goes out, the agent
// withdraws the pending permission request ($/cancel_request), which
// cancels the handler's context, and the turn ends at the idle, cancelled.
func TestV2ReplayCancel(t *testing.T) {
	for _, c := range []struct{ name, prompt, mode string }{
		{"tsagent-v2-cancel", "cancel", ""},
		{"codex-cancel", "wait a while", "read-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := make(chan struct{}, 1)
			withdrawn := make(chan struct{})
			perm := func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
				asked <- struct{}{}
				<-ctx.Done()
				close(withdrawn)
				return acp.CancelledOutcome(), nil
			}
			cl := replayV2(t, c.name, &acp.ClientOptions{Permission: perm})
			ctx := context.Background()
			s, err := cl.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/e2e/work"})
			if err != nil {
				t.Fatal(err)
			}
			if c.mode != "" {
				if _, err := s.SetConfigOption(ctx, "mode", c.mode); err != nil {
					t.Fatal(err)
				}
			}
			turn, err := s.Prompt(ctx, schema.Text(c.prompt))
			if err != nil {
				t.Fatal(err)
			}
			<-asked
			turn.Cancel()
			<-withdrawn
			stop, err := turn.Wait()
			if err != nil || stop != schema.StopReasonCancelled {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
		})
	}
}

// Rule: the TypeScript v2 agent's diff (the "updates" turn of its
// recording: changes only, no patch) folds into a DiffContent with
// Changes, not into raw unknown content.
func TestV2ReplayDiffContent(t *testing.T) {
	cl := replayV2(t, "tsagent-v2-text", nil)
	ctx := context.Background()
	s, err := cl.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp/acp-interop"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("updates"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	var diffs []*schema.DiffContent
	for _, tc := range turn.State().ToolCalls {
		for _, c := range tc.Content {
			if d, ok := c.(*schema.DiffContent); ok {
				diffs = append(diffs, d)
			}
		}
	}
	if len(diffs) != 1 || len(diffs[0].Changes) != 1 || diffs[0].Changes[0].Operation != "modify" ||
		diffs[0].Path != "/tmp/acp-interop/a.txt" || diffs[0].Patch != nil {
		t.Fatalf("diffs %+v", diffs)
	}
}
