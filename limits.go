package acp

// Limits bound every quantity the agent controls. The agent is untrusted
// code: in an editor it is third-party and model-driven, while the host runs
// for days. Each limit has a safe default (the zero value of a field selects
// it), and exceeding one never crashes the client, never wedges the
// connection and never silently drops anything a user would see: a request
// over a limit is answered with a JSON-RPC error that names the limit (see
// [ErrLimitExceeded]), and a [Diagnostic] of kind "limit_exceeded" reports
// it locally.
//
// The handlers have limits of their own, on their option structs:
// [TerminalManager] (output ceiling, concurrent terminals) and
// [WorkspaceFS] (file size).
type Limits struct {
	// ---- the wire and the engine ----

	// MaxLineBytes caps one line of the agent's output. Zero means 64 MiB.
	// A longer line is skipped and reported; a call whose response it was
	// fails with ErrLineTooLong; a request on it is answered with an
	// error; the connection lives on.
	MaxLineBytes int

	// ---- folded state and memory ----
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = 64 << 20
	}
	return l
}
