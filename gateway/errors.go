package gateway

import "errors"

// Why a connection closed, as Options.OnClose gets it (test with
// errors.Is). The reason is also logged, sent as the WebSocket close
// reason, and kept for a while so that a later request naming the
// connection gets it in its 404 body.
var (
	// ErrStalled: the client took none of the output waiting for it for
	// Options.StallTimeout.
	ErrStalled = errors.New("gateway: the client did not read its output")
	// ErrIdle: no request and no open stream for Options.IdleTimeout.
	ErrIdle = errors.New("gateway: the connection was idle")
	// ErrTooManySessions: the agent sent a message for a session beyond
	// Options.MaxSessions.
	ErrTooManySessions = errors.New("gateway: too many sessions on the connection")
	// ErrAgentMessageTooLarge: an agent output line exceeded
	// Options.MaxMessageBytes.
	ErrAgentMessageTooLarge = errors.New("gateway: the agent sent a message over the size limit")
	// ErrAgentStalled: a client message was not written to the agent's
	// stdin within Options.AgentWriteTimeout (the agent does not read it).
	ErrAgentStalled = errors.New("gateway: the agent did not read its input")
	// ErrAgentExited: the agent's output ended (it exited or closed stdout).
	ErrAgentExited = errors.New("gateway: the agent exited")
	// ErrClientClosed: the client sent DELETE or closed its WebSocket.
	ErrClientClosed = errors.New("gateway: the client closed the connection")
	// ErrInitializeTimeout: the connection's initialize was not answered
	// within Options.InitializeTimeout: the agent did not answer it, or a
	// WebSocket client never sent it.
	ErrInitializeTimeout = errors.New("gateway: initialize was not answered in time")
	// ErrShutdown: the gateway is shutting down.
	ErrShutdown = errors.New("gateway: shutting down")
)
