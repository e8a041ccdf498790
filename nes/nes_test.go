// Tests of the NES methods and document sync against a scripted agent:
// what is sent, the capability gates, the full-sync rule, the position
// encoding and the suggestion union's JSON.
package nes_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/nes"
	"github.com/acpclient/acp/schema"
)

// nesAgent advertises nes with the given document events (nil: no nes at
// all) and records every NES message it gets.
func nesAgent(t *testing.T, document map[string]any) (*acp.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	record := func(method string, params json.RawMessage) {
		mu.Lock()
		got = append(got, method+" "+string(params))
		mu.Unlock()
	}
	caps := map[string]any{"loadSession": true, "positionEncoding": "utf-32"}
	if document != nil {
		caps["nes"] = map[string]any{"events": map[string]any{"document": document}, "context": map[string]any{"recentFiles": map[string]any{}}}
	}
	c, _ := acptest.Connect(t, &acptest.Options{
		Capabilities: caps,
		Methods: map[string]acptest.MethodFunc{
			"nes/start": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				record("nes/start", p)
				return map[string]any{"sessionId": "nes-1", "_meta": map[string]any{"m": 1}}, nil
			},
			"nes/suggest": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				record("nes/suggest", p)
				return json.RawMessage(`{"suggestions":[
					{"kind":"edit","id":"s1","uri":"file:///a.go","edits":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}},"newText":"var"}],"cursorPosition":"bad"},
					{"kind":"jump","id":"s2","uri":"file:///a.go","position":{"line":9,"character":2}},
					{"kind":"teleport","id":"s3"}]}`), nil
			},
			"nes/close": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				record("nes/close", p)
				return map[string]any{}, nil
			},
		},
		OnNotification: func(_ *acptest.Conn, method string, params json.RawMessage) { record(method, params) },
	}, nil)
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func TestSuggestAcceptReject(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, map[string]any{})
	s, err := nes.Start(ctx, c, &nes.StartRequest{WorkspaceURI: "file:///w"})
	if err != nil || s.ID() != "nes-1" || string(s.Meta()) != `{"m":1}` {
		t.Fatalf("Start = %+v, %v", s, err)
	}
	// The session's id is sent, whatever the request says.
	res, err := s.Suggest(ctx, &nes.SuggestRequest{SessionID: "other", URI: "file:///a.go", Version: 3, Position: nes.Position{Line: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Suggestions) != 3 {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
	edit, ok := res.Suggestions[0].(*nes.EditSuggestion)
	if !ok || edit.ID != "s1" || len(edit.Edits) != 1 || edit.Edits[0].NewText != "var" || edit.Edits[0].Range.End.Character != 3 || edit.CursorPosition != nil {
		t.Fatalf("edit = %+v", res.Suggestions[0])
	}
	if j, ok := res.Suggestions[1].(*nes.JumpSuggestion); !ok || j.Position.Line != 9 {
		t.Fatalf("jump = %+v", res.Suggestions[1])
	}
	if u, ok := res.Suggestions[2].(*nes.UnknownSuggestion); !ok || u.Kind != "teleport" {
		t.Fatalf("unknown = %+v", res.Suggestions[2])
	}
	if err := s.Accept(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, "s2", nes.ReasonIgnored); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`nes/start {"workspaceUri":"file:///w"}`,
		`nes/suggest {"sessionId":"nes-1","uri":"file:///a.go","version":3,"position":{"line":1,"character":0},"triggerKind":"manual"}`,
		`nes/accept {"sessionId":"nes-1","id":"s1"}`,
		`nes/reject {"sessionId":"nes-1","id":"s2","reason":"ignored"}`,
		`nes/close {"sessionId":"nes-1"}`,
	}
	if g := got(); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agent got:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	// The agent chose utf-32, which the client never offered: positions
	// stay utf-16.
	if pe := nes.PositionEncoding(c); pe != schema.PositionUTF16 {
		t.Fatalf("PositionEncoding = %q", pe)
	}
	if c.InitializeResponse().AgentCapabilities.PositionEncoding != schema.PositionUTF32 {
		t.Fatal("the agent's positionEncoding was not decoded")
	}
}

func TestNeedsCapability(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, nil)
	if _, err := nes.Start(ctx, c, nil); !errors.Is(err, acp.ErrNotSupported) {
		t.Errorf("Start: %v, want ErrNotSupported", err)
	}
	// A session whose agent lost nes (say, restarted without it).
	s := nes.SessionFor(c, "n")
	calls := []func() error{
		func() error {
			_, err := s.Suggest(ctx, &nes.SuggestRequest{URI: "file:///a"})
			return err
		},
		func() error { return s.Accept(ctx, "s") },
		func() error { return s.Reject(ctx, "s", "") },
		func() error { return s.Close(ctx) },
		func() error { return s.DidOpen(ctx, &nes.DidOpenDocumentNotification{URI: "file:///a"}) },
	}
	for i, call := range calls {
		if err := call(); !errors.Is(err, acp.ErrNotSupported) {
			t.Errorf("call %d: %v, want ErrNotSupported", i, err)
		}
	}
	if g := got(); len(g) != 0 {
		t.Fatalf("sent %v", g)
	}
}

// The messages of the errors are those the methods had as Client methods
// of package acp.
func TestErrorMessages(t *testing.T) {
	ctx := context.Background()
	c, _ := nesAgent(t, nil)
	_, err := nes.Start(ctx, c, nil)
	if want := "acp: nes/start: not supported by the agent (the agent did not advertise nes)"; err == nil || err.Error() != want {
		t.Errorf("Start: %v, want %q", err, want)
	}
	c, _ = nesAgent(t, map[string]any{})
	_, err = nes.SessionFor(c, "n").Suggest(ctx, &nes.SuggestRequest{})
	if want := "acp: nes/suggest: a session id and a uri are required"; err == nil || err.Error() != want {
		t.Errorf("Suggest without a uri: %v, want %q", err, want)
	}
	err = nes.SessionFor(c, "n").DidSave(ctx, &nes.DidSaveDocumentNotification{URI: "file:///a"})
	if want := "acp: document/didSave: not supported by the agent (the agent did not advertise nes.events.document.didSave)"; err == nil || err.Error() != want {
		t.Errorf("DidSave: %v, want %q", err, want)
	}
}

func TestDocumentEvents(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, map[string]any{"didOpen": map[string]any{}, "didChange": map[string]any{"syncKind": "full"}, "didFocus": map[string]any{}})
	s, err := nes.Start(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := &nes.DidOpenDocumentNotification{URI: "file:///a.go", LanguageID: "go", Version: 1, Text: "package a\n"}
	if err := s.DidOpen(ctx, open); err != nil {
		t.Fatal(err)
	}
	if open.SessionID != "" {
		t.Error("DidOpen modified the caller's notification")
	}
	incremental := &nes.DidChangeDocumentNotification{URI: "file:///a.go", Version: 2,
		ContentChanges: []nes.TextDocumentContentChangeEvent{{Range: &nes.Range{End: nes.Position{Character: 7}}, Text: "pkg"}}}
	if err := s.DidChange(ctx, incremental); err == nil || !strings.Contains(err.Error(), "full sync") {
		t.Fatalf("incremental change to a full-sync agent: %v", err)
	}
	if err := s.DidChange(ctx, &nes.DidChangeDocumentNotification{URI: "file:///a.go", Version: 2,
		ContentChanges: []nes.TextDocumentContentChangeEvent{{Text: "package b\n"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DidFocus(ctx, &nes.DidFocusDocumentNotification{URI: "file:///a.go", Version: 2}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		s.DidSave(ctx, &nes.DidSaveDocumentNotification{URI: "file:///a.go"}),
		s.DidClose(ctx, &nes.DidCloseDocumentNotification{URI: "file:///a.go"}),
	} {
		if !errors.Is(err, acp.ErrNotSupported) {
			t.Errorf("an event the agent did not ask for: %v", err)
		}
	}
	if err := s.DidOpen(ctx, &nes.DidOpenDocumentNotification{}); err == nil || !strings.Contains(err.Error(), "uri are required") {
		t.Errorf("an event without a uri: %v", err)
	}
	// A notification is unanswered: a final request orders the check after
	// the agent has read everything before it.
	if _, err := nes.Start(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	g := got()
	want := []string{
		`nes/start {}`,
		`document/didOpen {"sessionId":"nes-1","uri":"file:///a.go","languageId":"go","version":1,"text":"package a\n"}`,
		`document/didChange {"sessionId":"nes-1","uri":"file:///a.go","version":2,"contentChanges":[{"text":"package b\n"}]}`,
		`document/didFocus {"sessionId":"nes-1","uri":"file:///a.go","version":2,"position":{"line":0,"character":0},"visibleRange":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`,
		`nes/start {}`,
	}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agent got:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// An incremental agent takes any number of changes, and a change list left
// nil is sent as [] (the schema requires contentChanges).
func TestDocumentChangeIncremental(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, map[string]any{"didChange": map[string]any{"syncKind": "incremental"}})
	s := nes.SessionFor(c, "n")
	if err := s.DidChange(ctx, &nes.DidChangeDocumentNotification{URI: "file:///a.go", Version: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := nes.Start(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	if g := got(); len(g) != 2 || g[0] != `document/didChange {"sessionId":"n","uri":"file:///a.go","version":3,"contentChanges":[]}` {
		t.Fatalf("agent got %q", g)
	}
}

// Suggestions encode with their "kind" and decode back to themselves.
func TestSuggestionsRoundTrip(t *testing.T) {
	in := nes.SuggestResponse{Suggestions: []nes.Suggestion{
		&nes.EditSuggestion{ID: "a", URI: "file:///a", Edits: []nes.TextEdit{{NewText: "x"}}},
		&nes.JumpSuggestion{ID: "b", URI: "file:///a", Position: nes.Position{Line: 2}},
		&nes.RenameSuggestion{ID: "c", URI: "file:///a", NewName: "y"},
		&nes.SearchAndReplaceSuggestion{ID: "d", URI: "file:///a", Search: "s", Replace: "r", IsRegex: true},
		&nes.UnknownSuggestion{Kind: "teleport", Raw: json.RawMessage(`{"kind":"teleport","id":"e"}`)},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out nes.SuggestResponse
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(out)
	if string(b) != string(b2) || len(out.Suggestions) != 5 || out.Suggestions[3].SuggestionID() != "d" {
		t.Fatalf("round trip:\n%s\n%s", b, b2)
	}
}

// A client that offers the agent's choice of position encoding advertises
// it in initialize and then uses it.
func TestPositionEncodingNegotiated(t *testing.T) {
	c, a := acptest.Connect(t, &acptest.Options{
		Capabilities: map[string]any{"positionEncoding": "utf-32", "nes": map[string]any{}},
	}, &acp.ClientOptions{PositionEncodings: []schema.PositionEncodingKind{schema.PositionUTF8, schema.PositionUTF32}})
	if pe := nes.PositionEncoding(c); pe != schema.PositionUTF32 {
		t.Fatalf("PositionEncoding = %q, want utf-32", pe)
	}
	init := a.Received("initialize")
	if len(init) != 1 || !strings.Contains(string(init[0]), `"positionEncodings":["utf-8","utf-32"]`) {
		t.Errorf("initialize params %s do not advertise the encodings", init)
	}
}
