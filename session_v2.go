package acp

import (
	"context"
	"errors"
)

// The methods of ACP v2 that v1 has no counterpart of, and v2's names for
// v1's auth methods (schema v2 x-method).
const (
	methodAuthLogin      = "auth/login"
	methodAuthLogout     = "auth/logout"
	methodTerminalCancel = "terminal/cancel"
	methodToolCallCancel = "tool_call/cancel"
)

// CancelTerminal asks a v2 agent to stop one of its agent-owned terminals
// (terminal/cancel), foreground or background. The answer means accepted:
// the terminal_update that sets its exit status confirms it
// (SessionState.Terminals). The terminal must currently advertise cancel
// (AgentTerminal.Cancellable), else ErrNotSupported and nothing is sent;
// with a v1 agent, always ErrNotSupported. Unstable: ACP v2 is in
// Preview; may change.
func (s *Session) CancelTerminal(ctx context.Context, terminalID string) error {
	if s.c.version != 2 {
		return notSupported(methodTerminalCancel, "ACP v2")
	}
	s.mu.Lock()
	can := false
	for _, t := range s.state.Terminals {
		if t.TerminalID == terminalID {
			can = t.Cancellable
		}
	}
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return callError(methodTerminalCancel, ErrSessionClosed)
	}
	if !can {
		return notSupported(methodTerminalCancel, "capabilities.cancel on terminal "+terminalID)
	}
	return s.c.call(ctx, methodTerminalCancel, map[string]string{"sessionId": s.id, "terminalId": terminalID}, nil)
}

// CancelToolCall asks a v2 agent to cancel one tool call
// (tool_call/cancel), typically background work listed in
// SessionState.Activity.Background. The answer means accepted: a
// tool_call_update to a final status confirms it. The client does not
// track the tool call's capabilities.cancel: an agent answers -32602 for
// a tool call that is not cancellable. With a v1 agent, ErrNotSupported.
// Unstable: ACP v2 is in Preview; may change.
func (s *Session) CancelToolCall(ctx context.Context, toolCallID string) error {
	if s.c.version != 2 {
		return notSupported(methodToolCallCancel, "ACP v2")
	}
	if toolCallID == "" {
		return callError(methodToolCallCancel, errors.New("a tool call id is required"))
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return callError(methodToolCallCancel, ErrSessionClosed)
	}
	return s.c.call(ctx, methodToolCallCancel, map[string]string{"sessionId": s.id, "toolCallId": toolCallID}, nil)
}
