package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/acpclient/acp/internal/agenttext"
)

// Next-edit suggestions (NES): an editor opens an NES session with
// nes/start, keeps the agent informed of its documents (document.go), and
// asks for suggestions with nes/suggest. Positions count characters in the
// negotiated encoding (Client.PositionEncoding). Every method needs the
// agent's nes capability, else ErrNotSupported and nothing is sent.
//
// Unstable: follows schema.unstable.json; may change.

// PositionEncodingKind is how a Position's character offset counts.
type PositionEncodingKind string

const (
	PositionUTF16 PositionEncodingKind = "utf-16" // UTF-16 code units (the default)
	PositionUTF32 PositionEncodingKind = "utf-32" // Unicode code points
	PositionUTF8  PositionEncodingKind = "utf-8"  // bytes
)

// NesCapabilities is the agent's nes capability: which document events it
// wants, and (raw) which context it uses in nes/suggest.
type NesCapabilities struct {
	Events  *NesEventCapabilities `json:"events,omitempty"`
	Context json.RawMessage       `json:"context,omitempty"`
	Meta    json.RawMessage       `json:"_meta,omitempty"`
}

// NesEventCapabilities lists the events the agent wants.
type NesEventCapabilities struct {
	Document *NesDocumentEventCapabilities `json:"document,omitempty"`
	Meta     json.RawMessage               `json:"_meta,omitempty"`
}

// NesDocumentEventCapabilities: each non-nil field lets the client send
// that document/* notification.
type NesDocumentEventCapabilities struct {
	DidOpen   *Capability                       `json:"didOpen,omitempty"`
	DidChange *NesDocumentDidChangeCapabilities `json:"didChange,omitempty"`
	DidClose  *Capability                       `json:"didClose,omitempty"`
	DidSave   *Capability                       `json:"didSave,omitempty"`
	DidFocus  *Capability                       `json:"didFocus,omitempty"`
	Meta      json.RawMessage                   `json:"_meta,omitempty"`
}

// NesDocumentDidChangeCapabilities says how document/didChange reports
// changes: TextDocumentSyncFull (the whole text each time) or
// TextDocumentSyncIncremental (ranges).
type NesDocumentDidChangeCapabilities struct {
	SyncKind TextDocumentSyncKind `json:"syncKind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// TextDocumentSyncKind is how document changes are sent.
type TextDocumentSyncKind string

const (
	TextDocumentSyncFull        TextDocumentSyncKind = "full"
	TextDocumentSyncIncremental TextDocumentSyncKind = "incremental"
)

// Position is a zero-based line and character offset (in the negotiated
// encoding).
type Position struct {
	Line      uint32          `json:"line"`
	Character uint32          `json:"character"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Range is a span of a document, End exclusive.
type Range struct {
	Start Position        `json:"start"`
	End   Position        `json:"end"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// WorkspaceFolder is a folder of the editor's workspace.
type WorkspaceFolder struct {
	URI  string          `json:"uri"`
	Name string          `json:"name"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// NesRepository names the workspace's repository.
type NesRepository struct {
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	RemoteURL string          `json:"remoteUrl"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// StartNesRequest is the params of nes/start.
type StartNesRequest struct {
	WorkspaceURI     string            `json:"workspaceUri,omitempty"`
	WorkspaceFolders []WorkspaceFolder `json:"workspaceFolders,omitempty"`
	Repository       *NesRepository    `json:"repository,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// StartNesResponse is the result of nes/start: the NES session's id, which
// the document events and suggestion requests name.
type StartNesResponse struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// NesTriggerKind is why a suggestion is asked for.
type NesTriggerKind string

const (
	NesTriggerAutomatic  NesTriggerKind = "automatic"
	NesTriggerDiagnostic NesTriggerKind = "diagnostic"
	NesTriggerManual     NesTriggerKind = "manual"
)

// SuggestNesRequest is the params of nes/suggest. Context is the optional
// NesSuggestContext of the schema (recent files, edit history, ...), sent
// as given.
type SuggestNesRequest struct {
	SessionID   string          `json:"sessionId"`
	URI         string          `json:"uri"`
	Version     int64           `json:"version"`
	Position    Position        `json:"position"`
	Selection   *Range          `json:"selection,omitempty"`
	TriggerKind NesTriggerKind  `json:"triggerKind"`
	Context     json.RawMessage `json:"context,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`

	// AllowURI, if set, is asked about each suggestion whose uri is not
	// URI: true keeps it. Nil keeps only suggestions for URI itself. It is
	// not sent; SuggestNES calls it on its own goroutine before it returns.
	// The schema lets an agent suggest edits, jumps and renames in other
	// files (and a search and replace over a folder), so an editor that
	// wants those allows the documents it is willing to show, e.g. the
	// open ones inside its workspace.
	AllowURI func(uri string) bool `json:"-"`
}

// SuggestNesResponse is the result of nes/suggest.
type SuggestNesResponse struct {
	Suggestions []NesSuggestion `json:"suggestions"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// NesSuggestion is one suggestion, told apart on the wire by "kind":
// *NesEditSuggestion ("edit"), *NesJumpSuggestion ("jump"),
// *NesRenameSuggestion ("rename"), *NesSearchAndReplaceSuggestion
// ("searchAndReplace"), or *UnknownNesSuggestion (kept raw).
type NesSuggestion interface {
	// SuggestionID is the id to accept or reject it by ("" when unknown).
	SuggestionID() string
	isNesSuggestion()
}

// NesEditSuggestion proposes text edits to one document.
type NesEditSuggestion struct {
	ID             string          `json:"id"`
	URI            string          `json:"uri"`
	Edits          []NesTextEdit   `json:"edits"`
	CursorPosition *Position       `json:"cursorPosition,omitempty"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// NesTextEdit replaces Range with NewText.
type NesTextEdit struct {
	Range   Range           `json:"range"`
	NewText string          `json:"newText"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// NesJumpSuggestion proposes moving the cursor.
type NesJumpSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// NesRenameSuggestion proposes renaming the symbol at Position.
type NesRenameSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	NewName  string          `json:"newName"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// NesSearchAndReplaceSuggestion proposes a search and replace in a
// document.
type NesSearchAndReplaceSuggestion struct {
	ID      string          `json:"id"`
	URI     string          `json:"uri"`
	Search  string          `json:"search"`
	Replace string          `json:"replace"`
	IsRegex bool            `json:"isRegex,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnknownNesSuggestion is a suggestion of a kind this package does not know.
type UnknownNesSuggestion struct {
	Kind string
	Raw  json.RawMessage
}

func (s *NesEditSuggestion) SuggestionID() string             { return s.ID }
func (s *NesJumpSuggestion) SuggestionID() string             { return s.ID }
func (s *NesRenameSuggestion) SuggestionID() string           { return s.ID }
func (s *NesSearchAndReplaceSuggestion) SuggestionID() string { return s.ID }
func (*UnknownNesSuggestion) SuggestionID() string            { return "" }

func (*NesEditSuggestion) isNesSuggestion()             {}
func (*NesJumpSuggestion) isNesSuggestion()             {}
func (*NesRenameSuggestion) isNesSuggestion()           {}
func (*NesSearchAndReplaceSuggestion) isNesSuggestion() {}
func (*UnknownNesSuggestion) isNesSuggestion()          {}

// NesRejectReason is why a suggestion was rejected.
type NesRejectReason string

const (
	NesRejected  NesRejectReason = "rejected"
	NesIgnored   NesRejectReason = "ignored"
	NesReplaced  NesRejectReason = "replaced"
	NesCancelled NesRejectReason = "cancelled"
)

// AcceptNesNotification is the params of nes/accept.
type AcceptNesNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// RejectNesNotification is the params of nes/reject.
type RejectNesNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Reason    NesRejectReason `json:"reason,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CloseNesRequest is the params of nes/close.
type CloseNesRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PositionEncoding returns the encoding Positions use in NES: the agent's
// positionEncoding when the client offered it, else utf-16, which both
// sides assume when either says nothing. (An agent's choice the client did
// not offer is not honoured.)
func (c *Client) PositionEncoding() PositionEncodingKind {
	pe := c.init.AgentCapabilities.PositionEncoding
	if pe != "" && slices.Contains(c.capabilities().PositionEncodings, pe) {
		return pe
	}
	return PositionUTF16
}

func (c *Client) checkNes(method string) error {
	if c.init.AgentCapabilities.Nes == nil {
		return notSupported(method, "nes")
	}
	return nil
}

// StartNES opens an NES session (nes/start).
func (c *Client) StartNES(ctx context.Context, req *StartNesRequest) (*StartNesResponse, error) {
	if err := c.checkNes(MethodNESStart); err != nil {
		return nil, err
	}
	if req == nil {
		req = &StartNesRequest{}
	}
	var res StartNesResponse
	if err := c.call(ctx, MethodNESStart, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SuggestNES asks for suggestions at a position (nes/suggest); an empty
// TriggerKind is sent as manual.
//
// Each suggestion is screened on its own, so one bad suggestion costs only
// itself: one that does not decode (a known kind with a missing or
// malformed field, or a value that is not an object) is dropped with a
// [DiagBadSuggestion]; one for a document other than req.URI is dropped
// with a [DiagForeignSuggestion] unless req.AllowURI allows it. Kinds of
// suggestion this package does not know are kept as
// *UnknownNesSuggestion, screened by their top-level "uri" if they have
// one. Only an answer whose "suggestions" is missing or not an array fails
// the call.
//
// "The document asked about" is req.URI as an exact string: a uri that
// differs in any byte (case, percent-encoding, a trailing slash, "..") is
// another document. Normalizing would need the editor's own rules for its
// URIs, and any gap between those and a normalizer here would let a
// suggestion through for a file the editor resolves differently; with an
// exact match, every suggestion kept names the document in the very words
// the editor used for it.
func (c *Client) SuggestNES(ctx context.Context, req *SuggestNesRequest) (*SuggestNesResponse, error) {
	if err := c.checkNes(MethodNESSuggest); err != nil {
		return nil, err
	}
	if req == nil || req.SessionID == "" || req.URI == "" {
		return nil, callError(MethodNESSuggest, errors.New("a session id and a uri are required"))
	}
	r := *req
	if r.TriggerKind == "" {
		r.TriggerKind = NesTriggerManual
	}
	var raw json.RawMessage
	if err := c.call(ctx, MethodNESSuggest, &r, &raw); err != nil {
		return nil, err
	}
	res, err := c.screenSuggestions(raw, r.URI, r.AllowURI)
	if err != nil {
		return nil, callError(MethodNESSuggest, fmt.Errorf("decoding the result: %w", err))
	}
	return res, nil
}

// screenSuggestions decodes an nes/suggest result the way
// SuggestNesResponse.UnmarshalJSON does, except that it drops, with a
// diagnostic, each suggestion that does not decode or that is for another
// document than uri (and allow, if set, refuses).
func (c *Client) screenSuggestions(b []byte, uri string, allow func(string) bool) (*SuggestNesResponse, error) {
	var w struct {
		Suggestions wireStrict[[]json.RawMessage] `json:"suggestions"`
		Meta        wireMeta                      `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, errDecode("suggest nes response", err)
	}
	if w.Suggestions.err != nil {
		return nil, errField("suggest nes response", "suggestions", w.Suggestions.err)
	}
	if !w.Suggestions.ok {
		return nil, errMissing("suggest nes response", "suggestions")
	}
	kept := make([]NesSuggestion, 0, len(w.Suggestions.v))
	for i, e := range w.Suggestions.v {
		s, err := unmarshalNesSuggestion(e)
		if err != nil {
			c.diag(string(DiagBadSuggestion), fmt.Sprintf("dropped suggestion %d of an nes/suggest answer, which did not decode: %s", i, agenttext.Text(err.Error())), e)
			continue
		}
		if su, ok := suggestionURI(s); ok && su != uri && (allow == nil || !allow(su)) {
			c.diag(string(DiagForeignSuggestion), fmt.Sprintf("dropped suggestion %d (id %s) of an nes/suggest answer: it is for %s, not the document asked about, %s",
				i, agenttext.Quote(s.SuggestionID()), agenttext.Quote(su), agenttext.Quote(uri)), e)
			continue
		}
		kept = append(kept, s)
	}
	return &SuggestNesResponse{Suggestions: kept, Meta: w.Meta.raw()}, nil
}

// suggestionURI returns the document s is for. ok is false for an unknown
// kind without a top-level "uri" (or with a null one), which names no
// document to screen; an unknown kind's "uri" that is not a string is
// returned as its raw JSON, which matches no request's URI.
func suggestionURI(s NesSuggestion) (uri string, ok bool) {
	switch s := s.(type) {
	case *NesEditSuggestion:
		return s.URI, true
	case *NesJumpSuggestion:
		return s.URI, true
	case *NesRenameSuggestion:
		return s.URI, true
	case *NesSearchAndReplaceSuggestion:
		return s.URI, true
	case *UnknownNesSuggestion:
		v, found, err := jsonDiscriminator(s.Raw, "uri")
		if err != nil {
			raw, _, _ := jsonFindKey(s.Raw, "uri")
			return string(raw), true
		}
		return string(v), found
	}
	return "", false
}

// AcceptNES tells the agent a suggestion was accepted (nes/accept).
func (c *Client) AcceptNES(ctx context.Context, sessionID, suggestionID string) error {
	if err := c.checkNes(MethodNESAccept); err != nil {
		return err
	}
	return c.notify(ctx, MethodNESAccept, &AcceptNesNotification{SessionID: sessionID, ID: suggestionID})
}

// RejectNES tells the agent a suggestion was not taken (nes/reject); reason
// may be "".
func (c *Client) RejectNES(ctx context.Context, sessionID, suggestionID string, reason NesRejectReason) error {
	if err := c.checkNes(MethodNESReject); err != nil {
		return err
	}
	return c.notify(ctx, MethodNESReject, &RejectNesNotification{SessionID: sessionID, ID: suggestionID, Reason: reason})
}

// CloseNES closes an NES session (nes/close).
func (c *Client) CloseNES(ctx context.Context, sessionID string) error {
	if err := c.checkNes(MethodNESClose); err != nil {
		return err
	}
	return c.call(ctx, MethodNESClose, &CloseNesRequest{SessionID: sessionID}, nil)
}

// The MarshalJSON methods write the "kind" the union is told apart by, so a
// suggestion encodes as the agent sent it (traces, JSON output).

func (s NesEditSuggestion) MarshalJSON() ([]byte, error) {
	type body NesEditSuggestion
	s.Edits = orEmpty(s.Edits)
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"edit", body(s)})
}

func (s NesJumpSuggestion) MarshalJSON() ([]byte, error) {
	type body NesJumpSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"jump", body(s)})
}

func (s NesRenameSuggestion) MarshalJSON() ([]byte, error) {
	type body NesRenameSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"rename", body(s)})
}

func (s NesSearchAndReplaceSuggestion) MarshalJSON() ([]byte, error) {
	type body NesSearchAndReplaceSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"searchAndReplace", body(s)})
}

// MarshalJSON returns Raw unchanged (or a bare {"kind":...} when Raw is empty).
func (s UnknownNesSuggestion) MarshalJSON() ([]byte, error) {
	return marshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Kind string `json:"kind"`
		}{s.Kind})
	})
}
