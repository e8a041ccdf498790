package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// manageAgent connects a client to an acptest agent advertising caps (the
// agentCapabilities object) that answers the session archive, status and
// title methods and auth/status.
func manageAgent(t *testing.T, caps map[string]any, copts *acp.ClientOptions, opts *acptest.Options) (*acp.Client, *acptest.Agent) {
	t.Helper()
	if opts == nil {
		opts = &acptest.Options{}
	}
	opts.Capabilities = caps
	ok := func(context.Context, *acptest.Conn, json.RawMessage) (any, error) { return map[string]any{}, nil }
	opts.Methods = map[string]acptest.MethodFunc{
		"session/archive":   ok,
		"session/unarchive": ok,
		"session/status": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
			return map[string]any{"status": "_evicting"}, nil
		},
		"session/set_title": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
			var r struct{ Title string }
			json.Unmarshal(p, &r)
			return map[string]any{"title": strings.TrimSpace(r.Title)}, nil
		},
		"auth/status": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
			return json.RawMessage(`{"state":"authenticated","accounts":[{"label":"Pro","active":true,"email":"a@b"},{"bad":1}]}`), nil
		},
	}
	a := acptest.New(opts)
	from, to := a.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: from, Writer: to}, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); a.Close() })
	return c, a
}

// Each call needs its capability: without it the call fails with
// ErrNotSupported naming the capability, and nothing is sent.
func TestSessionManageNeedsCapabilities(t *testing.T) {
	ctx := context.Background()
	c, a := manageAgent(t, map[string]any{"sessionCapabilities": map[string]any{"list": map[string]any{}}}, nil, nil)
	for name, call := range map[string]func() error{
		"sessionCapabilities.archive": func() error {
			_, err := c.ArchiveSession(ctx, &schema.ArchiveSessionRequest{SessionID: "s"})
			return err
		},
		"sessionCapabilities.archive ": func() error {
			_, err := c.UnarchiveSession(ctx, &schema.UnarchiveSessionRequest{SessionID: "s"})
			return err
		},
		"sessionCapabilities.status": func() error {
			_, err := c.SessionStatus(ctx, &schema.SessionStatusRequest{SessionID: "s"})
			return err
		},
		"sessionCapabilities.title": func() error {
			_, err := c.SetSessionTitle(ctx, &schema.SetSessionTitleRequest{SessionID: "s", Title: "T"})
			return err
		},
		"auth.status": func() error {
			_, err := c.AuthStatus(ctx)
			return err
		},
		"sessionCapabilities.archive  (list filter)": func() error {
			for _, err := range c.ListSessions(ctx, &schema.ListSessionsRequest{Archived: schema.ArchiveOnly}) {
				return err
			}
			return nil
		},
	} {
		err := call()
		if !errors.Is(err, acp.ErrNotSupported) || !strings.Contains(err.Error(), strings.Fields(name)[0]) {
			t.Errorf("%s: %v, want ErrNotSupported naming it", name, err)
		}
	}
	for _, m := range []string{"session/archive", "session/unarchive", "session/status", "session/set_title", "auth/status", "session/list"} {
		if got := a.Received(m); len(got) != 0 {
			t.Errorf("%s was sent: %s", m, got)
		}
	}
}

func TestArchiveUnarchiveSession(t *testing.T) {
	ctx := context.Background()
	c, a := manageAgent(t, map[string]any{"sessionCapabilities": map[string]any{"archive": map[string]any{}, "list": map[string]any{}}}, nil, nil)
	if _, err := c.ArchiveSession(ctx, &schema.ArchiveSessionRequest{SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UnarchiveSession(ctx, &schema.UnarchiveSessionRequest{SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ArchiveSession(ctx, &schema.ArchiveSessionRequest{}); err == nil {
		t.Error("archiving without a session id was sent")
	}
	if got := a.Received("session/archive"); len(got) != 1 || string(got[0]) != `{"sessionId":"s1"}` {
		t.Errorf("session/archive params %s", got)
	}
	if got := a.Received("session/unarchive"); len(got) != 1 || string(got[0]) != `{"sessionId":"s1"}` {
		t.Errorf("session/unarchive params %s", got)
	}
	for _, err := range c.ListSessions(ctx, &schema.ListSessionsRequest{Archived: schema.ArchiveInclude}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Received("session/list"); len(got) != 1 || !strings.Contains(string(got[0]), `"archived":"include"`) {
		t.Errorf("session/list params %s", got)
	}
}

// An unknown status is kept and counts as saved.
func TestSessionStatusCall(t *testing.T) {
	c, _ := manageAgent(t, map[string]any{"sessionCapabilities": map[string]any{"status": map[string]any{}}}, nil, nil)
	res, err := c.SessionStatus(context.Background(), &schema.SessionStatusRequest{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "_evicting" || res.Status.IsOpen() || !schema.SessionOpen.IsOpen() {
		t.Errorf("status %q (open %v)", res.Status, res.Status.IsOpen())
	}
}

// The stored (normalized) title becomes the open session's Title, with a
// local event on its feed.
func TestSetSessionTitle(t *testing.T) {
	ctx := context.Background()
	c, a := manageAgent(t, map[string]any{"sessionCapabilities": map[string]any{"title": map[string]any{}}}, nil, nil)
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SetSessionTitle(ctx, &schema.SetSessionTitleRequest{SessionID: s.ID(), Title: "  Fix the build  "})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "Fix the build" || s.State().Title != "Fix the build" {
		t.Errorf("title %q, state title %q", res.Title, s.State().Title)
	}
	if got := a.Received("session/set_title"); len(got) != 1 || !strings.Contains(string(got[0]), `"title":"  Fix the build  "`) {
		t.Errorf("params %s", got)
	}
	s.Release()
	var sf acp.SessionFold
	local := false
	for ev := range s.Events(ctx, 0) {
		sf.Apply(ev)
		local = local || ev.Origin == acp.OriginLocal
	}
	if !local || sf.State().Title != "Fix the build" {
		t.Errorf("feed: local event %v, folded title %q", local, sf.State().Title)
	}
}

// auth/status answers and auth/status_update notifications (also as
// _auth/status_update in the same shape) keep the latest status; notified
// ones reach OnAuthStatus in order, and the extension form still reaches
// ExtNotification; a malformed auth/status_update is reported and changes
// nothing. The extension in the shape codex-acp 2.6 and claude-agent-acp
// 0.101 really send ({"authStatus":{kind,label,detail}}, recorded in
// testdata/transcripts/e2e-*) is theirs: ExtNotification only, no
// diagnostic.
func TestAuthStatus(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []schema.AuthState
	var ext []string
	var diags []acp.Diagnostic
	got := make(chan struct{}, 8)
	copts := &acp.ClientOptions{
		OnAuthStatus: func(st schema.AuthStatus) {
			mu.Lock()
			seen = append(seen, st.State)
			mu.Unlock()
			got <- struct{}{}
		},
		ExtNotification: func(method string, _ json.RawMessage) {
			mu.Lock()
			ext = append(ext, method)
			mu.Unlock()
			got <- struct{}{}
		},
		OnDiagnostic: func(d acp.Diagnostic) {
			mu.Lock()
			diags = append(diags, d)
			mu.Unlock()
			got <- struct{}{}
		},
	}
	c, _ := manageAgent(t, map[string]any{"auth": map[string]any{"status": map[string]any{}}}, copts, &acptest.Options{
		OnNewSession: func(s *acptest.Session) {
			s.Notify("_auth/status_update", map[string]any{"authStatus": map[string]any{"kind": "gateway", "label": "Custom model gateway", "detail": "mock"}})
			s.Notify("_auth/status_update", map[string]any{"state": "unauthenticated"})
			s.Notify("auth/status_update", map[string]any{"accounts": []any{}}) // no state: malformed
			s.Notify("auth/status_update", map[string]any{"state": "not_required"})
		},
	})
	if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for range 5 { // two statuses, two extension notifications, one diagnostic
		<-got
	}
	mu.Lock()
	if len(seen) != 2 || seen[0] != schema.AuthUnauthenticated || seen[1] != schema.AuthNotRequired {
		t.Errorf("OnAuthStatus saw %q", seen)
	}
	if len(ext) != 2 || ext[0] != "_auth/status_update" || ext[1] != "_auth/status_update" {
		t.Errorf("ExtNotification saw %q", ext)
	}
	if len(diags) != 1 || diags[0].Kind != "bad_notification" || !strings.Contains(diags[0].Message, "auth/status_update") {
		t.Errorf("diagnostics %+v", diags)
	}
	mu.Unlock()
	st, err := c.AuthStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != schema.AuthAuthenticated || len(st.Accounts) != 1 || st.Accounts[0].Label != "Pro" || *st.Accounts[0].Email != "a@b" {
		t.Errorf("auth/status = %+v", st)
	}
}

// The system prompt goes out on new, load and resume only when the agent
// advertises it, override only with mode.override, and only as non-empty
// text.
func TestSystemPromptGating(t *testing.T) {
	ctx := context.Background()
	text := []schema.ContentBlock{schema.Text("Answer in French.")}
	appendSP := &schema.SystemPrompt{Mode: schema.SystemPromptAppend, Content: text}
	overrideSP := &schema.SystemPrompt{Mode: schema.SystemPromptOverride, Content: text}

	c, a := manageAgent(t, map[string]any{"loadSession": true}, nil, nil)
	if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), SystemPrompt: appendSP}); !errors.Is(err, acp.ErrNotSupported) ||
		!strings.Contains(err.Error(), "sessionCapabilities.systemPrompt") {
		t.Errorf("without the capability: %v", err)
	}
	if _, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "x", Cwd: t.TempDir(), SystemPrompt: appendSP}); !errors.Is(err, acp.ErrNotSupported) {
		t.Errorf("load without the capability: %v", err)
	}
	if n := len(a.Received("session/new")) + len(a.Received("session/load")); n != 0 {
		t.Errorf("%d requests sent without the capability", n)
	}

	caps := map[string]any{"loadSession": true, "sessionCapabilities": map[string]any{"systemPrompt": map[string]any{}, "resume": map[string]any{}}}
	c, a = manageAgent(t, caps, nil, nil)
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), SystemPrompt: appendSP})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Received("session/new"); len(got) != 1 || !strings.Contains(string(got[0]), `"systemPrompt":{"mode":"append","content":[{"type":"text","text":"Answer in French."}]}`) {
		t.Errorf("session/new params %s", got)
	}
	if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), SystemPrompt: overrideSP}); !errors.Is(err, acp.ErrNotSupported) ||
		!strings.Contains(err.Error(), "mode.override") {
		t.Errorf("override without mode.override: %v", err)
	}
	for _, bad := range []*schema.SystemPrompt{
		{Mode: schema.SystemPromptAppend},
		{Mode: schema.SystemPromptAppend, Content: []schema.ContentBlock{&schema.ImageContent{Data: "AA==", MimeType: "image/png"}}},
		{Mode: "prepend", Content: text},
	} {
		if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), SystemPrompt: bad}); err == nil {
			t.Errorf("system prompt %+v was sent", bad)
		}
	}
	if n := len(a.Received("session/new")); n != 1 {
		t.Errorf("%d session/new sent; want only the valid one", n)
	}
	s.Close(ctx)
	if _, err := c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: s.ID(), Cwd: t.TempDir(), SystemPrompt: appendSP}); err != nil {
		t.Fatal(err)
	}
	if got := a.Received("session/resume"); len(got) != 1 || !strings.Contains(string(got[0]), `"systemPrompt":{"mode":"append"`) {
		t.Errorf("session/resume params %s", got)
	}

	caps["sessionCapabilities"].(map[string]any)["systemPrompt"] = map[string]any{"mode": map[string]any{"override": map[string]any{}}}
	c, a = manageAgent(t, caps, nil, nil)
	if _, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir(), SystemPrompt: overrideSP}); err != nil {
		t.Fatalf("override with mode.override: %v", err)
	}
	if _, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "h", Cwd: t.TempDir(), SystemPrompt: overrideSP}); err != nil && errors.Is(err, acp.ErrNotSupported) {
		t.Fatalf("load with override: %v", err)
	}
	if got := a.Received("session/load"); len(got) != 1 || !strings.Contains(string(got[0]), `"mode":"override"`) {
		t.Errorf("session/load params %s", got)
	}
}
