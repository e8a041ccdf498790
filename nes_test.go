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
	c, done := connect(&acptest.Options{
		Capabilities: caps,
		Methods: map[string]acptest.MethodFunc{
			"nes/start": func(_ context.Context, _ *acptest.Conn, p json.RawMessage) (any, error) {
				record("nes/start", p)
				return map[string]any{"sessionId": "nes-1"}, nil
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
	t.Cleanup(done)
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func TestNESSuggestAcceptReject(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, map[string]any{})
	start, err := c.StartNES(ctx, &acp.StartNESRequest{WorkspaceURI: "file:///w"})
	if err != nil || start.SessionID != "nes-1" {
		t.Fatalf("StartNES = %+v, %v", start, err)
	}
	res, err := c.SuggestNES(ctx, &acp.SuggestNESRequest{SessionID: "nes-1", URI: "file:///a.go", Version: 3, Position: acp.Position{Line: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Suggestions) != 3 {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
	edit, ok := res.Suggestions[0].(*acp.NESEditSuggestion)
	if !ok || edit.ID != "s1" || len(edit.Edits) != 1 || edit.Edits[0].NewText != "var" || edit.Edits[0].Range.End.Character != 3 || edit.CursorPosition != nil {
		t.Fatalf("edit = %+v", res.Suggestions[0])
	}
	if j, ok := res.Suggestions[1].(*acp.NESJumpSuggestion); !ok || j.Position.Line != 9 {
		t.Fatalf("jump = %+v", res.Suggestions[1])
	}
	if u, ok := res.Suggestions[2].(*acp.UnknownNESSuggestion); !ok || u.Kind != "teleport" {
		t.Fatalf("unknown = %+v", res.Suggestions[2])
	}
	if err := c.AcceptNES(ctx, "nes-1", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := c.RejectNES(ctx, "nes-1", "s2", acp.NESIgnored); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseNES(ctx, "nes-1"); err != nil {
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
	if pe := c.PositionEncoding(); pe != acp.PositionUTF16 {
		t.Fatalf("PositionEncoding = %q", pe)
	}
	if c.InitializeResponse().AgentCapabilities.PositionEncoding != acp.PositionUTF32 {
		t.Fatal("the agent's positionEncoding was not decoded")
	}
}

func TestNESNeedsCapability(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, nil)
	calls := []func() error{
		func() error { _, err := c.StartNES(ctx, nil); return err },
		func() error {
			_, err := c.SuggestNES(ctx, &acp.SuggestNESRequest{SessionID: "n", URI: "file:///a"})
			return err
		},
		func() error { return c.AcceptNES(ctx, "n", "s") },
		func() error { return c.RejectNES(ctx, "n", "s", "") },
		func() error { return c.CloseNES(ctx, "n") },
		func() error {
			return c.DidOpenDocument(ctx, &acp.DidOpenDocumentNotification{SessionID: "n", URI: "file:///a"})
		},
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

func TestDocumentEvents(t *testing.T) {
	ctx := context.Background()
	c, got := nesAgent(t, map[string]any{"didOpen": map[string]any{}, "didChange": map[string]any{"syncKind": "full"}, "didFocus": map[string]any{}})
	if err := c.DidOpenDocument(ctx, &acp.DidOpenDocumentNotification{SessionID: "n", URI: "file:///a.go", LanguageID: "go", Version: 1, Text: "package a\n"}); err != nil {
		t.Fatal(err)
	}
	incremental := &acp.DidChangeDocumentNotification{SessionID: "n", URI: "file:///a.go", Version: 2,
		ContentChanges: []acp.TextDocumentContentChangeEvent{{Range: &acp.Range{End: acp.Position{Character: 7}}, Text: "pkg"}}}
	if err := c.DidChangeDocument(ctx, incremental); err == nil || !strings.Contains(err.Error(), "full sync") {
		t.Fatalf("incremental change to a full-sync agent: %v", err)
	}
	if err := c.DidChangeDocument(ctx, &acp.DidChangeDocumentNotification{SessionID: "n", URI: "file:///a.go", Version: 2,
		ContentChanges: []acp.TextDocumentContentChangeEvent{{Text: "package b\n"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.DidFocusDocument(ctx, &acp.DidFocusDocumentNotification{SessionID: "n", URI: "file:///a.go", Version: 2}); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		c.DidSaveDocument(ctx, &acp.DidSaveDocumentNotification{SessionID: "n", URI: "file:///a.go"}),
		c.DidCloseDocument(ctx, &acp.DidCloseDocumentNotification{SessionID: "n", URI: "file:///a.go"}),
	} {
		if !errors.Is(err, acp.ErrNotSupported) {
			t.Errorf("an event the agent did not ask for: %v", err)
		}
	}
	// A notification is unanswered: a final request orders the check after
	// the agent has read everything before it.
	if _, err := c.StartNES(ctx, nil); err != nil {
		t.Fatal(err)
	}
	g := got()
	want := []string{
		`document/didOpen {"sessionId":"n","uri":"file:///a.go","languageId":"go","version":1,"text":"package a\n"}`,
		`document/didChange {"sessionId":"n","uri":"file:///a.go","version":2,"contentChanges":[{"text":"package b\n"}]}`,
		`document/didFocus {"sessionId":"n","uri":"file:///a.go","version":2,"position":{"line":0,"character":0},"visibleRange":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`,
		`nes/start {}`,
	}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agent got:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// Suggestions encode with their "kind" and decode back to themselves.
func TestNESSuggestionsRoundTrip(t *testing.T) {
	in := acp.SuggestNESResponse{Suggestions: []acp.NESSuggestion{
		&acp.NESEditSuggestion{ID: "a", URI: "file:///a", Edits: []acp.NESTextEdit{{NewText: "x"}}},
		&acp.NESJumpSuggestion{ID: "b", URI: "file:///a", Position: acp.Position{Line: 2}},
		&acp.NESRenameSuggestion{ID: "c", URI: "file:///a", NewName: "y"},
		&acp.NESSearchAndReplaceSuggestion{ID: "d", URI: "file:///a", Search: "s", Replace: "r", IsRegex: true},
		&acp.UnknownNESSuggestion{Kind: "teleport", Raw: json.RawMessage(`{"kind":"teleport","id":"e"}`)},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out acp.SuggestNESResponse
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
	}, &acp.ClientOptions{PositionEncodings: []acp.PositionEncodingKind{acp.PositionUTF8, acp.PositionUTF32}})
	if pe := c.PositionEncoding(); pe != acp.PositionUTF32 {
		t.Fatalf("PositionEncoding = %q, want utf-32", pe)
	}
	init := a.Received("initialize")
	if len(init) != 1 || !strings.Contains(string(init[0]), `"positionEncodings":["utf-8","utf-32"]`) {
		t.Errorf("initialize params %s do not advertise the encodings", init)
	}
}
