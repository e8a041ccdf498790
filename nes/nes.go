package nes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/wirejson"
	"github.com/acpclient/acp/schema"
)

// An NES session and its methods, written only over the client's public
// API (Client.Call, Client.Notify, Client.InitializeResponse,
// Client.ClientCapabilities, Client.ReportDiagnostic), so that this package
// needs nothing of acp that another package built over it could not have.

// Session is an NES session on a client: what [Start] opened. Its methods
// send the session's requests and notifications, each named by the
// session's id.
//
// A Session is safe for concurrent use. It holds only the client and the
// id, and each method is one call or notification on the client, which is
// itself safe for concurrent use; nothing is serialized between methods.
// Methods called from different goroutines therefore reach the agent in no
// particular order: send each document's events from one goroutine (the
// agent applies didChange versions as they arrive), and ask for a
// suggestion after the events it depends on have returned.
//
// Every method checks the agent's capability on the client's current
// connection (after a restart, the restarted agent's), and fails with
// acp.ErrNotSupported, sending nothing, when it is missing. Close does not
// stop the other methods: after it they are still sent, and the agent
// answers as it does for any session it does not know.
//
// Unstable: follows schema.unstable.json; may change.
type Session struct {
	c    *acp.Client
	id   string
	meta json.RawMessage
}

// Start opens an NES session (nes/start). A nil req is an empty one. It
// needs the agent's nes capability, else acp.ErrNotSupported and nothing is
// sent.
//
// Unstable: follows schema.unstable.json; may change.
func Start(ctx context.Context, c *acp.Client, req *StartRequest) (*Session, error) {
	if err := checkNES(c, schema.MethodNESStart); err != nil {
		return nil, err
	}
	if req == nil {
		req = &StartRequest{}
	}
	var res StartResponse
	if err := c.Call(ctx, schema.MethodNESStart, req, &res); err != nil {
		return nil, err
	}
	return &Session{c: c, id: res.SessionID, meta: res.Meta}, nil
}

// ID returns the session's id, as the agent chose it.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) ID() string { return s.id }

// Meta returns the _meta of the agent's nes/start answer (nil when it sent
// none). It must not be modified.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Meta() json.RawMessage { return s.meta }

// Suggest asks for suggestions at a position (nes/suggest); an empty
// TriggerKind is sent as manual. req.SessionID is ignored: the session's
// id is sent.
//
// Each suggestion is screened on its own, so one bad suggestion costs only
// itself: one that does not decode (a known kind with a missing or
// malformed field, or a value that is not an object) is dropped with an
// acp.DiagBadSuggestion diagnostic; one for a document other than req.URI
// is dropped with an acp.DiagForeignSuggestion unless req.AllowURI allows
// it. The diagnostics go where the client's own go
// (ClientOptions.OnDiagnostic and Logger) and are queued before Suggest
// returns. Kinds of suggestion this package does not know are kept as
// *UnknownSuggestion, screened by their top-level "uri" if they have one.
// Only an answer whose "suggestions" is missing or not an array fails the
// call.
//
// "The document asked about" is req.URI as an exact string: a uri that
// differs in any byte (case, percent-encoding, a trailing slash, "..") is
// another document. Normalizing would need the editor's own rules for its
// URIs, and any gap between those and a normalizer here would let a
// suggestion through for a file the editor resolves differently; with an
// exact match, every suggestion kept names the document in the very words
// the editor used for it.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Suggest(ctx context.Context, req *SuggestRequest) (*SuggestResponse, error) {
	if err := checkNES(s.c, schema.MethodNESSuggest); err != nil {
		return nil, err
	}
	if req == nil || s.id == "" || req.URI == "" {
		return nil, methodError(schema.MethodNESSuggest, errors.New("a session id and a uri are required"))
	}
	r := *req
	r.SessionID = s.id
	if r.TriggerKind == "" {
		r.TriggerKind = TriggerManual
	}
	var raw json.RawMessage
	if err := s.c.Call(ctx, schema.MethodNESSuggest, &r, &raw); err != nil {
		return nil, err
	}
	res, err := screenSuggestions(s.c, raw, r.URI, r.AllowURI)
	if err != nil {
		return nil, methodError(schema.MethodNESSuggest, fmt.Errorf("decoding the result: %w", err))
	}
	return res, nil
}

// Accept tells the agent a suggestion was accepted (nes/accept).
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Accept(ctx context.Context, suggestionID string) error {
	if err := checkNES(s.c, schema.MethodNESAccept); err != nil {
		return err
	}
	return s.c.Notify(ctx, schema.MethodNESAccept, &AcceptNotification{SessionID: s.id, ID: suggestionID})
}

// Reject tells the agent a suggestion was not taken (nes/reject); reason
// may be "".
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Reject(ctx context.Context, suggestionID string, reason RejectReason) error {
	if err := checkNES(s.c, schema.MethodNESReject); err != nil {
		return err
	}
	return s.c.Notify(ctx, schema.MethodNESReject, &RejectNotification{SessionID: s.id, ID: suggestionID, Reason: reason})
}

// Close closes the session (nes/close) and returns once the agent has
// answered.
//
// Unstable: follows schema.unstable.json; may change.
func (s *Session) Close(ctx context.Context) error {
	if err := checkNES(s.c, schema.MethodNESClose); err != nil {
		return err
	}
	return s.c.Call(ctx, schema.MethodNESClose, &CloseRequest{SessionID: s.id}, nil)
}

// PositionEncoding returns the encoding Positions use on c: the agent's
// positionEncoding when the client offered it
// (acp.ClientOptions.PositionEncodings), else utf-16, which both sides
// assume when either says nothing. An agent's choice the client did not
// offer is not honoured.
//
// Unstable: follows schema.unstable.json; may change.
func PositionEncoding(c *acp.Client) schema.PositionEncodingKind {
	pe := c.InitializeResponse().AgentCapabilities.PositionEncoding
	if pe != "" && slices.Contains(c.ClientCapabilities().PositionEncodings, pe) {
		return pe
	}
	return schema.PositionUTF16
}

// checkNES fails when the agent did not advertise nes.
func checkNES(c *acp.Client, method string) error {
	if c.InitializeResponse().AgentCapabilities.NES == nil {
		return notSupported(method, "nes")
	}
	return nil
}

// screenSuggestions decodes an nes/suggest result the way
// SuggestResponse.UnmarshalJSON does, except that it drops, with a
// diagnostic, each suggestion that does not decode or that is for another
// document than uri (and allow, if set, refuses).
func screenSuggestions(c *acp.Client, b []byte, uri string, allow func(string) bool) (*SuggestResponse, error) {
	var w struct {
		Suggestions wirejson.Strict[[]json.RawMessage] `json:"suggestions"`
		Meta        wirejson.Meta                      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, wirejson.ErrDecode("suggest nes response", err)
	}
	if w.Suggestions.Err != nil {
		return nil, wirejson.ErrField("suggest nes response", "suggestions", w.Suggestions.Err)
	}
	if !w.Suggestions.OK {
		return nil, wirejson.ErrMissing("suggest nes response", "suggestions")
	}
	kept := make([]Suggestion, 0, len(w.Suggestions.V))
	for i, e := range w.Suggestions.V {
		s, err := unmarshalSuggestion(e)
		if err != nil {
			c.ReportDiagnostic(acp.Diagnostic{Kind: acp.DiagBadSuggestion, Line: string(e),
				Message: fmt.Sprintf("dropped suggestion %d of an nes/suggest answer, which did not decode: %s", i, agenttext.Text(err.Error()))})
			continue
		}
		if su, ok := suggestionURI(s); ok && su != uri && (allow == nil || !allow(su)) {
			c.ReportDiagnostic(acp.Diagnostic{Kind: acp.DiagForeignSuggestion, Line: string(e),
				Message: fmt.Sprintf("dropped suggestion %d (id %s) of an nes/suggest answer: it is for %s, not the document asked about, %s",
					i, agenttext.Quote(s.SuggestionID()), agenttext.Quote(su), agenttext.Quote(uri))})
			continue
		}
		kept = append(kept, s)
	}
	return &SuggestResponse{Suggestions: kept, Meta: w.Meta.Raw()}, nil
}

// suggestionURI returns the document s is for. ok is false for an unknown
// kind without a top-level "uri" (or with a null one), which names no
// document to screen; an unknown kind's "uri" that is not a string is
// returned as its raw JSON, which matches no request's URI.
func suggestionURI(s Suggestion) (uri string, ok bool) {
	switch s := s.(type) {
	case *EditSuggestion:
		return s.URI, true
	case *JumpSuggestion:
		return s.URI, true
	case *RenameSuggestion:
		return s.URI, true
	case *SearchAndReplaceSuggestion:
		return s.URI, true
	case *UnknownSuggestion:
		v, found, err := wirejson.Discriminator(s.Raw, "uri")
		if err != nil {
			raw, _, _ := wirejson.FindKey(s.Raw, "uri")
			return string(raw), true
		}
		return string(v), found
	}
	return "", false
}

// notSupported is the error of a method the agent's capabilities rule out,
// wrapping acp.ErrNotSupported.
func notSupported(method, capability string) error {
	return methodError(method, fmt.Errorf("%w (the agent did not advertise %s)", acp.ErrNotSupported, capability))
}

// methodError words an error of method as package acp words its own
// ("acp: nes/suggest: ..."), so the move of this feature out of package
// acp changed no message: the cause's own "acp: " prefixes are dropped.
// Every cause here is this package's (never the agent's words), so none
// is shown as sent.
func methodError(method string, err error) error { return &callError{method: method, err: err} }

type callError struct {
	method string
	err    error
}

func (e *callError) Error() string {
	msg := strings.ReplaceAll(strings.TrimPrefix(e.err.Error(), "acp: "), ": acp: ", ": ")
	return "acp: " + e.method + ": " + msg
}

func (e *callError) Unwrap() error { return e.err }
