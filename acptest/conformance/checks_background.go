// This file holds the v2 background-work check run on every frame: what
// state_update.background lists (announced entities, well-formed
// entries, a list on every snapshot once reported) and that an item is
// removed only after its end was reported.

package conformance

import (
	"encoding/json"
	"fmt"
)

// bgItem is one background entry: its type and the id it references.
type bgItem struct{ kind, id string }

// backgroundCheck follows one connection's v2 background work.
type backgroundCheck struct {
	r         *runner
	terminals map[string]bool // announced by a terminal_update
	exited    map[string]bool // a terminal_update reported exitStatus
	tools     map[string]bool // announced by a tool call update
	final     map[string]bool // a tool call reached a final status
	listed    map[string]map[bgItem]bool
	reports   map[string]bool // the session reported a background list
	items     int
	removed   int
}

func newBackgroundCheck(r *runner) *backgroundCheck {
	return &backgroundCheck{r: r, terminals: map[string]bool{}, exited: map[string]bool{}, tools: map[string]bool{},
		final: map[string]bool{}, listed: map[string]map[bgItem]bool{}, reports: map[string]bool{}}
}

var finalToolStatuses = map[string]bool{"completed": true, "failed": true, "cancelled": true}

func (b *backgroundCheck) update(u update, f *frame) {
	switch u.Kind {
	case "terminal_update":
		if u.TerminalID != nil {
			b.terminals[*u.TerminalID] = true
			if len(u.ExitStatus) > 0 && string(u.ExitStatus) != "null" {
				b.exited[*u.TerminalID] = true
			}
		}
	case "tool_call", "tool_call_update":
		if u.ToolCallID != nil {
			b.tools[*u.ToolCallID] = true
			if u.Status != nil && finalToolStatuses[*u.Status] {
				b.final[*u.ToolCallID] = true
			}
		}
	case "state_update":
		b.snapshot(u, f)
	}
}

// snapshot grades one state_update's background list.
func (b *backgroundCheck) snapshot(u update, f *frame) {
	sid := u.SessionID
	if len(u.Background) == 0 || string(u.Background) == "null" {
		if b.reports[sid] {
			b.r.fail("v2.background", "a state_update for session "+sid+" without the background list it reported before", f)
		}
		return
	}
	var raw []json.RawMessage
	if json.Unmarshal(u.Background, &raw) != nil {
		b.r.fail("v2.background", "state_update.background is not an array", f)
		return
	}
	b.reports[sid] = true
	now := map[bgItem]bool{}
	for _, entry := range raw {
		var e struct {
			Type       *string `json:"type"`
			TerminalID *string `json:"terminalId"`
			ToolCallID *string `json:"toolCallId"`
			SessionID  *string `json:"sessionId"`
		}
		if json.Unmarshal(entry, &e) != nil || e.Type == nil {
			b.r.fail("v2.background", "a background entry is not an object with a string type", f)
			continue
		}
		b.items++
		id := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		switch *e.Type {
		case "terminal":
			t := id(e.TerminalID)
			switch {
			case t == "":
				b.r.fail("v2.background", "a terminal background entry without a terminalId", f)
			case !b.terminals[t]:
				b.r.fail("v2.background", "the background lists terminal "+t+", which no terminal_update announced before", f)
			case b.exited[t]:
				b.r.fail("v2.background", "the background lists terminal "+t+" after its exitStatus was reported", f)
			default:
				now[bgItem{"terminal", t}] = true
			}
		case "tool_call":
			t := id(e.ToolCallID)
			switch {
			case t == "":
				b.r.fail("v2.background", "a tool_call background entry without a toolCallId", f)
			case !b.tools[t]:
				b.r.fail("v2.background", "the background lists tool call "+t+", which no tool call update announced before", f)
			default:
				now[bgItem{"tool_call", t}] = true
			}
		case "subagent":
			if id(e.SessionID) == "" {
				b.r.fail("v2.background", "a subagent background entry without a sessionId", f)
			}
		}
		// Other types are custom ("_…") or future work: still running,
		// nothing to check.
	}
	for it := range b.listed[sid] {
		if now[it] {
			continue
		}
		switch {
		case it.kind == "terminal" && !b.exited[it.id]:
			b.r.fail("v2.background-ends", "a snapshot removes terminal "+it.id+" before a terminal_update reported its exitStatus", f)
		case it.kind == "tool_call" && !b.final[it.id]:
			b.r.fail("v2.background-ends", "a snapshot removes tool call "+it.id+" before it reached a final status", f)
		default:
			b.removed++
		}
	}
	b.listed[sid] = now
}

// done grades what the connection showed.
func (b *backgroundCheck) done() {
	if b.items > 0 {
		b.r.pass("v2.background", fmt.Sprintf("%d background entries were well-formed and announced first", b.items))
	}
	if b.removed > 0 {
		b.r.pass("v2.background-ends", fmt.Sprintf("%d background items were removed after their end was reported", b.removed))
	}
}
