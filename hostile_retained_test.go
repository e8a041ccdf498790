package acp

import "testing"

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
