package acp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// expectCall returns the client's next request or notification for method,
// skipping its answers to the agent's requests.
func expectCall(a *rawAgent, method string) rawMsg {
	a.t.Helper()
	for {
		m := a.next()
		if m.Method == method {
			return m
		}
		if m.Method != "" {
			a.t.Fatalf("client sent %q, want %q: %s", m.Method, method, m.line)
		}
	}
}

// sessionWithModes creates session s1 whose agent offers two modes and a
// select config option.
func sessionWithModes(t *testing.T, opts *ClientOptions) (*Client, *rawAgent, *Session) {
	t.Helper()
	c, a := connectRaw(t, opts, nil)
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}()
	a.reply(a.expect("session/new"), map[string]any{"sessionId": "s1",
		"modes": map[string]any{"currentModeId": "mode0", "availableModes": []any{
			map[string]any{"id": "mode0", "name": "Zero"}, map[string]any{"id": "mode1", "name": "One"}}},
		"configOptions": []any{map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": "x",
			"options": []any{map[string]any{"value": "x", "name": "X"}, map[string]any{"value": "y", "name": "Y"}}}}})
	s := <-ch
	if s == nil {
		t.FailNow()
	}
	return c, a, s
}

// The session's feed is its state: for random scripts of updates outside
// and inside turns, permission requests outside turns, SetMode and
// SetConfigOption, folding the session's events — read live, replayed, or
// replayed through a log window so small that the reader starts from an
// EventReleased — reproduces Session.State.
func TestSessionFeedReproducesState(t *testing.T) {
	restarts := 0
	defer func() {
		if restarts == 0 {
			t.Error("no script restarted the agent")
		}
	}()
	for seed := range 30 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 11))
			c, a, s := sessionWithModes(t, &ClientOptions{Subagents: true, Limits: Limits{SessionLog: 8, OutsideLog: 3}, Restart: &RestartPolicy{MaxRestarts: 100, after: noBackoff}})
			// Odd seeds restart an agent that offers session/load only:
			// its replay is reconciled with what the session holds.
			loadOnly := seed%2 == 1
			restartInit := defaultInit
			if loadOnly {
				restartInit = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}}
			}
			live := make(chan SessionState, 1)
			var endSeq uint64
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var liveFold SessionFold
			go func() {
				defer func() { endSeq = liveFold.Seq(); live <- liveFold.State() }()
				for ev := range s.Events(ctx, 0) {
					liveFold.Apply(ev)
					// A reader that fell behind the window may see the
					// end only in an EventReleased's state.
					if out := liveFold.st.Outside; len(out) > 0 && out[len(out)-1].Update.UpdateKind() == "end_of_script" {
						return
					}
				}
			}()
			var turn *Turn
			var prompt rawMsg
			for i := range 30 + r.IntN(40) {
				switch k := r.IntN(10); {
				case k == 0 && turn == nil:
					var err error
					if turn, err = s.Prompt(context.Background(), schema.Text("go")); err != nil {
						t.Fatal(err)
					}
					prompt = expectCall(a, "session/prompt")
				case k == 1 && turn != nil:
					a.reply(prompt, map[string]any{"stopReason": "end_turn"})
					turn.Wait()
					turn = nil
				case k == 2:
					done := make(chan error, 1)
					mode := fmt.Sprint("mode", r.IntN(2))
					go func() { done <- s.SetMode(context.Background(), mode) }()
					a.reply(expectCall(a, "session/set_mode"), map[string]any{})
					if err := <-done; err != nil {
						t.Fatal(err)
					}
				case k == 3:
					done := make(chan error, 1)
					value := []string{"x", "y"}[r.IntN(2)]
					go func() { _, err := s.SetConfigOption(context.Background(), "model", value); done <- err }()
					a.reply(expectCall(a, "session/set_config_option"), map[string]any{"configOptions": []any{
						map[string]any{"id": "model", "name": "Model", "type": "select", "currentValue": value,
							"options": []any{map[string]any{"value": "x", "name": "X"}, map[string]any{"value": "y", "name": "Y"}}}}})
					if err := <-done; err != nil {
						t.Fatal(err)
					}
				case k == 4 && turn == nil:
					params := permParams(fmt.Sprint("tc", r.IntN(5)), "allow_once", "reject_once")
					params["toolCall"].(map[string]any)["title"] = "Allow?"
					askPermission(t, a, 100+i, params)
				case k == 5:
					a.update("s1", map[string]any{"sessionUpdate": "session_info_update", "title": fmt.Sprint("title ", i)})
				case k == 6:
					a.update("s1", map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{map[string]any{"name": fmt.Sprint("c", i), "description": "d"}}})
				case k == 8 && r.IntN(2) == 0:
					// A child's own traffic (dropped, and reported, while
					// the child is not announced).
					a.update(fmt.Sprint("k", r.IntN(3)), randomStep(r))
				case k == 9 && r.IntN(2) == 0:
					state := []string{"running", "idle", "requires_action"}[r.IntN(3)]
					a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": fmt.Sprint("k", r.IntN(3)),
						"state": map[string]any{"state": state, "stopReason": "end_turn"}})
				case k == 7 && r.IntN(3) == 0:
					// Between updates on the wire: the reader may have
					// applied some of those sent before, not all.
					s.ReleaseHistory()
				case k == 7 && r.IntN(2) == 0:
					// The agent dies: the turn running fails, the session
					// is restored (resumed, or loaded with a replay of
					// random updates, some of them known) and goes on.
					a = a.restart(restartInit)
					if loadOnly {
						m := expectCall(a, "session/load")
						for range r.IntN(6) {
							// Not a mode or config change: the client
							// would set its choice again, a call this
							// script does not expect (TestRestartReappliesChoices).
							if u := randomStep(r); !strings.Contains(fmt.Sprint(u), "current_mode_update") && !strings.Contains(fmt.Sprint(u), "config_option_update") {
								a.update("s1", u)
							}
						}
						a.reply(m, map[string]any{})
					} else {
						a.reply(expectCall(a, "session/resume"), map[string]any{})
					}
					// The restart is over (and its EventRestarted logged)
					// only once the attempt has succeeded, after the
					// answer: wait for it, so that the script's last
					// update is the feed's last event.
					waitReady(t, c)
					if turn != nil {
						if _, err := turn.Wait(); !errors.Is(err, ErrAgentRestarted) {
							t.Fatalf("the interrupted turn: %v", err)
						}
						turn = nil
					}
				default:
					a.update("s1", randomStep(r))
				}
			}
			if turn != nil {
				a.reply(prompt, map[string]any{"stopReason": "end_turn"})
				turn.Wait()
			}
			a.update("s1", map[string]any{"sessionUpdate": "end_of_script"})
			got := <-live
			want := s.State()
			restarts += want.Restarts
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("live session events fold differently from State (-State +fold):\n%s", diff)
			}
			var replay SessionFold
			released := false
			var seq uint64
			for ev := range s.Events(ctx, 0) {
				if ev.Kind == EventReleased {
					released = true
				}
				replay.Apply(ev)
				if seq = ev.Seq; seq >= endSeq {
					break
				}
			}
			if !released {
				t.Error("a replay from 0 through an 8-event window did not start with EventReleased")
			}
			if diff := cmp.Diff(want, replay.State()); diff != "" {
				t.Errorf("replayed session events fold differently from State (-State +fold):\n%s", diff)
			}
			if seq != replay.Seq() {
				t.Errorf("Seq %d after the last event %d", replay.Seq(), seq)
			}
			// The children's feeds are their states too, and so are
			// their turns' (the agent's).
			done, cancel := context.WithCancel(ctx)
			cancel()
			for child := range s.Children() {
				var cf SessionFold
				for ev := range child.Events(done, 0) {
					cf.Apply(ev)
				}
				if diff := cmp.Diff(child.State(), cf.State()); diff != "" {
					t.Errorf("child %s: its events fold differently from State (-State +fold):\n%s", child.ID(), diff)
				}
				for _, ct := range child.Turns() {
					var evs []Event
					for ev := range ct.Events(done, 0) {
						evs = append(evs, ev)
					}
					if diff := cmp.Diff(ct.State(), foldEvents(t, evs)); diff != "" {
						t.Errorf("child %s: a turn's events fold differently from State (-State +fold):\n%s", child.ID(), diff)
					}
				}
			}
		})
	}
}

// SetMode and SetConfigOption are session events of origin local; a load
// replay's updates are marked Replay; turns start in the session's feed.
func TestSessionFeedKinds(t *testing.T) {
	c, a, s := sessionWithModes(t, nil)
	done := make(chan error, 1)
	go func() { done <- s.SetMode(context.Background(), "mode1") }()
	a.reply(a.expect("session/set_mode"), map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.update("s1", chunk("in the turn"))                                                             // not a session event
	a.update("s1", map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": "mode0"}) // is
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	var kinds []string
	for ev := range s.Events(context.Background(), 0) {
		k := string(ev.Kind)
		if ev.Origin != "" {
			k += "/" + string(ev.Origin)
		}
		if ev.Turn != nil {
			k += " in turn"
		}
		kinds = append(kinds, k)
		if ev.Seq == 5 {
			break
		}
	}
	want := []string{"setup", "setup", "update/local", "turn_start in turn", "update/agent in turn"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("session events (-want +got):\n%s", diff)
	}
	_ = c
}
