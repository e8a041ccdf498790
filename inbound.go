package acp

import (
	"context"
	"errors"
)

// inbound tracks one agent→client request from the moment the reader sees
// it until its handler returns. The wire holds it as an engine.Request, so
// a $/cancel_request that arrives before jrpc2 has started the handler
// still finds something to cancel.
type inbound struct {
	id     string
	method string
	ctx    context.Context
	cancel context.CancelCauseFunc
	// session is the session a permission request belongs to (set on the
	// reader goroutine before jrpc2 sees the request).
	session *Session
	// perm is a permission request as placed in its turn by the reader.
	perm *PermissionRequest
	// turn and seq place an elicitation request in its session's stream.
	turn *Turn
	seq  uint64
}

// Withdraw implements engine.Request: the agent withdrew the request with
// $/cancel_request.
func (in *inbound) Withdraw() { in.cancel(errWithdrawn) }

// errWithdrawn is the cancellation cause of a handler whose request the agent
// withdrew with $/cancel_request.
var errWithdrawn = errors.New("acp: the agent withdrew the request")
