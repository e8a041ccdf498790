package main

// One line for a cancelled tool call: the client marks it cancelled when
// the turn is cancelled (an OriginLocal update), and the agent then
// usually reports it failed ("Cancelled.") or cancelled itself, which
// says nothing more.

import (
	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// cancelRepeat says whether a tool call update restates the end of a tool
// call already shown as cancelled in this turn: the agent's failed or
// cancelled after the client's own cancelled. It records the client's.
// o.mu is held.
func (o *output) cancelRepeat(turn *acp.Turn, ev acp.Event, id string, status schema.ToolCallStatus) bool {
	if o.cancelTurn != turn {
		o.cancelTurn, o.cancelShown = turn, nil
	}
	if ev.Origin == acp.OriginLocal && status == schema.ToolCallStatusCancelled {
		if o.cancelShown == nil {
			o.cancelShown = map[string]bool{}
		}
		o.cancelShown[id] = true
		return false
	}
	return o.cancelShown[id] && (status == schema.ToolCallStatusFailed || status == schema.ToolCallStatusCancelled)
}
