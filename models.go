package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/schema"
)

// The legacy model selection on the client's side: Session.SetModel and
// how it checks the agent's answer. The wire types are in
// protocol_models.go.

// setModel implements [Session.SetModel].
func (s *Session) setModel(ctx context.Context, modelID string) error {
	if err := s.checkOpen(schema.MethodSessionSetModel); err != nil {
		return err
	}
	s.mu.Lock()
	models := s.state.Models
	s.mu.Unlock()
	if models == nil || len(models.AvailableModels) == 0 {
		return notSupported(schema.MethodSessionSetModel, "models for this session")
	}
	if !slices.ContainsFunc(models.AvailableModels, func(m schema.ModelInfo) bool { return m.ModelID == modelID }) {
		return callError(schema.MethodSessionSetModel, fmt.Errorf("unknown model %s (valid: %s)", agenttext.Quote(modelID), modelIDs(models.AvailableModels)))
	}
	if err := s.c.call(ctx, schema.MethodSessionSetModel, &schema.SetSessionModelRequest{SessionID: s.id, ModelID: modelID}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	s.restore.chosen.model = modelID
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
func modelIDs(ms []schema.ModelInfo) string {
	return strings.Join(agenttext.List(len(ms), func(i int) string { return ms[i].ModelID }), ", ")
}
