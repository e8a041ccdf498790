package schema

import "encoding/json"

// Wire types of the legacy model selection (session/set_model); the
// client's side is in models.go.

// SessionModelState is the legacy model selection an agent may return from
// session/new, session/load, session/resume and session/fork: the models it
// offers and the one in use. The protocol replaced it with config options
// of category "model", but gemini-cli and cursor still advertise only this.
// The session keeps it in SessionState.Models, and Session.SetModel sends
// session/set_model.
//
// Unstable: follows the legacy unstable schema, which no release carries any
// more; may change or go away.
type SessionModelState struct {
	CurrentModelID  string          `json:"currentModelId"`
	AvailableModels []ModelInfo     `json:"availableModels"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// ModelInfo is one model an agent offers in SessionModelState.
//
// Unstable: follows schema.unstable.json; may change.
type ModelInfo struct {
	ModelID     string          `json:"modelId"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModelRequest is the params of the legacy session/set_model.
//
// Unstable: follows schema.unstable.json; may change.
type SetSessionModelRequest struct {
	SessionID string          `json:"sessionId"`
	ModelID   string          `json:"modelId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetSessionModelResponse is the result of the legacy session/set_model.
//
// Unstable: follows schema.unstable.json; may change.
type SetSessionModelResponse struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}
