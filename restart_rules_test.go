package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func init() {
	// A subprocess agent that knows one session from its options (every
	// process does: it is its "disk"), crashes on "crash" prompts, and,
	// once the file RESTART_LOOP names exists, dies at start: a crash loop.
	acptest.Register("restart.crash", func() *acptest.Agent {
		if mark := os.Getenv("RESTART_LOOP"); mark != "" {
			if _, err := os.Stat(mark); err == nil {
				os.Stderr.WriteString("boom: the agent cannot start\n")
				os.Exit(7)
			}
		}
		return acptest.New(&acptest.Options{
			OnPrompt: crashScript,
			History: map[string][]any{"sess-known": {
				acptest.UserMessage("", "hello"),
				acptest.AgentMessage("", "answer to hello"),
			}},
		})
	})
}

// restartEvents collects what OnRestart is told.
type restartEvents struct {
	mu  sync.Mutex
	evs []acp.RestartEvent
	ch  chan acp.RestartEvent
}

func newRestartEvents() *restartEvents { return &restartEvents{ch: make(chan acp.RestartEvent, 100)} }

func (r *restartEvents) on(ev acp.RestartEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	r.ch <- ev
}

// wait returns the next event of phase p.
func (r *restartEvents) wait(t *testing.T, ctx context.Context, p acp.RestartPhase) acp.RestartEvent {
	t.Helper()
	for {
		select {
		case ev := <-r.ch:
			if ev.Phase == p {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("no %s event", p)
		}
	}
}

// A CommandTransport agent is started again (a new process) and its
// session loaded; the replay of what the client had is not folded again.
func TestRestartCommandTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs := newRestartEvents()
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: acptest.Command("restart.crash")},
		&acp.ClientOptions{Restart: &acp.RestartPolicy{OnRestart: evs.on}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-known"})
	if err != nil {
		t.Fatal(err)
	}
	before := s.State().History
	turn, err := run(ctx, s, "crash it")
	var ee *acp.ExitError
	if !errors.Is(err, acp.ErrAgentRestarted) || !errors.As(err, &ee) || ee.ExitCode != 3 || !strings.Contains(ee.StderrTail, "simulated crash") {
		t.Fatalf("the interrupted turn: %v", err)
	}
	if got := turn.State().Messages; len(got) != 1 {
		t.Errorf("the interrupted turn lost what it had: %+v", got)
	}
	died := evs.wait(t, ctx, acp.RestartDied)
	if !errors.As(died.Err, &ee) || died.Connection != 1 {
		t.Errorf("died event %+v", died)
	}
	restored := evs.wait(t, ctx, acp.RestartRestored)
	if len(restored.Restored) != 1 || restored.Restored[0] != "sess-known" || restored.Connection != 2 {
		t.Errorf("restored event %+v", restored)
	}
	if _, err := run(ctx, s, "next"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if after := s.State().History; len(after.Messages) != len(before.Messages) || len(after.UserMessages) != len(before.UserMessages) {
		t.Errorf("History before %+v, after %+v", before, after)
	}
}

// A crash loop spends the budget: the client ends with
// ErrTooManyRestarts, ErrConnClosed and the last exit status and stderr.
func TestRestartBudgetExhausted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mark := filepath.Join(t.TempDir(), "loop")
	cmd := acptest.Command("restart.crash")
	cmd.Env = append(cmd.Environ(), "RESTART_LOOP="+mark)
	p := &acp.RestartPolicy{MaxRestarts: 3}
	var delays []time.Duration
	acp.SetRestartClock(p, func(d time.Duration) <-chan time.Time {
		delays = append(delays, d) // the restart goroutine only, one at a time
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}, time.Now)
	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, &acp.ClientOptions{Restart: p})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatalf("turn: %v", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the client did not give up")
	}
	err = c.Err()
	var ee *acp.ExitError
	if !errors.Is(err, acp.ErrTooManyRestarts) || !errors.Is(err, acp.ErrConnClosed) || !errors.As(err, &ee) {
		t.Fatalf("Err = %v", err)
	}
	// A client that gave up is not a turn the agent's restart interrupted.
	if errors.Is(err, acp.ErrAgentRestarted) {
		t.Errorf("Err = %v: wraps ErrAgentRestarted", err)
	}
	if ee.ExitCode != 7 || !strings.Contains(ee.StderrTail, "boom") {
		t.Errorf("the last death: %+v", ee)
	}
	// The first restart is immediate, the next ones back off.
	if want := []time.Duration{500 * time.Millisecond, time.Second}; !slicesEqual(delays, want) {
		t.Errorf("backoff %v, want %v", delays, want)
	}
	if _, err := s.Prompt(ctx, schema.Text("x")); !errors.Is(err, acp.ErrConnClosed) {
		t.Errorf("a prompt after giving up: %v", err)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The backoff doubles from MinBackoff up to MaxBackoff, and the budget
// counts restarts within the window only: restarts far apart never run
// out of it.
func TestRestartBackoffAndWindow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: crashScript})
	p := &acp.RestartPolicy{MaxRestarts: 5, Window: time.Minute, MinBackoff: time.Second, MaxBackoff: 3 * time.Second}
	var mu sync.Mutex
	var delays []time.Duration
	now := time.Unix(1000, 0)
	acp.SetRestartClock(p, func(d time.Duration) <-chan time.Time {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	evs := newRestartEvents()
	p.OnRestart = evs.on
	c, _ := restartClient(t, a, p, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
			t.Fatalf("turn %d: %v", i, err)
		}
		evs.wait(t, ctx, acp.RestartRestored)
	}
	mu.Lock()
	got := append([]time.Duration(nil), delays...)
	now = now.Add(2 * time.Minute) // the window has passed
	mu.Unlock()
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slicesEqual(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
	for i := range 5 {
		if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
			t.Fatalf("turn %d after the window: %v", i, err)
		}
		evs.wait(t, ctx, acp.RestartRestored)
	}
	if _, err := run(ctx, s, "fine"); err != nil || c.Err() != nil {
		t.Fatalf("after restarts spread over two windows: %v, %v", err, c.Err())
	}
}

// The default re-authentication repeats the caller's last Authenticate;
// a failed one ends the client with the agent's error.
func TestRestartReauthenticates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	calls, reject := 0, false
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, RequireAuth: true,
		AuthMethods: []any{map[string]any{"id": "login", "name": "Log in"}},
		AcceptAuth: func(id string) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if reject {
				return &acptest.Error{Code: -32000, Message: "token expired"}
			}
			return nil
		}})
	c, tr := restartClient(t, a, nil, nil)
	if _, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: "login"}); err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.BeforeConnect = func(context.Context, int) error {
		a.SetAuthenticated(false) // a new process does not remember
		return nil
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "next"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	mu.Lock()
	if calls != 2 {
		t.Errorf("authenticate called %d times, want 2", calls)
	}
	reject = true
	mu.Unlock()
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	<-c.Done()
	var ae *schema.Error
	if err := c.Err(); !errors.Is(err, acp.ErrConnClosed) || !errors.As(err, &ae) || !strings.Contains(err.Error(), "re-authenticating") {
		t.Errorf("Err = %v", err)
	}
}

// RestartPolicy.Reauthenticate replaces the default, and its calls go to
// the new connection.
func TestRestartReauthenticateHook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, RequireAuth: true})
	hooked := 0
	p := &acp.RestartPolicy{Reauthenticate: func(ctx context.Context, c *acp.Client) error {
		hooked++
		_, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: "acptest-login"})
		return err
	}}
	c, tr := restartClient(t, a, p, nil)
	a.SetAuthenticated(true)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.BeforeConnect = func(context.Context, int) error {
		a.SetAuthenticated(false)
		return nil
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "next"); err != nil || hooked != 1 {
		t.Fatalf("after the restart: %v (hook ran %d times)", err, hooked)
	}
}

// An agent that offers neither resume nor load loses the session: its
// calls fail with ErrSessionLost naming it; the client lives on.
func TestRestartSessionLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, Restore: acptest.RestoreNone})
	evs := newRestartEvents()
	c, _ := restartClient(t, a, &acp.RestartPolicy{OnRestart: evs.on}, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	ev := evs.wait(t, ctx, acp.RestartRestored)
	if len(ev.Lost) != 1 || ev.Lost[0] != s.ID() {
		t.Errorf("restored event %+v", ev)
	}
	if err := s.Err(); !errors.Is(err, acp.ErrSessionLost) || !strings.Contains(err.Error(), s.ID()) {
		t.Errorf("Session.Err = %v", err)
	}
	if _, err := s.Prompt(ctx, schema.Text("x")); !errors.Is(err, acp.ErrSessionLost) {
		t.Errorf("Prompt on a lost session: %v", err)
	}
	if c.Session(s.ID()) != nil {
		t.Error("the lost session is still the client's")
	}
	s2, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s2, "fine"); err != nil {
		t.Fatal(err)
	}
}

// A session the restarted agent refuses to load is lost with the agent's
// error; the others are restored.
func TestRestartSessionRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, Restore: acptest.RestoreLoadOnly})
	c, _ := restartClient(t, a, nil, nil)
	s1, _ := c.NewSession(ctx, nil)
	s2, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteSession(ctx, &schema.DeleteSessionRequest{SessionID: s1.ID()}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s2, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	if _, err := run(ctx, s2, "next"); err != nil {
		t.Fatalf("the restored session: %v", err)
	}
	var ae *schema.Error
	if err := s1.Err(); !errors.Is(err, acp.ErrSessionLost) || !errors.As(err, &ae) {
		t.Errorf("the refused session: %v", err)
	}
}

// A call made while the agent is being restarted waits for it and then
// succeeds; one whose context ends first fails with that.
func TestRestartCallWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: crashScript})
	entered, release := make(chan struct{}), make(chan struct{})
	tr := &acptest.Transport{Agent: a, BeforeConnect: func(ctx context.Context, n int) error {
		if n == 2 {
			close(entered)
			<-release
		}
		return nil
	}}
	c, err := acp.Connect(ctx, tr, &acp.ClientOptions{Restart: &acp.RestartPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Kill()
	<-entered
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if _, err := c.NewSession(short, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a call whose context ended while waiting: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, s, "after the restart")
		done <- err
	}()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the prompt made during the restart: %v", err)
	}
	if got := s.Turns()[0].State().Messages[0].Text; got != "answer to after the restart" {
		t.Errorf("got %q", got)
	}
}

// Close during a restart ends it cleanly (TestMain's goleak checks that
// nothing is left), whether the restart waits in its backoff or in the
// transport.
func TestRestartCloseDuringReconnect(t *testing.T) {
	for _, where := range []string{"connect", "backoff"} {
		t.Run(where, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			a := acptest.New(nil)
			defer a.Close()
			entered := make(chan struct{})
			p := &acp.RestartPolicy{}
			tr := &acptest.Transport{Agent: a}
			if where == "connect" {
				tr.BeforeConnect = func(ctx context.Context, n int) error {
					if n == 2 {
						close(entered)
						<-ctx.Done() // the restart's context: Close ends it
						return ctx.Err()
					}
					return nil
				}
			} else {
				// Spend the immediate first restart, then hang in the backoff.
				p.OnRestart = func(ev acp.RestartEvent) {
					if ev.Phase == acp.RestartWaiting {
						close(entered)
					}
				}
				acp.SetRestartClock(p, func(time.Duration) <-chan time.Time { return nil }, time.Now)
				tr.BeforeConnect = func(ctx context.Context, n int) error {
					if n == 2 {
						return errors.New("no agent today")
					}
					return nil
				}
			}
			c, err := acp.Connect(ctx, tr, &acp.ClientOptions{Restart: p})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.NewSession(ctx, nil); err != nil {
				t.Fatal(err)
			}
			a.Kill()
			<-entered
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Err(); !errors.Is(err, acp.ErrConnClosed) || !strings.Contains(err.Error(), "closed by the client") {
				t.Errorf("Err = %v", err)
			}
		})
	}
}

// A permission dialog open when the agent dies is cancelled (its
// handler's context ends); the turn fails with ErrAgentRestarted and the
// next one works.
func TestRestartCancelsPermissionDialog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acptest.New(&acptest.Options{OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
		if t.PromptText() == "ask" {
			t.ToolCall(acptest.ToolCallSpec{ID: "tc-1", Title: "write"})
			t.AskPermission(acptest.ToolCallSpec{ID: "tc-1"})
			return schema.StopReasonEndTurn, nil
		}
		t.Say("answer to " + t.PromptText())
		return schema.StopReasonEndTurn, nil
	}})
	asked := make(chan struct{})
	handlerErr := make(chan error, 1)
	c, _ := restartClient(t, a, nil, &acp.ClientOptions{Permission: func(ctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		close(asked)
		<-ctx.Done()
		handlerErr <- ctx.Err()
		return schema.PermissionOutcome{}, ctx.Err()
	}})
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(ctx, schema.Text("ask"))
	if err != nil {
		t.Fatal(err)
	}
	<-asked
	a.Kill()
	if _, err := turn.Wait(); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatalf("turn: %v", err)
	}
	select {
	case err := <-handlerErr:
		if err == nil {
			t.Error("the handler's context ended without an error")
		}
	case <-ctx.Done():
		t.Fatal("the permission handler's context was not cancelled")
	}
	if _, err := run(ctx, s, "next"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if n := len(s.State().History.ToolCalls); n != 0 {
		t.Errorf("the replayed tool call was folded again: %d in History", n)
	}
}

// The agent is killed mid-replay during the restore: the next attempt
// restores the session, with nothing folded twice.
func TestRestartKilledMidReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	loads := 0
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, Restore: acptest.RestoreLoadOnly,
		OnReplay: func(s *acptest.Session, i int) {
			mu.Lock()
			if i == 0 {
				loads++
			}
			first := loads == 1
			mu.Unlock()
			if first && i == 2 {
				s.Crash()
			}
		}})
	c, tr := restartClient(t, a, nil, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "three"); err != nil {
		t.Fatal(err)
	}
	if tr.Connects() != 3 {
		t.Errorf("%d connections, want 3", tr.Connects())
	}
	st := s.State()
	if st.Restarts != 1 {
		t.Errorf("Restarts = %d, want 1 (one per restart, not per attempt that reached the session)", st.Restarts)
	}
	if h := st.History; len(h.Messages)+len(h.UserMessages) != 0 {
		t.Errorf("History %+v", h)
	}
}

// The client's own choices are set again when the agent came back without
// them.
func TestRestartReappliesChoices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	modes := map[string]any{"currentModeId": "ask", "availableModes": []any{
		map[string]any{"id": "ask", "name": "Ask"}, map[string]any{"id": "code", "name": "Code"}}}
	config := []any{map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "a",
		"options": []any{map[string]any{"value": "a", "name": "A"}, map[string]any{"value": "b", "name": "B"}}}}
	forget := false
	var mu sync.Mutex
	a := acptest.New(&acptest.Options{OnPrompt: crashScript, Modes: modes, ConfigOptions: config,
		OnLoadSession: func(s *acptest.Session) {
			mu.Lock()
			defer mu.Unlock()
			if forget { // the restarted agent lost the session's settings
				s.Mode("ask")
				s.ConfigOptions(config)
			}
		}})
	c, _ := restartClient(t, a, nil, nil)
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(ctx, "code"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfigOption(ctx, "model", "b"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	forget = true
	mu.Unlock()
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "next"); err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if st.Modes.CurrentModeID != "code" {
		t.Errorf("mode %q, want code", st.Modes.CurrentModeID)
	}
	if v := st.ConfigOptions[0].(*schema.SelectConfigOption).CurrentValue; v != "b" {
		t.Errorf("model %q, want b", v)
	}
}

// v2: the session is resumed replaying from the start (the only standard
// cursor of schema 2.4.0) and the replay reconciled as a v1 load's.
func TestRestartV2ResumesFromStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var replayed atomic.Int64
	a := acptest.New(&acptest.Options{Version: 2, OnPrompt: crashScript,
		OnReplay: func(*acptest.Session, int) { replayed.Add(1) }})
	c, _ := restartClient(t, a, nil, &acp.ClientOptions{ProtocolVersion: 2})
	if c.InitializeResponse().ProtocolVersion != 2 {
		t.Fatalf("version %d", c.InitializeResponse().ProtocolVersion)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, s, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatalf("the interrupted turn: %v", err)
	}
	if _, err := run(ctx, s, "again"); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if replayed.Load() == 0 {
		t.Error("the restore did not replay (no replayFrom?)")
	}
	st := s.State()
	if h := st.History; len(h.Messages)+len(h.UserMessages)+len(h.ToolCalls) != 0 {
		t.Errorf("the replay was folded again into History: %+v", h)
	}
	if st.Restarts != 1 {
		t.Errorf("Restarts = %d", st.Restarts)
	}
	turns := s.Turns()
	if got := turns[2].State().Messages; len(got) != 1 || got[0].Text != "answer to again" {
		t.Errorf("the turn after the restart: %+v", got)
	}
}

// A call in flight when the agent dies fails with ErrAgentRestarted (not
// ErrConnClosed: the client lives on); the same call after the restart
// goes through.
func TestRestartCallInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var calls atomic.Int64
	a := acptest.New(&acptest.Options{Methods: map[string]acptest.MethodFunc{
		schema.MethodSessionList: func(ctx context.Context, c *acptest.Conn, params json.RawMessage) (any, error) {
			if calls.Add(1) == 1 {
				c.Crash()
			}
			return map[string]any{"sessions": []any{}}, nil
		}}})
	c, _ := restartClient(t, a, nil, nil)
	list := func() error {
		for _, err := range c.ListSessions(ctx, nil) {
			return err
		}
		return nil
	}
	if err := list(); !errors.Is(err, acp.ErrAgentRestarted) || errors.Is(err, acp.ErrConnClosed) {
		t.Fatalf("the call in flight: %v", err)
	}
	if err := list(); err != nil {
		t.Fatalf("the call after the restart: %v", err)
	}
}

// A restart whose first attempt fails counts one restart, not two: each
// session gets one EventRestarted and one SessionState.Restarts, from the
// attempt that brought it back, whether the failed attempt never
// connected or died restoring (after one session was back, on the other),
// and the session's feed, folded, is its State.
func TestRestartCountsRestoresNotAttempts(t *testing.T) {
	for _, tc := range []struct {
		name string
		// killed: the first attempt's agent is killed while it restores
		// the second session; else the first attempt cannot connect.
		killed bool
	}{{"connect fails", false}, {"killed restoring", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var (
				a      *acptest.Agent
				armed  atomic.Bool // the next restore of the session named victim fails
				victim atomic.Value
			)
			a = acptest.New(&acptest.Options{OnPrompt: crashScript, OnLoadSession: func(s *acptest.Session) {
				if tc.killed && s.SessionID() == victim.Load() && armed.CompareAndSwap(true, false) {
					a.Kill() // before the answer: the attempt dies restoring
				}
			}})
			tr := &acptest.Transport{Agent: a, BeforeConnect: func(_ context.Context, n int) error {
				if !tc.killed && n == 2 && armed.CompareAndSwap(true, false) {
					return errors.New("the agent would not start")
				}
				return nil
			}}
			evs := newRestartEvents()
			c, err := acp.Connect(ctx, tr, &acp.ClientOptions{Restart: &acp.RestartPolicy{MinBackoff: time.Millisecond, OnRestart: evs.on}})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			defer c.Close()
			var ss []*acp.Session
			for range 2 {
				s, err := c.NewSession(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				ss = append(ss, s)
			}
			// Sessions are restored in id order: the victim is restored last.
			victim.Store(max(ss[0].ID(), ss[1].ID()))
			if _, err := run(ctx, ss[0], "hello"); err != nil {
				t.Fatal(err)
			}
			armed.Store(true)
			if _, err := run(ctx, ss[0], "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
				t.Fatalf("the crashed turn: %v", err)
			}
			restored := evs.wait(t, ctx, acp.RestartRestored)
			if restored.Attempt != 2 || restored.Connection != 3 || len(restored.Restored) != 2 {
				t.Errorf("RestartRestored %+v, want attempt 2 on connection 3 with both sessions", restored)
			}
			if _, err := run(ctx, ss[0], "after"); err != nil {
				t.Fatal(err)
			}
			evs.mu.Lock()
			var phases []acp.RestartPhase
			for _, ev := range evs.evs {
				phases = append(phases, ev.Phase)
			}
			evs.mu.Unlock()
			if want := []acp.RestartPhase{acp.RestartDied, acp.RestartFailed, acp.RestartWaiting, acp.RestartRestored}; !slicesEqual(phases, want) {
				t.Errorf("restart phases %v, want %v", phases, want)
			}
			for _, s := range ss {
				s.Release() // its feed ends after its last event
				var sf acp.SessionFold
				var restarts []acp.SessionRestart
				for ev := range s.Events(ctx, 0) {
					sf.Apply(ev)
					if ev.Kind == acp.EventRestarted {
						restarts = append(restarts, *ev.Restart)
					}
				}
				st := s.State()
				if st.Restarts != 1 {
					t.Errorf("session %s: Restarts = %d, want 1", s.ID(), st.Restarts)
				}
				if len(restarts) != 1 || restarts[0] != (acp.SessionRestart{Connection: 3, Method: schema.MethodSessionResume}) {
					t.Errorf("session %s: EventRestarted %+v, want one, on connection 3 by session/resume", s.ID(), restarts)
				}
				if d := cmp.Diff(st, sf.State()); d != "" {
					t.Errorf("session %s: the folded feed differs from State (-state +fold):\n%s", s.ID(), d)
				}
			}
		})
	}
}

// A session lost on an attempt that then failed is still reported lost
// when the restart is over: RestartRestored lists every session the
// restart lost, not only those of its last attempt (on which the lost
// session, released, is no longer tried).
func TestRestartReportsSessionsLostOnFailedAttempt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		a      *acptest.Agent
		armed  atomic.Bool
		victim atomic.Value
	)
	a = acptest.New(&acptest.Options{OnPrompt: crashScript, Restore: acptest.RestoreLoadOnly, OnLoadSession: func(s *acptest.Session) {
		if s.SessionID() == victim.Load() && armed.CompareAndSwap(true, false) {
			a.Kill()
		}
	}})
	evs := newRestartEvents()
	c, _ := restartClient(t, a, &acp.RestartPolicy{MinBackoff: time.Millisecond, OnRestart: evs.on}, nil)
	gone, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gone.ID() > kept.ID() {
		t.Fatalf("sessions %s and %s: the refused one must be restored first", gone.ID(), kept.ID())
	}
	// The agent forgets gone (its load is refused), and dies loading kept
	// the first time.
	if _, err := c.DeleteSession(ctx, &schema.DeleteSessionRequest{SessionID: gone.ID()}); err != nil {
		t.Fatal(err)
	}
	victim.Store(kept.ID())
	armed.Store(true)
	if _, err := run(ctx, kept, "crash"); !errors.Is(err, acp.ErrAgentRestarted) {
		t.Fatal(err)
	}
	ev := evs.wait(t, ctx, acp.RestartRestored)
	if ev.Attempt != 2 || !slicesEqual(ev.Restored, []string{kept.ID()}) || !slicesEqual(ev.Lost, []string{gone.ID()}) {
		t.Errorf("RestartRestored: attempt %d, restored %v, lost %v; want attempt 2, restored [%s], lost [%s]", ev.Attempt, ev.Restored, ev.Lost, kept.ID(), gone.ID())
	}
	if !errors.Is(gone.Err(), acp.ErrSessionLost) {
		t.Errorf("the refused session: %v", gone.Err())
	}
}
