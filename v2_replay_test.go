package acp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
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
	if c.ProtocolVersion() != 2 {
		t.Fatalf("negotiated %d", c.ProtocolVersion())
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
			s, err := cl.NewSession(ctx, &acp.NewSessionRequest{Cwd: "/tmp/e2e/work"})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(ctx, acp.Text("Say hello"))
			if err != nil {
				t.Fatal(err)
			}
			stop, err := turn.Wait()
			if err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
			st := turn.State()
			if len(st.Messages) == 0 || (c.text != "" && st.Messages[len(st.Messages)-1].Text != c.text) {
				t.Fatalf("messages %+v", st.Messages)
			}
			if turn.MessageID() == "" {
				t.Errorf("no messageId from the prompt's answer")
			}
			if a := s.State().Activity; a == nil || a.State != acp.StateIdle {
				t.Errorf("Activity = %+v", a)
			}
		})
	}
}
