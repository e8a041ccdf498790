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

	// TurnLogs is how many ended turns of a session keep their log: their
	// events (Turn.Events), their updates (Turn.Updates,
	// TurnState.Updates). Zero means 1, the turn that ended last; a
	// negative value keeps none; the running turn always keeps its log. A
	// turn's folded state is kept whatever this says, until Turn.Release,
	// Session.Release or Session.Close. A reader that asks for released
	// events gets an EventReleased holding the turn's state.
	TurnLogs int

	// SessionLog is how many of a session's most recent events
	// (Session.Events) are kept. Zero means 4096. A reader that asks for
	// older ones gets an EventReleased holding the session's state, then
	// the events after it.
	SessionLog int

	// MaxOrphanSessions and MaxOrphanBytes bound the updates kept for
	// session ids this client does not know yet (agents announce a session
	// before session/new answers): at most that many ids, and that many
	// bytes of notifications in all. Zero means 64 ids and 4 MiB. An update
	// over either limit is dropped and reported as a "limit_exceeded"
	// Diagnostic naming the session id.
	MaxOrphanSessions int
	MaxOrphanBytes    int
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = 64 << 20
	}
	if l.TurnLogs == 0 {
		l.TurnLogs = 1
	}
	if l.SessionLog <= 0 {
		l.SessionLog = 4096
	}
	if l.MaxOrphanSessions <= 0 {
		l.MaxOrphanSessions = 64
	}
	if l.MaxOrphanBytes <= 0 {
		l.MaxOrphanBytes = 4 << 20
	}
	return l
}
