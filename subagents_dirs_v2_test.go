package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"slices"
	"testing"
)

// Rule (unstable v2 SubagentUpdate.additionalDirectories: "null clears the
// reported value. While unset, the child inherits its immediate parent's
// … `[]` reports no additional directories"): null and [] are kept apart,
// at the announcement (null: the child has the parent's directories; []:
// none) and in the parent's record (nil: unset; non-nil empty: none
// reported), and a null survives encoding.
func TestSubagentsV2NullVersusEmptyDirectories(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{ProtocolVersion: 2}, v2Init)
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/w", AdditionalDirectories: []string{"/w2"}})
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}()
	a.reply(a.expect("session/new"), map[string]any{"sessionId": "s1"})
	parent := <-ch
	if parent == nil {
		t.FailNow()
	}
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "A", "additionalDirectories": nil})
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "B", "additionalDirectories": []any{}})
	syncRaw(t, a, 900)
	if d := c.Session("A").State().AdditionalDirectories; !slices.Equal(d, []string{"/w2"}) {
		t.Errorf("A (announced with null) has directories %q, want the parent's", d)
	}
	if d := c.Session("B").State().AdditionalDirectories; len(d) != 0 {
		t.Errorf("B (announced with []) has directories %q, want none", d)
	}
	subs := parent.State().Subagents
	if subs[0].AdditionalDirectories != nil || subs[1].AdditionalDirectories == nil || len(subs[1].AdditionalDirectories) != 0 {
		t.Errorf("records: A %#v (want nil), B %#v (want empty, not nil)", subs[0].AdditionalDirectories, subs[1].AdditionalDirectories)
	}
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "A", "additionalDirectories": []any{}})
	// A malformed title reads as absent (lenient) and does not hide the null.
	a.update("s1", map[string]any{"sessionUpdate": "subagent_update", "sessionId": "B", "title": 5, "additionalDirectories": nil})
	syncRaw(t, a, 901)
	subs = parent.State().Subagents
	if subs[0].AdditionalDirectories == nil || subs[1].AdditionalDirectories != nil {
		t.Errorf("after patches: A %#v (want empty), B %#v (want nil)", subs[0].AdditionalDirectories, subs[1].AdditionalDirectories)
	}
	b, err := json.Marshal(schema.SubagentUpdate{SessionID: "A", ClearAdditionalDirectories: true})
	if err != nil || string(b) != `{"sessionUpdate":"subagent_update","sessionId":"A","additionalDirectories":null}` {
		t.Errorf("marshal: %s, %v", b, err)
	}
	b, _ = json.Marshal(schema.SubagentUpdate{SessionID: "A", AdditionalDirectories: []string{}})
	if string(b) != `{"sessionUpdate":"subagent_update","sessionId":"A","additionalDirectories":[]}` {
		t.Errorf("marshal []: %s", b)
	}
}
