package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
)

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

// setModel implements [Session.SetModel].
func (s *Session) setModel(ctx context.Context, modelID string) error {
	if err := s.checkOpen(MethodSessionSetModel); err != nil {
		return err
	}
	s.mu.Lock()
	models := s.state.Models
	s.mu.Unlock()
	if models == nil || len(models.AvailableModels) == 0 {
		return notSupported(MethodSessionSetModel, "models for this session")
	}
	if !slices.ContainsFunc(models.AvailableModels, func(m ModelInfo) bool { return m.ModelID == modelID }) {
		return callError(MethodSessionSetModel, fmt.Errorf("unknown model %s (valid: %s)", agenttext.Quote(modelID), modelIDs(models.AvailableModels)))
	}
	if err := s.c.call(ctx, MethodSessionSetModel, &SetSessionModelRequest{SessionID: s.id, ModelID: modelID}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	s.chosen.model = modelID
	m := *s.state.Models
	m.CurrentModelID = modelID
	s.state.Models = &m
	s.logLocked(sentry{kind: entSetup, setup: &SessionSetup{Models: &m}})
	s.notifyLocked()
	s.mu.Unlock()
	return nil
}

// modelIDs lists the ids of ms, comma-separated, for error messages: a
// few of them, cut short (agenttext.List), since the agent chooses how many it
// offers and how long their ids are.
func modelIDs(ms []ModelInfo) string {
	return strings.Join(agenttext.List(len(ms), func(i int) string { return ms[i].ModelID }), ", ")
}
