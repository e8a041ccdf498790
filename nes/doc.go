// Package nes is next-edit suggestions (NES) and document sync over an
// [acp.Client]: the editor opens an NES session, keeps the agent informed
// of its documents, and asks for suggestions at the cursor.
//
// To start, connect as usual and open a session; it needs the agent's nes
// capability (schema.AgentCapabilities.NES), else acp.ErrNotSupported and
// nothing is sent:
//
//	c, err := acp.Connect(ctx, transport, &acp.ClientOptions{
//		PositionEncodings: []schema.PositionEncodingKind{schema.PositionUTF8}, // optional
//	})
//	s, err := nes.Start(ctx, c, &nes.StartRequest{WorkspaceURI: "file:///w"})
//	err = s.DidOpen(ctx, &nes.DidOpenDocumentNotification{URI: uri, LanguageID: "go", Version: 1, Text: text})
//	res, err := s.Suggest(ctx, &nes.SuggestRequest{URI: uri, Version: 1, Position: nes.Position{Line: 3}})
//	for _, sg := range res.Suggestions { ... } // *nes.EditSuggestion, *nes.JumpSuggestion, ...
//	err = s.Accept(ctx, res.Suggestions[0].SuggestionID())
//	err = s.Close(ctx)
//
// Positions count characters in [PositionEncoding](c): utf-16 unless the
// client offered the agent's choice. Document events are sent only when
// the agent asked for them (nes.events.document), and didChange follows
// the sync kind it asked for.
//
// To test code that uses this package, script the agent with acptest: give
// it the nes capability and answer nes/start and nes/suggest, e.g.
//
//	c, _ := acptest.Connect(t, &acptest.Options{
//		Capabilities: map[string]any{"nes": map[string]any{}},
//		Methods: map[string]acptest.MethodFunc{
//			"nes/start": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
//				return map[string]any{"sessionId": "n1"}, nil
//			},
//			"nes/suggest": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
//				return json.RawMessage(`{"suggestions":[...]}`), nil
//			},
//		},
//	}, nil)
//
// and read what the client sent with acptest.Options.OnNotification or
// Agent.Received. This package's own tests (nes_test.go, hostile_test.go)
// are examples of both.
//
// # What a suggestion must be to reach the caller
//
// Session.Suggest screens each suggestion on its own: one that does not
// decode, or that is for another document than the one asked about (the
// request's URI, compared byte for byte) and that SuggestRequest.AllowURI
// does not allow, is dropped and reported as an acp.Diagnostic
// (acp.DiagBadSuggestion, acp.DiagForeignSuggestion) through the client's
// OnDiagnostic and Logger; the rest are delivered. The agent controls every
// suggestion, and an editor that applied an edit to a file it never asked
// about would let it write anywhere.
//
// # Stability
//
// Everything here follows schema.unstable.json (in the 1.21.0 shapes, see
// internal/schemagen/frozen.json) and may change in any release, whatever
// the module's version says; each identifier's doc says so. The package is
// written only over the client's public API, so it needs nothing of acp
// that another package could not have.
package nes
