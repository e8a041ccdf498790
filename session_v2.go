package acp

import (
	"context"
	"errors"
	"slices"
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
// tool_call_update to a final status confirms it. The tool call must
// currently advertise cancel (ToolCallState.Cancellable, as the session's
// latest fold that holds it says: see toolCallLocked), else
// ErrNotSupported and nothing is sent; with a v1 agent, always
// ErrNotSupported. Unstable: ACP v2 is in Preview; may change.
func (s *Session) CancelToolCall(ctx context.Context, toolCallID string) error {
	if s.c.version != 2 {
		return notSupported(methodToolCallCancel, "ACP v2")
	}
	if toolCallID == "" {
		return callError(methodToolCallCancel, errors.New("a tool call id is required"))
	}
	s.mu.Lock()
	closed := s.closed
	tc := s.toolCallLocked(toolCallID)
	s.mu.Unlock()
	if closed {
		return callError(methodToolCallCancel, ErrSessionClosed)
	}
	if tc == nil || !tc.Cancellable {
		return notSupported(methodToolCallCancel, "capabilities.cancel on tool call "+toolCallID)
	}
	return s.c.call(ctx, methodToolCallCancel, map[string]string{"sessionId": s.id, "toolCallId": toolCallID}, nil)
}

// toolCallLocked returns the latest state of a tool call of the session,
// nil when no fold holds it. A v2 tool call outlives its turn (background
// work), so its later updates land outside turns: the running turn is
// asked first, then the updates outside turns, then the ended turns not
// released, newest first. s.mu is held.
func (s *Session) toolCallLocked(id string) *ToolCallState {
	if t := s.turn; t != nil {
		if tc, ok := t.fold.tools.get(id); ok {
			return tc
		}
	}
	if tc, ok := s.history.tools.get(id); ok {
		return tc
	}
	for _, t := range slices.Backward(s.turns) {
		if t == s.turn {
			continue
		}
		if tc, ok := t.fold.tools.get(id); ok {
			return tc
		}
	}
	return nil
}
