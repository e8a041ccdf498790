//go:build linux

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
)

// The real agents in ACP v2 through our client: the same Go code as the
// v1 tests with ClientOptions.ProtocolVersion 2. Every diagnostic the
// client reports fails the test (harness), so a v2 update the client does
// not know surfaces here.

// v2Agents are the agents that speak v2 (e2e/v2's node_modules), in the
// v1 harness's terms.
func v2Agents() []agent {
	var out []agent
	for _, v := range realV2 {
		out = append(out, agent{name: v.name, setup: v.setup})
	}
	return out
}

func startV2Client(t *testing.T, ag agent, opts *acp.ClientOptions) *run {
	t.Helper()
	if opts == nil {
		opts = &acp.ClientOptions{}
	}
	opts.ProtocolVersion = 2
	r := start(t, ag, opts)
	if r.C.ProtocolVersion() != 2 {
		t.Fatalf("%s negotiated %d, want 2", ag.name, r.C.ProtocolVersion())
	}
	return r
}

// askModeV2 sets the mode config option that makes the agent ask for
// permission (both start in a mode that never asks).
func askModeV2(t *testing.T, r *run) {
	t.Helper()
	value := map[string]string{"claude": "default", "codex": "read-only"}[r.ag.name]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.S.SetConfigOption(ctx, "mode", value); err != nil {
		t.Fatalf("set mode %s: %v", value, err)
	}
}

func TestV2ClientText(t *testing.T) {
	for _, ag := range v2Agents() {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			r := startV2Client(t, ag, nil)
			r.Model.Script(Reply{Thinking: []string{"Let me ", "think."}, Text: []string{"Hel", "lo ", "there!"}}, spare)
			turn, stop, err := r.prompt("say hello")
			if err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("turn: %v, %v", stop, err)
			}
			st := turn.State()
			if got := strings.Join(texts(st.Messages), "|"); !strings.Contains(got, "Hello there!") {
				t.Errorf("messages %q", got)
			}
			if turn.MessageID() == "" {
				t.Errorf("no messageId in the prompt's answer")
			}
			if a := r.S.State().Activity; a == nil || a.State != acp.StateIdle {
				t.Errorf("activity %+v", a)
			}
		})
	}
}

func TestV2ClientPermission(t *testing.T) {
	for _, ag := range v2Agents() {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			var log permissionLog
			r := startV2Client(t, ag, &acp.ClientOptions{Permission: log.wrap(acp.AllowAll)})
			askModeV2(t, r)
			r.Model.Script(
				Reply{Text: []string{"I will create it."}, Tool: askingShell(ag, "call_make", "echo made > made.txt && echo created")},
				Reply{Text: []string{"Done."}}, spare,
			)
			_, stop, err := r.prompt("create made.txt")
			if err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("turn: %v, %v", stop, err)
			}
			if perms := log.all(); len(perms) != 1 || perms[0].ToolCall.ToolCallID == "" {
				t.Fatalf("permission requests %+v", perms)
			}
			if b, err := os.ReadFile(r.path("made.txt")); err != nil || string(b) != "made\n" {
				t.Errorf("made.txt: %q, %v; want the command to have run", b, err)
			}
		})
	}
}

func TestV2ClientCancel(t *testing.T) {
	for _, ag := range v2Agents() {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan struct{}, 1)
			perm := func(ctx context.Context, req *acp.PermissionRequest) (acp.PermissionOutcome, error) {
				asked <- struct{}{}
				<-ctx.Done()
				return acp.CancelledOutcome(), nil
			}
			r := startV2Client(t, ag, &acp.ClientOptions{Permission: perm})
			askModeV2(t, r)
			// Claude Code may ask the model once more after the cancelled
			// call (spare); the turn still ends cancelled.
			r.Model.Script(Reply{Text: []string{"I will wait."}, Tool: askingShell(ag, "call_wait", "echo late > late.txt && sleep 30")}, spare)
			turn, err := r.S.Prompt(context.Background(), acp.Text("wait a while"))
			if err != nil {
				t.Fatal(err)
			}
			<-asked
			turn.Cancel()
			stop, err := turn.Wait()
			if err != nil || stop != acp.StopReasonCancelled {
				t.Fatalf("Wait = %q, %v", stop, err)
			}
			if _, err := os.Stat(r.path("late.txt")); err == nil {
				t.Errorf("the cancelled command ran")
			}
		})
	}
}

func TestV2ClientLoad(t *testing.T) {
	for _, ag := range v2Agents() {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			r := startV2Client(t, ag, nil)
			r.Model.Script(Reply{Text: []string{"First answer."}}, spare)
			if _, stop, err := r.prompt("remember this"); err != nil || stop != acp.StopReasonEndTurn {
				t.Fatalf("turn: %v, %v", stop, err)
			}
			id := r.S.ID()
			r.C.Close()
			r.connect(&acp.ClientOptions{ProtocolVersion: 2})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := r.C.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: id, Cwd: r.Dir})
			if err != nil {
				t.Fatalf("load (resume from the start): %v", err)
			}
			h := s.State().History
			if u := texts(h.UserMessages); len(u) == 0 || !strings.HasSuffix(u[len(u)-1], "remember this") {
				t.Errorf("replayed user messages %q", u)
			}
			if m := strings.Join(texts(h.Messages), "|"); !strings.Contains(m, "First answer.") {
				t.Errorf("replayed agent messages %q", m)
			}
		})
	}
}
