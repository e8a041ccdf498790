// A runnable example of an editor's NES loop against a scripted agent.
package nes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/nes"
)

// An editor opens an NES session, tells the agent about a document, asks
// for a suggestion at the cursor and accepts it.
func Example() {
	agent := acptest.New(&acptest.Options{
		Capabilities: map[string]any{"nes": map[string]any{
			"events": map[string]any{"document": map[string]any{"didOpen": map[string]any{}}},
		}},
		Methods: map[string]acptest.MethodFunc{
			"nes/start": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return map[string]any{"sessionId": "n1"}, nil
			},
			"nes/suggest": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
				return json.RawMessage(`{"suggestions":[{"kind":"edit","id":"s1","uri":"file:///w/a.go",
					"edits":[{"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":3}},"newText":"var"}]}]}`), nil
			},
		},
	})
	defer agent.Close()
	fromAgent, toAgent := agent.Pipe()
	ctx := context.Background()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	s, err := nes.Start(ctx, c, &nes.StartRequest{WorkspaceURI: "file:///w"})
	if err != nil {
		log.Fatal(err)
	}
	const uri = "file:///w/a.go"
	if err := s.DidOpen(ctx, &nes.DidOpenDocumentNotification{URI: uri, LanguageID: "go", Version: 1, Text: "package a\n\nlet x = 1\n"}); err != nil {
		log.Fatal(err)
	}
	res, err := s.Suggest(ctx, &nes.SuggestRequest{URI: uri, Version: 1, Position: nes.Position{Line: 2}})
	if err != nil {
		log.Fatal(err)
	}
	for _, sg := range res.Suggestions {
		if e, ok := sg.(*nes.EditSuggestion); ok {
			fmt.Printf("%s: line %d: %q\n", e.ID, e.Edits[0].Range.Start.Line, e.Edits[0].NewText)
		}
	}
	if err := s.Accept(ctx, res.Suggestions[0].SuggestionID()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("positions in", nes.PositionEncoding(c))
	// Output:
	// s1: line 2: "var"
	// positions in utf-16
}
