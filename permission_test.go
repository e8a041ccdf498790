package acp

import (
	"context"
	"github.com/acpclient/acp/schema"
	"testing"
)

func TestPermissionPolicies(t *testing.T) {
	all := []string{"allow_once", "allow_always", "reject_once", "reject_always"}
	for _, tc := range []struct {
		name   string
		h      PermissionHandler
		offers []string
		want   string
	}{
		{"default rejects", nil, all, "opt-reject_once"},
		{"default never allows", nil, []string{"allow_once", "allow_always"}, "cancelled"},
		{"reject falls back to always", RejectAll, []string{"allow_once", "reject_always"}, "opt-reject_always"},
		{"allow all", AllowAll, all, "opt-allow_once"},
		{"allow all falls back", AllowAll, []string{"allow_always", "reject_once"}, "opt-allow_always"},
		{"cancel", CancelAll, all, "cancelled"},
		{"ask", func(_ context.Context, r *PermissionRequest) (schema.PermissionOutcome, error) {
			return SelectedOutcome(r.Options[2].OptionID), nil
		}, all, "opt-reject_once"},
		{"invalid option", func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
			return SelectedOutcome("made-up"), nil
		}, all, `error:acp: the permission handler chose "made-up", which is not an offered option`},
		{"panic", func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) { panic("oops") }, all, "error:acp: handler for session/request_permission panicked: oops"},
		{"error", func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
			return schema.PermissionOutcome{}, &schema.Error{Code: -32050, Message: "no ui"}
		}, all, "error:no ui"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := connectRaw(t, &ClientOptions{Permission: tc.h}, nil)
			newSessionRaw(t, c, a)
			if got := outcomeOf(t, askPermission(t, a, 1, permParams("t", tc.offers...))); got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
		})
	}
}

// The handler sees the tool call as folded, including the request's own
// toolCall fields — but the question the request words in its title stays
// on the request, and the tool keeps its title.
func TestPermissionSeesFoldedToolCall(t *testing.T) {
	got := make(chan ToolCallState, 1)
	question := make(chan string, 1)
	opts := &ClientOptions{Permission: func(_ context.Context, r *PermissionRequest) (schema.PermissionOutcome, error) {
		got <- r.ToolCall
		question <- r.Title
		return SelectedOutcome("opt-allow_once"), nil
	}}
	_, a, _, turn, p := startTurn(t, opts)
	a.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "kind": "edit",
		"content": []any{map[string]any{"type": "diff", "path": "/w/a", "newText": "x"}}})
	params := permParams("t1", "allow_once")
	params["toolCall"] = map[string]any{"toolCallId": "t1", "title": "Allow editing /w/a?"}
	askPermission(t, a, 9, params)
	tc := <-got
	if tc.Title != "Edit" || tc.Kind != schema.ToolKindEdit || len(tc.Content) != 1 {
		t.Errorf("handler saw %+v", tc)
	}
	if q := <-question; q != "Allow editing /w/a?" {
		t.Errorf("request title %q", q)
	}
	if st := turn.State(); st.ToolCalls[0].Title != "Edit" {
		t.Errorf("the question replaced the tool's title in State: %q", st.ToolCalls[0].Title)
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
}

// 20 requests pending at once all get their own answers; OneAtATime
// serializes them per session; RememberAlways answers later requests of
// the same kind without asking.
func TestPermissionConcurrencyAndRemember(t *testing.T) {
	t.Run("concurrent", func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{}, 20)
		opts := &ClientOptions{Permission: func(_ context.Context, r *PermissionRequest) (schema.PermissionOutcome, error) {
			started <- struct{}{}
			<-release
			return SelectedOutcome(r.Options[0].OptionID), nil
		}}
		c, a := connectRaw(t, opts, nil)
		newSessionRaw(t, c, a)
		for i := range 20 {
			a.send(map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "session/request_permission", "params": map[string]any{
				"sessionId": "s1", "toolCall": map[string]any{"toolCallId": "t"},
				"options": []any{map[string]any{"optionId": "o" + jsonInt(i), "name": "x", "kind": "allow_once"}}}})
		}
		for range 20 {
			<-started // all 20 handlers run at once
		}
		close(release)
		seen := map[string]string{}
		for range 20 {
			m := a.next()
			seen[string(m.ID)] = outcomeOf(t, m)
		}
		for i := range 20 {
			if seen[jsonInt(100+i)] != "o"+jsonInt(i) {
				t.Errorf("request %d answered %q", 100+i, seen[jsonInt(100+i)])
			}
		}
	})
	t.Run("one at a time", func(t *testing.T) {
		inside := make(chan struct{}, 3)
		release := make(chan struct{})
		opts := &ClientOptions{Permission: OneAtATime(func(context.Context, *PermissionRequest) (schema.PermissionOutcome, error) {
			inside <- struct{}{}
			<-release
			return SelectedOutcome("opt-allow_once"), nil
		})}
		c, a := connectRaw(t, opts, nil)
		newSessionRaw(t, c, a)
		for i := range 3 {
			a.send(map[string]any{"jsonrpc": "2.0", "id": i, "method": "session/request_permission", "params": permParams("t", "allow_once")})
		}
		for range 3 {
			<-inside
			select {
			case <-inside:
				t.Fatal("two dialogs at once")
			case release <- struct{}{}:
			}
			a.next()
		}
	})
	t.Run("remember always", func(t *testing.T) {
		asked := 0
		opts := &ClientOptions{Permission: RememberAlways(func(_ context.Context, r *PermissionRequest) (schema.PermissionOutcome, error) {
			asked++
			if r.ToolCall.Kind == schema.ToolKindEdit {
				return SelectedOutcome("opt-allow_always"), nil
			}
			return SelectedOutcome("opt-reject_once"), nil
		})}
		c, a := connectRaw(t, opts, nil)
		newSessionRaw(t, c, a)
		edit := func(id int) map[string]any {
			p := permParams("e"+jsonInt(id), "allow_once", "allow_always", "reject_once", "reject_always")
			p["toolCall"] = map[string]any{"toolCallId": "e" + jsonInt(id), "kind": "edit"}
			return p
		}
		if got := outcomeOf(t, askPermission(t, a, 1, edit(1))); got != "opt-allow_always" {
			t.Fatalf("first edit: %q", got)
		}
		if got := outcomeOf(t, askPermission(t, a, 2, edit(2))); got != "opt-allow_always" {
			t.Errorf("second edit: %q", got)
		}
		p := permParams("x", "allow_once", "reject_once")
		p["toolCall"] = map[string]any{"toolCallId": "x", "kind": "execute"}
		if got := outcomeOf(t, askPermission(t, a, 3, p)); got != "opt-reject_once" {
			t.Errorf("execute: %q", got)
		}
		if asked != 2 {
			t.Errorf("asked %d times, want 2 (the second edit is remembered)", asked)
		}
	})
}
