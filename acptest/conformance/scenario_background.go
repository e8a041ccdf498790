// This file holds the v2 background scenario: a prompt meant to start
// background work (Options.Prompts.Background), then the first item the
// agent lists is followed to its removal, cancelled with terminal/cancel
// or tool_call/cancel when it advertises capabilities.cancel; then the
// prompt again, and the session closed while its work is listed.

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

func (p *Prompts) background() string {
	return strings.ReplaceAll(p.Background, "{workspace}", p.workspace)
}

// backgroundWindow is how long the scenario waits for an item to be
// listed, and then for it to be listed gone: a quarter of the scenario's
// timeout, at most 5 s.
func (r *runner) backgroundWindow() time.Duration {
	return min(5*time.Second, r.opts.ScenarioTimeout/4)
}

func (r *runner) background(s *scene) {
	const rule = "v2.background-ends"
	prompt := r.opts.Prompts.background()
	if prompt == "" {
		why := "no background prompt was given (Options.Prompts.Background; acp check --background-prompt): no scenario can ask an arbitrary agent for background work"
		r.notExercised(rule, why)
		r.notExercised("v2.background", "no scenario saw background work; "+why)
		return
	}
	c, conn, err := s.client(false)
	if err != nil {
		r.fail(rule, "connecting: "+s.why(err))
		return
	}
	defer c.Close()
	sess, err := s.newSession(c)
	if err != nil {
		r.fail(rule, "session/new: "+s.why(err))
		return
	}
	id := sess.ID()
	s.prompt(conn, sess, "prompt.text", "a prompt asking for background work", schema.Text(prompt))
	window := r.backgroundWindow()
	var item bgItem
	wctx, cancel := context.WithTimeout(s.ctx, window)
	i, err := conn.log.waitFor(wctx, 0, func(f *frame) bool {
		u, ok := updateOf(f)
		if !ok || u.SessionID != id || u.Kind != "state_update" {
			return false
		}
		items, _ := backgroundItems(u.Background)
		if len(items) == 0 {
			return false
		}
		item = items[0]
		return true
	})
	cancel()
	if err != nil {
		why := fmt.Sprintf("the agent listed no terminal or tool call as background work within %v of the background prompt's end", window)
		r.notExercised(rule, why)
		r.notExercised("v2.background", why)
		return
	}
	how := ""
	if advertisesCancel(conn.log.all()[:i+1], id, item) {
		method, key := "terminal/cancel", "terminalId"
		if item.kind == "tool_call" {
			method, key = "tool_call/cancel", "toolCallId"
		}
		if err := c.Call(s.ctx, method, map[string]any{"sessionId": id, key: item.id}, nil); err != nil {
			_, resp := requestSpan(conn.log, method)
			r.fail(rule, fmt.Sprintf("%s of %s %s, which advertises capabilities.cancel: %s", method, item.kind, item.id, s.why(err)), resp)
			return
		}
		how = method
	}
	wctx, cancel = context.WithTimeout(s.ctx, window)
	defer cancel()
	_, err = conn.log.waitFor(wctx, i+1, func(f *frame) bool {
		u, ok := updateOf(f)
		if !ok || u.SessionID != id || u.Kind != "state_update" {
			return false
		}
		items, listed := backgroundItems(u.Background)
		return listed && !slices.Contains(items, item)
	})
	switch {
	case err == nil && how != "":
		r.pass(rule, fmt.Sprintf("listed %s %s, which %s stopped; a later snapshot listed it gone", item.kind, item.id, how))
	case err == nil:
		r.pass(rule, fmt.Sprintf("listed %s %s, and a later snapshot listed it gone", item.kind, item.id))
	case how != "":
		r.fail(rule, fmt.Sprintf("%s of %s %s was accepted, but no snapshot listed it gone within %v", how, item.kind, item.id, window), lastFrom(conn.log))
	default:
		r.notExercised(rule, fmt.Sprintf("%s %s was still listed %v after it was first, and advertises no capabilities.cancel the grader could use", item.kind, item.id, window))
	}
	r.closeWithBackground(s, conn, sess, prompt)
}

// closeWithBackground starts the background work again and closes the
// session while it is listed: closing stops a session's background work,
// and nothing may follow the close response for the session (v2.close,
// graded on every frame), which the grader watches for a while
// (LateWindow, at most a tenth of the scenario's timeout).
func (r *runner) closeWithBackground(s *scene, conn *tap, sess *acp.Session, prompt string) {
	id := sess.ID()
	from := len(conn.log.all())
	s.prompt(conn, sess, "prompt.text", "the background prompt again", schema.Text(prompt))
	wctx, cancel := context.WithTimeout(s.ctx, r.backgroundWindow())
	_, err := conn.log.waitFor(wctx, from, func(f *frame) bool {
		u, ok := updateOf(f)
		if !ok || u.SessionID != id || u.Kind != "state_update" {
			return false
		}
		items, _ := backgroundItems(u.Background)
		return len(items) > 0
	})
	cancel()
	if err != nil {
		return // not listed again: nothing to close it with
	}
	if !r.closeSession(s, conn, sess) {
		return
	}
	after := len(conn.log.all()) // the close response is in by now
	wctx, cancel = context.WithTimeout(s.ctx, min(LateWindow, r.opts.ScenarioTimeout/10))
	defer cancel()
	if _, err := conn.log.waitFor(wctx, after, func(f *frame) bool {
		u, ok := updateOf(f)
		return ok && u.SessionID == id
	}); err != nil && s.ctx.Err() == nil {
		r.pass("v2.close", "nothing came for a session closed with background work running")
	}
}

// backgroundItems returns the terminals and tool calls of a background
// list, and whether it is a list at all (omitted and null are "not
// reported", not "nothing runs").
func backgroundItems(raw json.RawMessage) ([]bgItem, bool) {
	var entries []struct {
		Type       string `json:"type"`
		TerminalID string `json:"terminalId"`
		ToolCallID string `json:"toolCallId"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &entries) != nil {
		return nil, false
	}
	var items []bgItem
	for _, e := range entries {
		switch {
		case e.Type == "terminal" && e.TerminalID != "":
			items = append(items, bgItem{"terminal", e.TerminalID})
		case e.Type == "tool_call" && e.ToolCallID != "":
			items = append(items, bgItem{"tool_call", e.ToolCallID})
		}
	}
	return items, true
}

// advertisesCancel reports whether the last terminal_update or tool call
// update for item among fs advertises capabilities.cancel.
func advertisesCancel(fs []frame, session string, item bgItem) bool {
	can := false
	for i := range fs {
		u, ok := updateOf(&fs[i])
		if !ok || u.SessionID != session {
			continue
		}
		switch {
		case item.kind == "terminal" && u.Kind == "terminal_update" && u.TerminalID != nil && *u.TerminalID == item.id:
		case item.kind == "tool_call" && strings.HasPrefix(u.Kind, "tool_call") && u.ToolCallID != nil && *u.ToolCallID == item.id:
		default:
			continue
		}
		var p struct {
			Update struct {
				Capabilities *struct {
					Cancel json.RawMessage `json:"cancel"`
				} `json:"capabilities"`
			} `json:"update"`
		}
		if json.Unmarshal(fs[i].msg.Params, &p) == nil && p.Update.Capabilities != nil {
			// Omitted capabilities keep the last (upserts); null or a
			// missing cancel do not advertise it.
			can = len(p.Update.Capabilities.Cancel) > 0 && string(p.Update.Capabilities.Cancel) != "null"
		}
	}
	return can
}
