package acp_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
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

// A step of a scripted turn: what the agent sends.
type propStep struct {
	kind string // say, sayid, think, tool, update
	id   string
	text string
}

// propScript is seed's script for turn n: a few random steps over ids
// that repeat within the turn, so that messages continue and tool calls
// are updated.
func propScript(seed uint64, n int) []propStep {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	var steps []propStep
	for i := range 3 + r.IntN(10) {
		st := propStep{text: fmt.Sprintf("t%d.%d ", n, i)}
		switch r.IntN(5) {
		case 0:
			st.kind = "say"
		case 1:
			st.kind, st.id = "sayid", fmt.Sprintf("m%d.%d", n, r.IntN(2))
		case 2:
			st.kind = "think"
		case 3:
			st.kind, st.id = "tool", fmt.Sprintf("tc%d.%d", n, i)
		default:
			st.kind, st.id = "update", fmt.Sprintf("tc%d.%d", n, r.IntN(i+1))
		}
		steps = append(steps, st)
	}
	return steps
}

func (st propStep) send(t *acptest.Turn) {
	switch st.kind {
	case "say":
		t.Say(st.text)
	case "sayid":
		t.SayID(st.id, st.text)
	case "think":
		t.Think(st.text)
	case "tool":
		t.ToolCall(acptest.ToolCallSpec{ID: st.id, Title: st.text, Status: schema.ToolCallStatusInProgress})
	case "update":
		t.UpdateToolCall(acptest.ToolCallSpec{ID: st.id, Status: schema.ToolCallStatusCompleted})
	}
}

// propAgent runs seed's scripts; turn killTurn dies before its step
// killStep (once), and stops there instead when truncate is set (the
// reference run: the interrupted turn without its unsent tail).
func propAgent(seed uint64, killTurn, killStep int, truncate bool, restore acptest.Restore, replayKill int) *acptest.Agent {
	var killed atomic.Bool
	var loads atomic.Int64
	return acptest.New(&acptest.Options{Restore: restore,
		OnReplay: func(s *acptest.Session, i int) {
			if i == 0 {
				loads.Add(1)
			}
			if replayKill >= 0 && i == replayKill && loads.Load() == 1 {
				s.Crash() // the first restore's replay dies too
			}
		},
		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
			n, _ := strconv.Atoi(strings.TrimPrefix(t.PromptText(), "turn "))
			for i, st := range propScript(seed, n) {
				if n == killTurn && i == killStep {
					if truncate {
						return schema.StopReasonEndTurn, nil
					}
					if !killed.Swap(true) {
						t.Crash()
					}
				}
				st.send(t)
			}
			if n == killTurn && !truncate && !killed.Swap(true) {
				t.Crash() // after the last step, before the answer
			}
			return schema.StopReasonEndTurn, nil
		}})
}

// propRun prompts turns 0..turns-1 on a new session and returns it; the
// interrupted turn's error must be ErrAgentRestarted.
func propRun(t *testing.T, a *acptest.Agent, turns, killTurn int, supervised bool) *acp.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var c *acp.Client
	if supervised {
		p := &acp.RestartPolicy{MaxRestarts: 10}
		acp.SetRestartClock(p, func(time.Duration) <-chan time.Time {
			ch := make(chan time.Time, 1)
			ch <- time.Time{}
			return ch
		}, time.Now)
		c, _ = restartClient(t, a, p, nil)
	} else {
		var err error
		if c, err = acp.Connect(ctx, &acptest.Transport{Agent: a}, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); a.Close() })
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := range turns {
		_, err := run(ctx, s, fmt.Sprint("turn ", n))
		switch {
		case supervised && n == killTurn:
			if !errors.Is(err, acp.ErrAgentRestarted) {
				t.Fatalf("turn %d: %v, want ErrAgentRestarted", n, err)
			}
		case err != nil:
			t.Fatalf("turn %d: %v", n, err)
		}
	}
	if supervised {
		waitRestored(t, ctx, s) // the kill may have been in the last turn
	}
	return s
}

// What is compared: the conversation, turn by turn, and History.
type propState struct {
	History acp.TurnState
	Turns   []acp.TurnState
}

func propContent(s *acp.Session) propState {
	strip := func(st acp.TurnState) acp.TurnState {
		return acp.TurnState{Messages: st.Messages, Thoughts: st.Thoughts, UserMessages: st.UserMessages, ToolCalls: st.ToolCalls}
	}
	out := propState{History: strip(s.State().History)}
	for _, turn := range s.Turns() {
		out.Turns = append(out.Turns, strip(turn.State()))
	}
	return out
}

// The agent is killed at a random point of a random script (mid-turn,
// after a turn's last update, or, in a third of the runs, again in the
// middle of the first restore's replay), with supervision on: the final
// state equals that of an uninterrupted run whose interrupted turn ends
// where the agent died, with nothing folded twice (History stays empty:
// the reconciler dropped the whole replay), and the session's events
// still fold to its state.
func TestRestartPropertyKillAnywhere(t *testing.T) {
	var mu sync.Mutex
	restarts := 0
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			turns := 2 + r.IntN(4)
			killTurn := r.IntN(turns)
			killStep := r.IntN(len(propScript(seed, killTurn)) + 1)
			restore := []acptest.Restore{acptest.RestoreBoth, acptest.RestoreLoadOnly}[r.IntN(2)]
			replayKill := -1
			if restore == acptest.RestoreLoadOnly && r.IntN(3) == 0 {
				replayKill = r.IntN(8)
			}
			got := propRun(t, propAgent(seed, killTurn, killStep, false, restore, replayKill), turns, killTurn, true)
			want := propRun(t, propAgent(seed, killTurn, killStep, true, restore, -1), turns, killTurn, false)
			if diff := cmp.Diff(propContent(want), propContent(got)); diff != "" {
				t.Errorf("kill in turn %d before step %d (%v, replay kill %d): state differs from the uninterrupted run (-want +got):\n%s",
					killTurn, killStep, restore, replayKill, diff)
			}
			st := got.State()
			if st.Restarts < 1 {
				t.Errorf("Restarts = %d", st.Restarts)
			}
			mu.Lock()
			restarts += st.Restarts
			mu.Unlock()
			done, cancel := context.WithCancel(context.Background())
			cancel()
			var sf acp.SessionFold
			for ev := range got.Events(done, 0) {
				sf.Apply(ev)
			}
			if diff := cmp.Diff(st.WithoutLog(), sf.State().WithoutLog()); diff != "" {
				t.Errorf("the session's events fold differently from its state (-state +fold):\n%s", diff)
			}
		})
	}
	if restarts == 0 {
		t.Error("no restart")
	}
}
