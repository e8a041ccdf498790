package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// Child sessions (--subagents, on by default): an agent that exposes the
// subagents it delegates to announces each with a subagent_update on the
// prompted session; the client keeps it as a session of its own, whose
// turns the agent starts. The command shows their events as they come,
// each with the child's sessionId and its parent's (text: lines start
// with "[child-id]"; --json: update events carry parentSessionId), and
// each child turn's end as a child_turn_end event holding that turn's
// state. Grandchildren are shown the same way.

// children follows the child sessions of one session, and theirs, while
// a prompted turn runs.
type children struct {
	o      *output
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	watched map[*acp.Session]bool
	roots   []*acp.Session // the sessions whose children are looked for
}

// watchChildren starts following the children of s that exist now and,
// at each poll, those announced since.
func (o *output) watchChildren(s *acp.Session) *children {
	ctx, cancel := context.WithCancel(context.Background())
	k := &children{o: o, ctx: ctx, cancel: cancel, watched: map[*acp.Session]bool{}, roots: []*acp.Session{s}}
	k.poll()
	return k
}

// poll starts a follower for each child not followed yet.
func (k *children) poll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := 0; i < len(k.roots); i++ {
		for child := range k.roots[i].Children() {
			if k.watched[child] {
				continue
			}
			k.watched[child] = true
			k.roots = append(k.roots, child)
			k.wg.Add(1)
			go k.follow(child)
		}
	}
}

// follow shows a child's turns as they start, until stop.
func (k *children) follow(child *acp.Session) {
	defer k.wg.Done()
	for ev := range child.Events(k.ctx, 0) {
		var turn *acp.Turn
		switch {
		case ev.Kind == acp.EventTurnStart && ev.Turn != nil:
			turn = ev.Turn
		case ev.Kind == acp.EventUpdate && ev.Turn == nil && ev.Origin == acp.OriginAgent:
			// Outside its turns: shown as it comes.
			k.o.event(child, nil, ev)
			if _, ok := ev.Update.(*schema.SubagentUpdate); ok {
				k.poll()
			}
			continue
		default:
			continue
		}
		for tev := range turn.Events(k.ctx, 0) {
			k.o.event(child, turn, tev)
			if _, ok := tev.Update.(*schema.SubagentUpdate); ok {
				k.poll()
			}
		}
		select {
		case <-turn.Done():
			k.o.childTurnEnd(child, turn)
		default: // still running at stop: its end is not shown
		}
	}
}

// stop shows what the children have done so far — every event already
// applied — and returns once it is out.
func (k *children) stop() {
	k.poll()
	k.cancel()
	k.wg.Wait()
}

// childTurnEnd prints the end of a child session's turn.
func (o *output) childTurnEnd(child *acp.Session, turn *acp.Turn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := turn.State()
	stop, err := turn.Wait()
	parent := ""
	if p := child.Parent(); p != nil {
		parent = p.ID()
	}
	if o.json {
		ev := map[string]any{"event": "child_turn_end", "sessionId": child.ID(), "parentSessionId": parent, "stopReason": stop, "state": st}
		if err != nil {
			ev["error"] = err.Error()
		}
		o.emit(ev)
		return
	}
	o.textf("info", "[%s] [%s]\n", cleanLine(child.ID()), cleanLine(orDash(string(stop))))
	o.last = ""
}

// subagentLine is what a subagent_update says, for a text line: ": title
// (state)".
func subagentLine(u *schema.SubagentUpdate) string {
	var parts []string
	if u.Title.Value != nil {
		parts = append(parts, cleanLine(*u.Title.Value))
	}
	if v := u.State.Value; v != nil {
		parts = append(parts, "("+cleanLine(v.String())+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, " ")
}

// messageRoute is "sender → recipient" of a message between sessions,
// each "?" when the message does not say.
func messageRoute(u *schema.SessionMessage) string {
	name := func(f schema.Field[string]) string {
		if f.Value == nil {
			return "?"
		}
		return cleanLine(*f.Value)
	}
	return fmt.Sprintf("%s → %s", name(u.SenderSessionID), name(u.RecipientSessionID))
}
