package acp

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Limits.MaxTurnBytes bounds what a turn retains, not what the agent sent:
// a flood of the densest updates — tiny ones that each make the client
// create a tool call, a message or a list of plan entries — keeps at most
// about three times the limit of heap (the turn folds up to twice it while
// the agent winds down after the cancel). Counting wire bytes kept 27
// times the limit for tool_call_update with a new toolCallId each.
func TestMaxTurnBytesCountsRetainedHeap(t *testing.T) {
	const limit = 2 << 20
	for _, k := range densestKinds {
		switch k.name {
		case "message_new_id", "tool_call_new_id", "tool_call_update_new_id", "plan":
		default:
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			grown := floodRetained(t, k, limit, false)
			t.Logf("retained %.2f× the limit", float64(grown)/limit)
			if grown > 3*limit {
				t.Errorf("one turn of %s retained %d bytes, %.1f× Limits.MaxTurnBytes (%d); want at most 3×", k.name, grown, float64(grown)/limit, limit)
			}
		})
	}
}

// The same holds for what arrives outside turns, which shares one budget
// per session: past it nothing grows History or Outside.
func TestMaxTurnBytesOutsideCountsRetainedHeap(t *testing.T) {
	const limit = 2 << 20
	for _, k := range densestKinds {
		switch k.name {
		case "message_new_id", "tool_call_update_new_id":
		default:
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			grown := floodRetained(t, k, limit, true)
			t.Logf("retained %.2f× the limit", float64(grown)/limit)
			if grown > 3*limit {
				t.Errorf("updates outside turns of %s retained %d bytes, %.1f× Limits.MaxTurnBytes (%d); want at most 3×", k.name, grown, float64(grown)/limit, limit)
			}
		})
	}
}

// Ended turns keep their state until released; a session's ended turns
// keep at most Limits.MaxEndedTurnBytes (twice MaxTurnBytes by default):
// past it the oldest are released, each with an EventTurnReleased in the
// session's feed, and the feed still folds to State. Four turns flooded
// with new tool call ids kept 108 times the limit before.
func TestMaxEndedTurnBytes(t *testing.T) {
	const limit, turns = 1 << 20, 4
	var diags limitDiags
	c, s, _ := startPipeAgentOpts(t, &ClientOptions{Limits: Limits{MaxTurnBytes: limit}, CancelGrace: time.Hour, OnDiagnostic: diags.on})
	k := densestKinds[slices.IndexFunc(densestKinds, func(k densestKind) bool { return k.name == "tool_call_update_new_id" })]
	before := heapInuse()
	var all []*Turn
	var buf []byte
	for range turns {
		turn, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		for i, sent := 0, 0; sent < 3*limit; i++ {
			buf = k.line(buf, i)
			c.conn.Load().wire.Dispatch(buf)
			sent += len(buf)
		}
		c.conn.Load().wire.Dispatch(promptResponseLine(turn))
		if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonCancelled {
			t.Fatalf("Wait: %v, %v; want cancelled (over the budget)", stop, err)
		}
		all = append(all, turn)
	}
	grown := int64(heapInuse()) - int64(before)
	t.Logf("%d turns retained %.2f× Limits.MaxTurnBytes", turns, float64(grown)/limit)
	if grown > 3*limit {
		t.Errorf("%d flooded turns retained %d bytes, %.1f× Limits.MaxTurnBytes (%d); want at most 3× (MaxEndedTurnBytes is 2×)", turns, grown, float64(grown)/limit, limit)
	}
	kept := s.Turns()
	if len(kept) == 0 || kept[len(kept)-1] != all[turns-1] || len(kept) == turns {
		t.Errorf("Session.Turns holds %d of %d turns; want the oldest released, the last kept", len(kept), turns)
	}
	if st := all[turns-1].State(); len(st.ToolCalls) == 0 {
		t.Error("the turn that ended last lost its state")
	}
	if st := all[0].State(); len(st.ToolCalls) != 0 || st.StopReason != schema.StopReasonCancelled {
		t.Errorf("the first turn kept %d tool calls, stop reason %q; want none, its outcome kept", len(st.ToolCalls), st.StopReason)
	}
	released := map[*Turn]bool{}
	s.Release() // so that Events stops after the last one
	var sf SessionFold
	for ev := range s.Events(context.Background(), 0) {
		sf.Apply(ev)
		if ev.Kind == EventTurnReleased {
			released[ev.Turn] = true
		}
	}
	for _, turn := range all {
		if released[turn] == slices.Contains(kept, turn) {
			t.Errorf("turn %p: in Session.Turns %v, EventTurnReleased %v", turn, slices.Contains(kept, turn), released[turn])
		}
	}
	if d := cmp.Diff(s.State(), sf.State(), rawCmp); d != "" {
		t.Errorf("the session's feed folds differently from State (-state +fold):\n%s", d)
	}
	c.Close()
	if diags.matching("Limits.MaxEndedTurnBytes") == 0 {
		t.Errorf("no diagnostic names Limits.MaxEndedTurnBytes: %q", diags.msgs)
	}
}
