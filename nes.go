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
//
// Unstable: follows schema.unstable.json; may change.
type PositionEncodingKind string

// Unstable: follows schema.unstable.json; may change.
const (
	PositionUTF16 PositionEncodingKind = "utf-16" // UTF-16 code units (the default)
	PositionUTF32 PositionEncodingKind = "utf-32" // Unicode code points
	PositionUTF8  PositionEncodingKind = "utf-8"  // bytes
)

// NESCapabilities is the agent's nes capability: which document events it
// wants, and (raw) which context it uses in nes/suggest.
//
// Unstable: follows schema.unstable.json; may change.
type NESCapabilities struct {
	Events  *NESEventCapabilities `json:"events,omitempty"`
	Context json.RawMessage       `json:"context,omitempty"`
	Meta    json.RawMessage       `json:"_meta,omitempty"`
}

// NESEventCapabilities lists the events the agent wants.
//
// Unstable: follows schema.unstable.json; may change.
type NESEventCapabilities struct {
	Document *NESDocumentEventCapabilities `json:"document,omitempty"`
	Meta     json.RawMessage               `json:"_meta,omitempty"`
}

// NESDocumentEventCapabilities: each non-nil field lets the client send
// that document/* notification.
//
// Unstable: follows schema.unstable.json; may change.
type NESDocumentEventCapabilities struct {
	DidOpen   *Capability                       `json:"didOpen,omitempty"`
	DidChange *NESDocumentDidChangeCapabilities `json:"didChange,omitempty"`
	DidClose  *Capability                       `json:"didClose,omitempty"`
	DidSave   *Capability                       `json:"didSave,omitempty"`
	DidFocus  *Capability                       `json:"didFocus,omitempty"`
	Meta      json.RawMessage                   `json:"_meta,omitempty"`
}

// NESDocumentDidChangeCapabilities says how document/didChange reports
// changes: TextDocumentSyncFull (the whole text each time) or
// TextDocumentSyncIncremental (ranges).
//
// Unstable: follows schema.unstable.json; may change.
type NESDocumentDidChangeCapabilities struct {
	SyncKind TextDocumentSyncKind `json:"syncKind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// TextDocumentSyncKind is how document changes are sent.
//
// Unstable: follows schema.unstable.json; may change.
type TextDocumentSyncKind string

// Unstable: follows schema.unstable.json; may change.
const (
	TextDocumentSyncFull        TextDocumentSyncKind = "full"
	TextDocumentSyncIncremental TextDocumentSyncKind = "incremental"
)

// Position is a zero-based line and character offset (in the negotiated
// encoding).
//
// Unstable: follows schema.unstable.json; may change.
type Position struct {
	Line      uint32          `json:"line"`
	Character uint32          `json:"character"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Range is a span of a document, End exclusive.
//
// Unstable: follows schema.unstable.json; may change.
type Range struct {
	Start Position        `json:"start"`
	End   Position        `json:"end"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// WorkspaceFolder is a folder of the editor's workspace.
//
// Unstable: follows schema.unstable.json; may change.
type WorkspaceFolder struct {
	URI  string          `json:"uri"`
	Name string          `json:"name"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// NESRepository names the workspace's repository.
//
// Unstable: follows schema.unstable.json; may change.
type NESRepository struct {
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	RemoteURL string          `json:"remoteUrl"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// StartNESRequest is the params of nes/start.
//
// Unstable: follows schema.unstable.json; may change.
type StartNESRequest struct {
	WorkspaceURI     string            `json:"workspaceUri,omitempty"`
	WorkspaceFolders []WorkspaceFolder `json:"workspaceFolders,omitempty"`
	Repository       *NESRepository    `json:"repository,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// StartNESResponse is the result of nes/start: the NES session's id, which
// the document events and suggestion requests name.
//
// Unstable: follows schema.unstable.json; may change.
type StartNESResponse struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// NESTriggerKind is why a suggestion is asked for.
//
// Unstable: follows schema.unstable.json; may change.
type NESTriggerKind string

// Unstable: follows schema.unstable.json; may change.
const (
	NESTriggerAutomatic  NESTriggerKind = "automatic"
	NESTriggerDiagnostic NESTriggerKind = "diagnostic"
	NESTriggerManual     NESTriggerKind = "manual"
)

// SuggestNESRequest is the params of nes/suggest. Context is the optional
// NESSuggestContext of the schema (recent files, edit history, ...), sent
// as given.
//
// Unstable: follows schema.unstable.json; may change.
type SuggestNESRequest struct {
	SessionID   string          `json:"sessionId"`
	URI         string          `json:"uri"`
	Version     int64           `json:"version"`
	Position    Position        `json:"position"`
	Selection   *Range          `json:"selection,omitempty"`
	TriggerKind NESTriggerKind  `json:"triggerKind"`
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

// SuggestNESResponse is the result of nes/suggest.
//
// Unstable: follows schema.unstable.json; may change.
type SuggestNESResponse struct {
	Suggestions []NESSuggestion `json:"suggestions"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// NESSuggestion is one suggestion, told apart on the wire by "kind":
// *NESEditSuggestion ("edit"), *NESJumpSuggestion ("jump"),
// *NESRenameSuggestion ("rename"), *NESSearchAndReplaceSuggestion
// ("searchAndReplace"), or *UnknownNESSuggestion (kept raw).
//
// Unstable: follows schema.unstable.json; may change.
type NESSuggestion interface {
	// SuggestionID is the id to accept or reject it by ("" when unknown).
	SuggestionID() string
	isNESSuggestion()
}

// NESEditSuggestion proposes text edits to one document.
//
// Unstable: follows schema.unstable.json; may change.
type NESEditSuggestion struct {
	ID             string          `json:"id"`
	URI            string          `json:"uri"`
	Edits          []NESTextEdit   `json:"edits"`
	CursorPosition *Position       `json:"cursorPosition,omitempty"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// NESTextEdit replaces Range with NewText.
//
// Unstable: follows schema.unstable.json; may change.
type NESTextEdit struct {
	Range   Range           `json:"range"`
	NewText string          `json:"newText"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// NESJumpSuggestion proposes moving the cursor.
//
// Unstable: follows schema.unstable.json; may change.
type NESJumpSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// NESRenameSuggestion proposes renaming the symbol at Position.
//
// Unstable: follows schema.unstable.json; may change.
type NESRenameSuggestion struct {
	ID       string          `json:"id"`
	URI      string          `json:"uri"`
	Position Position        `json:"position"`
	NewName  string          `json:"newName"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// NESSearchAndReplaceSuggestion proposes a search and replace in a
// document.
//
// Unstable: follows schema.unstable.json; may change.
type NESSearchAndReplaceSuggestion struct {
	ID      string          `json:"id"`
	URI     string          `json:"uri"`
	Search  string          `json:"search"`
	Replace string          `json:"replace"`
	IsRegex bool            `json:"isRegex,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnknownNESSuggestion is a suggestion of a kind this package does not know.
//
// Unstable: follows schema.unstable.json; may change.
type UnknownNESSuggestion struct {
	Kind string
	Raw  json.RawMessage
}

func (s *NESEditSuggestion) SuggestionID() string             { return s.ID }
func (s *NESJumpSuggestion) SuggestionID() string             { return s.ID }
func (s *NESRenameSuggestion) SuggestionID() string           { return s.ID }
func (s *NESSearchAndReplaceSuggestion) SuggestionID() string { return s.ID }
func (*UnknownNESSuggestion) SuggestionID() string            { return "" }

func (*NESEditSuggestion) isNESSuggestion()             {}
func (*NESJumpSuggestion) isNESSuggestion()             {}
func (*NESRenameSuggestion) isNESSuggestion()           {}
func (*NESSearchAndReplaceSuggestion) isNESSuggestion() {}
func (*UnknownNESSuggestion) isNESSuggestion()          {}

// NESRejectReason is why a suggestion was rejected.
//
// Unstable: follows schema.unstable.json; may change.
type NESRejectReason string

// Unstable: follows schema.unstable.json; may change.
const (
	NESRejected  NESRejectReason = "rejected"
	NESIgnored   NESRejectReason = "ignored"
	NESReplaced  NESRejectReason = "replaced"
	NESCancelled NESRejectReason = "cancelled"
)

// AcceptNESNotification is the params of nes/accept.
//
// Unstable: follows schema.unstable.json; may change.
type AcceptNESNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// RejectNESNotification is the params of nes/reject.
//
// Unstable: follows schema.unstable.json; may change.
type RejectNESNotification struct {
	SessionID string          `json:"sessionId"`
	ID        string          `json:"id"`
	Reason    NESRejectReason `json:"reason,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CloseNESRequest is the params of nes/close.
//
// Unstable: follows schema.unstable.json; may change.
type CloseNESRequest struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// positionEncoding implements [Client.PositionEncoding].
func (c *Client) positionEncoding() PositionEncodingKind {
	pe := c.agent().AgentCapabilities.PositionEncoding
	if pe != "" && slices.Contains(c.capabilities().PositionEncodings, pe) {
		return pe
	}
	return PositionUTF16
}

func (c *Client) checkNES(method string) error {
	if c.agent().AgentCapabilities.NES == nil {
		return notSupported(method, "nes")
	}
	return nil
}

// startNES implements [Client.StartNES].
func (c *Client) startNES(ctx context.Context, req *StartNESRequest) (*StartNESResponse, error) {
	if err := c.checkNES(MethodNESStart); err != nil {
		return nil, err
	}
	if req == nil {
		req = &StartNESRequest{}
	}
	var res StartNESResponse
	if err := c.call(ctx, MethodNESStart, req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// suggestNES implements [Client.SuggestNES].
func (c *Client) suggestNES(ctx context.Context, req *SuggestNESRequest) (*SuggestNESResponse, error) {
	if err := c.checkNES(MethodNESSuggest); err != nil {
		return nil, err
	}
	if req == nil || req.SessionID == "" || req.URI == "" {
		return nil, callError(MethodNESSuggest, errors.New("a session id and a uri are required"))
	}
	r := *req
	if r.TriggerKind == "" {
		r.TriggerKind = NESTriggerManual
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
// SuggestNESResponse.UnmarshalJSON does, except that it drops, with a
// diagnostic, each suggestion that does not decode or that is for another
// document than uri (and allow, if set, refuses).
func (c *Client) screenSuggestions(b []byte, uri string, allow func(string) bool) (*SuggestNESResponse, error) {
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
	kept := make([]NESSuggestion, 0, len(w.Suggestions.v))
	for i, e := range w.Suggestions.v {
		s, err := unmarshalNESSuggestion(e)
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
	return &SuggestNESResponse{Suggestions: kept, Meta: w.Meta.raw()}, nil
}

// suggestionURI returns the document s is for. ok is false for an unknown
// kind without a top-level "uri" (or with a null one), which names no
// document to screen; an unknown kind's "uri" that is not a string is
// returned as its raw JSON, which matches no request's URI.
func suggestionURI(s NESSuggestion) (uri string, ok bool) {
	switch s := s.(type) {
	case *NESEditSuggestion:
		return s.URI, true
	case *NESJumpSuggestion:
		return s.URI, true
	case *NESRenameSuggestion:
		return s.URI, true
	case *NESSearchAndReplaceSuggestion:
		return s.URI, true
	case *UnknownNESSuggestion:
		v, found, err := jsonDiscriminator(s.Raw, "uri")
		if err != nil {
			raw, _, _ := jsonFindKey(s.Raw, "uri")
			return string(raw), true
		}
		return string(v), found
	}
	return "", false
}

// acceptNES implements [Client.AcceptNES].
func (c *Client) acceptNES(ctx context.Context, sessionID, suggestionID string) error {
	if err := c.checkNES(MethodNESAccept); err != nil {
		return err
	}
	return c.notify(ctx, MethodNESAccept, &AcceptNESNotification{SessionID: sessionID, ID: suggestionID})
}

// rejectNES implements [Client.RejectNES].
func (c *Client) rejectNES(ctx context.Context, sessionID, suggestionID string, reason NESRejectReason) error {
	if err := c.checkNES(MethodNESReject); err != nil {
		return err
	}
	return c.notify(ctx, MethodNESReject, &RejectNESNotification{SessionID: sessionID, ID: suggestionID, Reason: reason})
}

// closeNES implements [Client.CloseNES].
func (c *Client) closeNES(ctx context.Context, sessionID string) error {
	if err := c.checkNES(MethodNESClose); err != nil {
		return err
	}
	return c.call(ctx, MethodNESClose, &CloseNESRequest{SessionID: sessionID}, nil)
}

// The MarshalJSON methods write the "kind" the union is told apart by, so a
// suggestion encodes as the agent sent it (traces, JSON output).

func (s NESEditSuggestion) MarshalJSON() ([]byte, error) {
	type body NESEditSuggestion
	s.Edits = orEmpty(s.Edits)
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"edit", body(s)})
}

func (s NESJumpSuggestion) MarshalJSON() ([]byte, error) {
	type body NESJumpSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"jump", body(s)})
}

func (s NESRenameSuggestion) MarshalJSON() ([]byte, error) {
	type body NESRenameSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"rename", body(s)})
}

func (s NESSearchAndReplaceSuggestion) MarshalJSON() ([]byte, error) {
	type body NESSearchAndReplaceSuggestion
	return json.Marshal(struct {
		Kind string `json:"kind"`
		body
	}{"searchAndReplace", body(s)})
}

// MarshalJSON returns Raw unchanged (or a bare {"kind":...} when Raw is empty).
func (s UnknownNESSuggestion) MarshalJSON() ([]byte, error) {
	return marshalRaw(s.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Kind string `json:"kind"`
		}{s.Kind})
	})
}
