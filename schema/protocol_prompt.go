package schema

import (
	"encoding/json"
)

// Wire types of commands, plans, prompts, permission and elicitation; see
// protocol.go for how they decode.

// ---- commands and plans ----

// AvailableCommand is a slash command; Name has no leading "/". A malformed
// input reads as nil.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
	Meta        json.RawMessage        `json:"_meta,omitempty"`
}

// AvailableCommandInput says the command takes free text; Hint describes it.
type AvailableCommandInput struct {
	Hint string          `json:"hint"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PlanEntry is one task of a plan. All three fields are required strings;
// unknown priority and status values are kept.
type PlanEntry struct {
	Content  string            `json:"content"`
	Priority PlanEntryPriority `json:"priority"`
	Status   PlanEntryStatus   `json:"status"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// ---- prompt ----

// PromptRequest is the params of session/prompt. Prompt is always sent (as
// [] when nil); image, audio and embedded resources need the matching
// promptCapabilities.
type PromptRequest struct {
	SessionID string          `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt. stopReason is required
// (an unknown value is kept); a malformed usage reads as nil.
type PromptResponse struct {
	StopReason StopReason `json:"stopReason"`
	// Usage is the turn's token usage, if the agent sent one.
	// Unstable: follows schema.unstable.json; may change.
	Usage *Usage          `json:"usage,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// Usage is token usage reported with a prompt response. It is UNSTABLE in
// the spec (whether it counts the turn or the session is unresolved).
//
// Unstable: follows schema.unstable.json; may change.
type Usage struct {
	TotalTokens       uint64          `json:"totalTokens"`
	InputTokens       uint64          `json:"inputTokens"`
	OutputTokens      uint64          `json:"outputTokens"`
	ThoughtTokens     *uint64         `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64         `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64         `json:"cachedWriteTokens,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// CancelNotification is the params of the session/cancel notification.
type CancelNotification struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request. RequestID is
// the raw JSON-RPC id (number, string or null) of the request to cancel.
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ---- permission ----

// RequestPermissionRequest is the params of session/request_permission.
// ToolCall (only its toolCallId is required) and Options are strict: a bad
// option fails the request, since answering with an option id the agent did
// not offer would be worse.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// PermissionOption is one answer offered to the user.
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission:
// {"outcome":{"outcome":"selected","optionId":"..."}} or
// {"outcome":{"outcome":"cancelled"}}.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// PermissionOutcomeKind is the kind of a permission answer
// (PermissionOutcome.Kind). Unknown values are kept.
type PermissionOutcomeKind string

// Permission outcomes.
const (
	OutcomeSelected  PermissionOutcomeKind = "selected"  // an offered option was chosen
	OutcomeCancelled PermissionOutcomeKind = "cancelled" // the turn was cancelled
)

// PermissionOutcome is the user's answer. OptionID is set only for
// OutcomeSelected. Unknown outcomes are kept, and must never be taken for
// approval.
type PermissionOutcome struct {
	Kind     PermissionOutcomeKind `json:"outcome"`
	OptionID string                `json:"optionId,omitempty"`
	Meta     json.RawMessage       `json:"_meta,omitempty"`
}

// ---- elicitation ----

// ElicitationMode is how an elicitation asks (CreateElicitationRequest.Mode);
// other values are custom or future modes and must not be rendered as a
// known one.
type ElicitationMode string

// Elicitation modes.
const (
	ElicitationModeForm ElicitationMode = "form" // a form from RequestedSchema
	ElicitationModeURL  ElicitationMode = "url"  // a URL for the user to open
)

// CreateElicitationRequest is the params of elicitation/create. It is scoped
// to a session (SessionID, optionally ToolCallID) or to a pending JSON-RPC
// request (RequestID, raw). Form mode carries RequestedSchema (kept raw);
// URL mode carries ElicitationID and URL. message and mode are required, as
// are the fields of the form and url modes; other modes are kept as sent.
type CreateElicitationRequest struct {
	Message         string          `json:"message"`
	Mode            ElicitationMode `json:"mode"`
	SessionID       string          `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage `json:"requestId,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	URL             string          `json:"url,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationAction is the user's answer to an elicitation
// (CreateElicitationResponse.Action). Unknown values are kept.
type ElicitationAction string

// Elicitation actions.
const (
	ElicitationAccept  ElicitationAction = "accept"  // the user submitted Content
	ElicitationDecline ElicitationAction = "decline" // the user said no
	ElicitationCancel  ElicitationAction = "cancel"  // the user dismissed it
)

// CreateElicitationResponse is the result of elicitation/create. Content (an
// object of field values, kept raw) is only meaningful with
// ElicitationAccept.
type CreateElicitationResponse struct {
	Action  ElicitationAction `json:"action"`
	Content json.RawMessage   `json:"content,omitempty"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// CompleteElicitationNotification is the params of elicitation/complete.
// Unknown or already completed IDs must be ignored.
type CompleteElicitationNotification struct {
	ElicitationID string          `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}
