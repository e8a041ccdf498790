// render.go holds what a turn's renderer shows of each update event, in
// text mode and as --json's update events.
package main

import (
	"fmt"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// render shows one update event for event. o.mu is held and o.rendering
// set: what it writes to stdout is deferred.
func (o *output) render(s *acp.Session, turn *acp.Turn, ev acp.Event) {
	if o.json {
		e := updateEvent{Event: "update", SessionID: s.ID(), Seq: ev.Seq, Update: ev.Update}
		if p := s.Parent(); p != nil {
			e.ParentSessionID = p.ID()
		}
		if ev.Origin != acp.OriginAgent {
			e.Origin = ev.Origin
		}
		b := o.live.begin()
		b, ok := appendUpdateEvent(b, &e)
		var err error
		if !ok {
			ev := e // only this copy escapes (to encoding/json), not e
			b, err = o.line.appendTo(b, &ev)
		}
		o.live.end(b)
		if err != nil {
			o.emit(map[string]any{"event": "error", "message": "encoding an event: " + err.Error()})
		}
		return
	}
	if ev.Origin == acp.OriginPermission {
		return // the dialog shows it
	}
	if s.Parent() == nil {
		// The main session's text, the bulk of a turn: no prefix, its
		// kinds are the plain ones.
		switch u := ev.Update.(type) {
		case *schema.AgentMessageChunk:
			o.textRun("agent", "", cleanText(blockText(u.Content)))
			return
		case *schema.AgentThoughtChunk:
			o.textRun("thought", "(thinking) ", cleanText(blockText(u.Content)))
			return
		}
	}
	// A child session's lines start with its id, and its text runs are
	// kinds of their own.
	who, kind := "", func(k string) string { return k }
	if s.Parent() != nil {
		who = "[" + cleanLine(s.ID()) + "] "
		kind = func(k string) string { return k + " " + s.ID() }
	}
	if o.infoUpdate(who, ev.Update) { // title, usage: agentline.go
		return
	}
	switch u := ev.Update.(type) {
	case *schema.AgentMessageChunk:
		o.textf(kind("agent"), "%s", prefixFirst(who, cleanText(blockText(u.Content)), o.last == kind("agent")))
	case *schema.AgentThoughtChunk:
		o.textf(kind("thought"), "%s", prefixFirst(who+"(thinking) ", cleanText(blockText(u.Content)), o.last == kind("thought")))
	case *schema.SubagentUpdate:
		o.textf("info", "%s[subagent] %s%s\n", who, cleanLine(u.SessionID), subagentLine(u))
		o.last = ""
	case *schema.SessionMessage:
		if len(u.Content) > 0 {
			var b strings.Builder
			for _, c := range u.Content {
				b.WriteString(blockText(c))
			}
			o.textf("info", "%s[message %s] %s\n", who, messageRoute(u), cleanText(b.String()))
			o.last = ""
		}
	case *schema.SessionMessageChunk:
		k := kind("message " + u.MessageID)
		o.textf(k, "%s", prefixFirst(who+"[message] ", cleanText(blockText(u.Content)), o.last == k))
	case *schema.ToolCall:
		exit := o.agentTerminal(turn, ev.ToolCall)
		o.textf("tool", "%s[tool] %s (%s) %s%s%s\n", who, cleanLine(u.Title), cleanLine(orDash(string(u.Kind))), cleanLine(orDash(string(u.Status))), failure(u.Status, u.Content), exit)
		o.last = ""
	case *schema.ToolCallUpdate:
		exit := o.agentTerminal(turn, ev.ToolCall)
		if u.Status == nil {
			if exit != "" && ev.ToolCall != nil {
				o.textf("tool", "%s[tool] %s: %s\n", who, cleanLine(ev.ToolCall.Title), strings.Trim(exit, " ()"))
				o.last = ""
			}
			return
		}
		if o.cancelRepeat(turn, ev, u.ToolCallID, *u.Status) { // cancelline.go
			return
		}
		content := u.Content
		if content == nil && ev.ToolCall != nil {
			content = ev.ToolCall.Content
		}
		o.textf("tool", "%s[tool] %s: %s%s%s\n", who, cleanLine(ev.ToolCall.Title), cleanLine(string(*u.Status)), failure(*u.Status, content), exit)
		o.last = ""
	case *schema.Plan:
		var b strings.Builder
		b.WriteString("[plan]\n")
		planEntries(&b, u.Entries)
		o.textf("plan", "%s", b.String())
		o.last = ""
	case *schema.PlanUpdate:
		o.textf("plan", "%s", planText(u.Plan))
		o.last = ""
	case *schema.PlanRemoved:
		o.textf("plan", "[plan %s removed]\n", cleanLine(u.PlanID))
		o.last = ""
	case *schema.CurrentModeUpdate:
		o.textf("info", "[mode] %s\n", cleanLine(u.CurrentModeID))
		o.last = ""
	}
}

// planEntries writes a checklist's entries, one per line.
func planEntries(b *strings.Builder, entries []schema.PlanEntry) {
	for _, e := range entries {
		mark := " "
		switch e.Status {
		case schema.PlanEntryStatusCompleted:
			mark = "x"
		case schema.PlanEntryStatusInProgress:
			mark = ">"
		}
		fmt.Fprintf(b, "  [%s] %s\n", mark, cleanLine(e.Content))
	}
}

// planText renders one plan of a plan_update, headed by its id: a
// checklist as the legacy plan is shown, markdown as its text (indented),
// a file by its URI.
func planText(p schema.PlanContent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[plan %s]", cleanLine(orDash(p.PlanID())))
	switch p := p.(type) {
	case *schema.PlanItems:
		b.WriteString("\n")
		planEntries(&b, p.Entries)
	case *schema.PlanMarkdown:
		if p.Path != nil {
			fmt.Fprintf(&b, " %s", cleanLine(*p.Path))
		}
		b.WriteString("\n")
		for _, l := range strings.Split(strings.TrimRight(cleanText(p.Content), "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	case *schema.PlanFile:
		fmt.Fprintf(&b, " %s\n", cleanLine(p.URI))
	case *schema.UnknownPlanContent:
		fmt.Fprintf(&b, " (%s)\n", cleanLine(p.Type))
	}
	return b.String()
}
