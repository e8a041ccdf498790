package schema

import "encoding/json"

// SystemPrompt is a client's system-level instructions for a session,
// sent on session/new, session/load and session/resume (stable since
// schema 1.30.0) — and on session/fork — only to an agent that advertises
// [SessionCapabilities].SystemPrompt, and with [SystemPromptOverride] only
// when it also advertises the override mode. The agent returns an error,
// rather than creating or resuming the session, when it cannot apply it.
// Content is required and must not be empty; agents must accept text
// blocks and reject the types they do not support.
type SystemPrompt struct {
	Mode    SystemPromptMode `json:"mode"`
	Content []ContentBlock   `json:"content"`
	Meta    json.RawMessage  `json:"_meta,omitempty"`
}

// SystemPromptMode is how the agent combines a SystemPrompt with its own
// instructions. Values the schema does not list are kept.
type SystemPromptMode string

const (
	// SystemPromptAppend adds the content to the agent's own instructions:
	// the mode every agent advertising the capability supports.
	SystemPromptAppend SystemPromptMode = "append"
	// SystemPromptOverride replaces the agent's built-in default
	// instructions; only for an agent advertising
	// SessionSystemPromptModeCapabilities.Override.
	SystemPromptOverride SystemPromptMode = "override"
)

// SessionSystemPromptCapabilities is the agent's support for a client
// system prompt: its presence means append; Mode lists further modes.
type SessionSystemPromptCapabilities struct {
	Mode *SessionSystemPromptModeCapabilities `json:"mode,omitempty"`
	Meta json.RawMessage                      `json:"_meta,omitempty"`
}

// SessionSystemPromptModeCapabilities lists the system prompt modes beyond
// append that the agent supports.
type SessionSystemPromptModeCapabilities struct {
	Override *Capability     `json:"override,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}
