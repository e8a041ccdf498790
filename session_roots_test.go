package acp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// Additional directories are validated and cleaned like cwd: the agent is
// told, and the handlers confine to, "/", not a string that looks like a
// directory under /ws/a.
func TestAdditionalDirectoriesCleaned(t *testing.T) {
	init := map[string]any{
		"protocolVersion":   1,
		"agentCapabilities": map[string]any{"sessionCapabilities": map[string]any{"additionalDirectories": map[string]any{}}},
	}
	c, a := connectRaw(t, nil, init)
	ctx := context.Background()
	for _, bad := range []string{"rel/dir", "/ws/a\x00b", ""} {
		if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp", AdditionalDirectories: []string{bad}}); err == nil {
			t.Errorf("additional directory %q accepted", bad)
		}
	}
	dirs := []string{"/ws/a/../..", "/ws//b/./c/"}
	ch := make(chan *Session, 1)
	go func() {
		s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/tmp", AdditionalDirectories: dirs})
		if err != nil {
			t.Error(err)
		}
		ch <- s
	}()
	m := a.expect("session/new")
	var sent struct{ AdditionalDirectories []string }
	if err := json.Unmarshal(m.Params, &sent); err != nil {
		t.Fatal(err)
	}
	a.reply(m, map[string]any{"sessionId": "s1"})
	s := <-ch
	want := []string{"/", "/ws/b/c"}
	if diff := cmp.Diff(want, sent.AdditionalDirectories); diff != "" {
		t.Errorf("sent to the agent (-want +got):\n%s", diff)
	}
	if s != nil {
		if diff := cmp.Diff(append([]string{"/tmp"}, want...), s.roots); diff != "" {
			t.Errorf("roots the handlers get (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, s.State().AdditionalDirectories); diff != "" {
			t.Errorf("session state (-want +got):\n%s", diff)
		}
	}
	if dirs[0] != "/ws/a/../.." {
		t.Errorf("the caller's request was modified: %q", dirs)
	}
}
