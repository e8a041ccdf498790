package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// Subprocess agents for the fault tests; the package's TestMain (in
// process_test.go) runs them when the test binary is re-executed.
func init() {
	acptest.Register("faults.crash", func() *acptest.Agent {
		return acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("partial answer")
			t.Crash()
			return "", nil
		}})
	})
	acptest.Register("faults.flood", func() *acptest.Agent {
		return acptest.New(&acptest.Options{StderrFlood: 8 << 20, OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.FloodStderr(1 << 20)
			t.Say("still here")
			return "end_turn", nil
		}})
	})
}

type diags struct {
	mu sync.Mutex
	ds []acp.Diagnostic
}

func (d *diags) add(x acp.Diagnostic) {
	d.mu.Lock()
	d.ds = append(d.ds, x)
	d.mu.Unlock()
}

func (d *diags) kinds() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, x := range d.ds {
		out = append(out, string(x.Kind))
	}
	return out
}

// runTurn connects to an in-process agent, runs one prompt and returns the
// client (closed by the test's cleanup), the session and the turn.
func runTurn(t *testing.T, opts *acptest.Options, copts *acp.ClientOptions) (*acp.Client, *acp.Session, *acp.Turn, *acptest.Agent) {
	t.Helper()
	agent := acptest.New(opts)
	fromAgent, toAgent := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); agent.Close() })
	s, err := c.NewSession(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	return c, s, turn, agent
}

func TestFaultJunkLines(t *testing.T) {
	var d diags
	c, _, turn, _ := runTurn(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		t.Junk("npm WARN deprecated uuid@3.4.0")
		t.Junk("")
		t.Say("fine")
		return "end_turn", nil
	}}, &acp.ClientOptions{OnDiagnostic: d.add})
	if stop, err := turn.Wait(); stop != schema.StopReasonEndTurn || err != nil {
		t.Fatalf("Wait = %q, %v", stop, err)
	}
	if turn.State().Messages[0].Text != "fine" {
		t.Errorf("state %+v", turn.State().Messages)
	}
	c.Close()
	if got := d.kinds(); !slices.Equal(got, []string{"junk_line", "blank_line"}) {
		t.Errorf("diagnostics %v", got)
	}
}

func TestFaultOversizedFrame(t *testing.T) {
	var d diags
	c, _, turn, _ := runTurn(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		t.Say("before ")
		t.Raw(append(acptest.HugeFrame(t.SessionID(), 1<<20), '\n'))
		t.Say("after")
		return "end_turn", nil
	}}, &acp.ClientOptions{OnDiagnostic: d.add, Limits: acp.Limits{MaxLineBytes: 64 << 10}})
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := turn.State().Messages[0].Text; got != "before after" {
		t.Errorf("text %q", got)
	}
	c.Close()
	if !slices.Contains(d.kinds(), "line_too_long") {
		t.Errorf("diagnostics %v", d.kinds())
	}
}

// A crash mid-turn: the turn fails with ErrConnClosed carrying the exit
// status and stderr tail, and what arrived before the crash is kept.
func TestFaultCrashMidTurn(t *testing.T) {
	c, err := acp.Connect(context.Background(), &acp.CommandTransport{Command: acptest.Command("faults.crash")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession(context.Background(), nil)
	turn, _ := s.Prompt(context.Background(), schema.Text("go"))
	_, err = turn.Wait()
	var ee *acp.ExitError
	if !errors.Is(err, acp.ErrConnClosed) || errors.Is(err, context.Canceled) || !errors.As(err, &ee) {
		t.Fatalf("Wait error %v", err)
	}
	if ee.ExitCode != 3 || !strings.Contains(ee.StderrTail, "simulated crash") {
		t.Errorf("exit %+v", ee)
	}
	if got := turn.State().Messages[0].Text; got != "partial answer" {
		t.Errorf("text %q", got)
	}
}

// A hanging agent: a call abandoned by its context returns the context's
// error and the agent receives $/cancel_request for it; a hanging prompt
// ends after the cancel grace.
func TestFaultHang(t *testing.T) {
	agent := acptest.New(&acptest.Options{
		Methods: map[string]acptest.MethodFunc{"session/list": acptest.NeverAnswer},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Hang()
			return "", nil
		},
	})
	defer agent.Close()
	r, w := agent.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{CancelGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	for _, err := range c.ListSessions(ctx, nil) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("list error %v", err)
		}
	}
	s, _ := c.NewSession(context.Background(), nil)
	turn, _ := s.Prompt(context.Background(), schema.Text("go"))
	turn.Cancel()
	if stop, err := turn.Wait(); stop != schema.StopReasonCancelled || !errors.Is(err, acp.ErrCancelGrace) {
		t.Errorf("Wait = %q, %v", stop, err)
	}
	if got := agent.Received("$/cancel_request"); len(got) != 1 {
		t.Errorf("$/cancel_request received %d times", len(got))
	}
}

func TestFaultUpdatesBeforeNewSessionAndAfterTurn(t *testing.T) {
	_, s, turn, _ := runTurn(t, &acptest.Options{
		OnNewSession: func(s *acptest.Session) {
			s.Commands(acptest.SlashCommand{Name: "test", Description: "Run tests"})
		},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			t.Say("answer")
			t.AfterTurn(func() { t.Say("afterthought") })
			return "end_turn", nil
		},
	}, nil)
	turn.Wait()
	if cmds := s.State().Commands; len(cmds) != 1 || cmds[0].Name != "test" {
		t.Errorf("commands %+v", cmds)
	}
	// Outside holds the commands (sent before session/new answered: not
	// late) and, once it arrives, the afterthought (late).
	for range s.Changes(context.Background()) {
		out := s.State().Outside
		if len(out) < 2 {
			continue
		}
		if out[0].Late || !out[1].Late || s.State().History.Messages[0].Text != "afterthought" {
			t.Errorf("outside %+v", out)
		}
		break
	}
	if got := turn.State().Messages[0].Text; got != "answer" {
		t.Errorf("turn text %q", got)
	}
}

func TestFaultUnknownVariantsAndIDs(t *testing.T) {
	_, _, turn, _ := runTurn(t, &acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		t.Update(map[string]any{"sessionUpdate": "hologram", "beam": 1})
		t.ToolCall(acptest.ToolCallSpec{ID: "a", Title: "Teleport", Kind: "teleport", Status: "paused"})
		t.UpdateToolCall(acptest.ToolCallSpec{ID: "never-announced", Title: "Ghost", Status: "completed"})
		t.Update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "smell", "odor": "ozone"}})
		return "end_turn", nil
	}}, nil)
	turn.Wait()
	st := turn.State()
	var first schema.Update
	for u := range turn.Updates() {
		first = u
		break
	}
	if u, ok := first.(*schema.UnknownUpdate); !ok || u.Kind != "hologram" || !strings.Contains(string(u.Raw), `"beam":1`) {
		t.Errorf("first update %#v", first)
	}
	if tc := st.ToolCalls[0]; tc.Kind != "teleport" || tc.Status != "paused" {
		t.Errorf("unknown enum values not kept: %+v", tc)
	}
	if tc := st.ToolCalls[1]; !tc.Unannounced || tc.Title != "Ghost" || tc.Status != schema.ToolCallStatusCompleted {
		t.Errorf("unannounced tool call %+v", tc)
	}
	if c, ok := st.Messages[0].Content[0].(*schema.UnknownContent); !ok || c.Type != "smell" {
		t.Errorf("unknown content %#v", st.Messages[0].Content)
	}
}

// Agents number their requests as strings or numbers; answers echo them.
func TestFaultStringAndNumericRequestIDs(t *testing.T) {
	for _, stringIDs := range []bool{false, true} {
		_, _, turn, agent := runTurn(t, &acptest.Options{StringIDs: stringIDs, OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			out, err := t.RequestPermission(map[string]any{"toolCallId": "x", "title": "X"}, acptest.DefaultPermissionOptions)
			if err != nil {
				return "", err
			}
			id, _, _ := acptest.ParseOutcome(out)
			t.Say(id)
			return "end_turn", nil
		}}, &acp.ClientOptions{Permission: acp.AllowAll})
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := turn.State().Messages[0].Text; got != "allow" {
			t.Errorf("stringIDs=%v: outcome %q", stringIDs, got)
		}
		var sawString bool
		for _, f := range agent.Transcript() {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if f.Dir == ">" && json.Unmarshal(f.Msg, &m) == nil && len(m.ID) > 0 && m.ID[0] == '"' {
				sawString = true
			}
		}
		if sawString != stringIDs {
			t.Errorf("stringIDs=%v: client echoed a string id: %v", stringIDs, sawString)
		}
	}
}

// A flood on stderr neither blocks the agent nor the client; only the last
// 64 KiB are kept.
func TestFaultStderrFlood(t *testing.T) {
	c, err := acp.Connect(context.Background(), &acp.CommandTransport{Command: acptest.Command("faults.flood")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession(context.Background(), nil)
	turn, _ := s.Prompt(context.Background(), schema.Text("go"))
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := turn.State().Messages[0].Text; got != "still here" {
		t.Errorf("text %q", got)
	}
	if n := len(c.StderrTail()); n == 0 || n > 64<<10 {
		t.Errorf("stderr tail is %d bytes", n)
	}
}
