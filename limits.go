package acp

import (
	"github.com/acpclient/acp/schema"
	"math"
)

// Limits bound every quantity the agent controls. The agent is untrusted
// code: in an editor it is third-party and model-driven, while the host runs
// for days. Each limit has a safe default (the zero value of a field selects
// it), and exceeding one never crashes the client, never wedges the
// connection and never silently drops anything a user would see: a request
// over a limit is answered with a JSON-RPC error that names the limit (see
// [schema.ErrLimitExceeded]), and a [Diagnostic] of kind "limit_exceeded" reports
// it locally.
//
// The ready handlers of package workspace have limits of their own, on
// their option structs: workspace.Terminals (output ceiling, concurrent
// terminals) and workspace.FS (file size, scan length).
type Limits struct {
	// ---- the wire and the engine ----

	// MaxLineBytes caps one line of the agent's output. Zero means 64 MiB.
	// A longer line is skipped and reported; a call whose response it was
	// fails with ErrLineTooLong; a request on it is answered with an
	// error; the connection lives on. The line's id is recovered by a
	// small scanner; if it is not a valid JSON-RPC id exactly as written
	// (a number such as 01 or 1., a string over 256 bytes), nothing is
	// answered or failed for the line — no call of the client has such an
	// id — and only the diagnostic reports it.
	MaxLineBytes int

	// MaxPendingRequests caps the agent requests being served at once
	// (permission prompts, file reads, terminal calls, extension methods:
	// each holds a goroutine or two until it is answered). Zero means 1024.
	// A request over the cap is answered at once, by the reader, with an
	// error naming the limit; no handler runs for it.
	MaxPendingRequests int

	// MaxQueuedWriteBytes caps the bytes of replies queued for an agent
	// that is slow to read its input. Zero means 32 MiB. When the queue
	// is full, the goroutine serving an agent request waits before it
	// hands its reply over (and handlers with large replies — file reads,
	// terminal output — wait before they start: at most 8 run at once,
	// fewer while replies are queued), so an
	// agent that stops reading stops being served rather than growing the
	// client's memory. The client's own calls and session/cancel never
	// wait for it: they are queued at once (session/cancel ahead of
	// everything else). The reader waits before it queues a refusal of its
	// own (see MaxPendingRequests) while the cap is reached, so an agent
	// that floods requests and reads nothing stops being read. A single
	// reply larger than the cap is still sent when nothing else is queued.
	MaxQueuedWriteBytes int64

	// MaxBatchItems caps the items of one JSON-RPC batch line. Zero means
	// 128. Items past the cap are not processed: requests among them are
	// answered with an error, and one diagnostic counts the rest.
	MaxBatchItems int

	// MaxQueuedEvents caps the callbacks (OnDiagnostic and Logger
	// diagnostics, ExtNotification, Elicitation.Complete) queued for the
	// client's callback goroutine while a callback is slow. Zero means
	// 4096. The queued callbacks' notifications may also hold at most
	// 64 MiB in all (a fixed bound; an empty queue still takes one callback,
	// however large). Past either cap, new ones are dropped and counted; once the
	// queue has room again, a diagnostic of kind "limit_exceeded" says how
	// many of each were dropped.
	MaxQueuedEvents int

	// ---- folded state and memory ----

	// TurnLogs is how many ended turns of a session keep their log: their
	// events (Turn.Events) and their updates (Turn.Updates). Zero means 1, the turn that ended last; a
	// negative value keeps none; the running turn always keeps its log. A
	// turn's folded state is kept whatever this says, until Turn.Release,
	// Session.Release, Session.Close or MaxEndedTurnBytes. A reader that asks for released
	// events gets an EventReleased holding the turn's state.
	TurnLogs int

	// SessionLog is how many of a session's most recent events
	// (Session.Events) are kept. Zero means 4096. The log also keeps at
	// most half MaxTurnBytes of what its events hold (counted as
	// MaxTurnBytes counts it): past that the oldest go, down to a quarter.
	// A reader that asks for older ones gets an EventReleased holding the
	// session's state, then the events after it.
	SessionLog int

	// MaxTurnBytes bounds what one turn can make the client keep. Each
	// session/update notification and permission request (whose toolCall
	// is folded too) applied to it counts what it makes the client retain
	// — the decoded update, its log entries, and what it creates in the
	// fold: a message, a tool call and its index entry, the merged tool
	// call its event keeps, the message's text — or its length on the
	// wire if that is more; the local marks of a cancelled turn's tool
	// calls count too. So a plain text chunk (a text block with no
	// annotations or _meta, logged as a place in its message's text)
	// costs 16 bytes and twice its text (kept as received and joined for
	// snapshots), unless its notification was longer, and a tiny update that creates a tool
	// call costs several hundred bytes whatever its length: any sequence of
	// updates keeps at most about three times the limit. Zero means
	// 256 MiB. When a turn crosses it, the turn is cancelled as by Turn.Cancel, with
	// a "limit_exceeded" diagnostic; the agent may wind down until the turn
	// has sent twice the limit, and past that what would grow the state is
	// not folded: messages, thoughts, tool calls, permission requests'
	// tool calls, compaction summary chunks, unknown kinds (reported at the
	// first, counted when the turn ends). Kinds that replace part of the
	// session's state — mode, commands, config options, session info,
	// usage, plans, notices, compaction status — are still applied to the
	// session (not to the turn; their events carry Event.OverBudget).
	// What arrives outside turns (a load replay, updates between turns, a
	// prompt sent with Client.Call) shares one such budget per session,
	// counted from its start and never reset: past the limit it no longer
	// grows History or Outside, under the same rule, and diagnostics count
	// what was dropped (at 1, 2, 4, 8...).
	MaxTurnBytes int64

	// MaxEndedTurnBytes bounds what a session's ended turns keep, counted
	// as MaxTurnBytes counts it (what each folded update was charged), over
	// the turns not released. Zero means twice MaxTurnBytes: the most one
	// turn can keep. When a turn ends and the session's ended turns keep
	// more, the oldest are released, as by Turn.Release (their outcome
	// stays, their state goes, they leave Session.Turns), until they keep
	// no more — the turn that ended last always stays. Each release is an
	// EventTurnReleased in the session's feed, and a "limit_exceeded"
	// diagnostic counts them. Ordinary turns are far below it; a UI that
	// keeps many long turns raises it.
	MaxEndedTurnBytes int64

	// OutsideLog is how many of the updates that arrived outside turns
	// (SessionState.Outside: a session/load replay, updates between turns)
	// are kept raw. Zero means 65536. When Outside would hold twice that
	// many, the oldest are dropped down to OutsideLog, and an
	// EventOutsideTrimmed in the session's feed says how many; so once
	// that many have arrived it holds between OutsideLog and twice as
	// many. The folded History of those updates is kept whole (up to
	// MaxTurnBytes), its items numbered in the order they started
	// (Message.Order, ToolCallState.Order), so a UI renders a long replay
	// from History; one that needs the raw updates of a longer replay
	// raises the limit.
	OutsideLog int

	// MaxOrphanSessions and MaxOrphanBytes bound the updates kept for
	// session ids this client does not know yet (agents announce a session
	// before session/new answers): at most that many ids, and that many
	// bytes of notifications in all. Zero means 64 ids and 4 MiB. An update
	// over either limit is dropped and reported as a "limit_exceeded"
	// Diagnostic naming the session id.
	MaxOrphanSessions int
	MaxOrphanBytes    int

	// MaxSubagentSessions caps the child sessions (subagents) kept on the
	// client at once, over all parents and nesting levels. Zero means 64.
	// Each child is a Session of its own, bounded as any session is (its
	// turns by MaxTurnBytes and MaxEndedTurnBytes, its history and log
	// likewise); this bounds how many there are. A subagent_update
	// announcing one more is dropped (not folded into the parent) and
	// reported as a "limit_exceeded" diagnostic; the child's later traffic
	// is then for an unknown session. Releasing a child (Session.Release)
	// frees its slot.
	MaxSubagentSessions int

	// MaxSubagentBytes bounds what the child sessions under one session
	// the client opened (its children, theirs, and so on) make the client
	// keep together, counted as MaxTurnBytes counts it (each child's own
	// turns and history are bounded by MaxTurnBytes too). Zero means
	// MaxTurnBytes. Past it, what would grow a child's state is not
	// folded (messages, thoughts, tool calls, permission requests' tool
	// calls, unknown kinds); kinds that replace part of its state are
	// still applied, as past MaxTurnBytes. A "limit_exceeded" diagnostic
	// reports it at the 1st, 2nd, 4th... drop. Releasing a child
	// (Session.Release) gives back what it was charged.
	MaxSubagentBytes int64

	// ---- MCP-over-ACP ----

	// MaxMCPRequests caps the inner MCP requests (mcp/message) active at
	// once, over every server the client declared: each holds a goroutine
	// running MCPHandlers.Message and what it allocates, until it returns,
	// even after the agent withdrew the request. Zero means 64 (the
	// TypeScript SDK's default per server). Over the cap, mcp/message is
	// answered with CodeMCPLimitExceeded, an error naming the limit
	// (wrapping ErrLimitExceeded), and a "limit_exceeded" diagnostic, and
	// Message does not run.
	MaxMCPRequests int

	// ---- elicitation ----

	// MaxElicitationPatternBytes caps the regular expressions ("pattern")
	// of one elicitation form, all its string fields together: they may
	// hold this many bytes and compile to this many instructions of Go's
	// regexp (estimated from above: "x{0,1000}" is a few bytes and a
	// thousand instructions). Zero means 4096. Matching costs the answer's
	// length times the program's size, so this bounds what checking an
	// answer costs. A form over it is refused before the handler runs: the
	// agent is answered with an error naming the limit (wrapping
	// ErrLimitExceeded) and a "limit_exceeded" diagnostic reports it.
	// Patterns are compiled once per request, when it arrives, and
	// ElicitationRequest.Accept and Validate check against them.
	MaxElicitationPatternBytes int
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = 64 << 20
	}
	if l.MaxPendingRequests <= 0 {
		l.MaxPendingRequests = 1024
	}
	if l.MaxQueuedWriteBytes <= 0 {
		l.MaxQueuedWriteBytes = 32 << 20
	}
	if l.MaxBatchItems <= 0 {
		l.MaxBatchItems = 128
	}
	if l.MaxQueuedEvents <= 0 {
		l.MaxQueuedEvents = 4096
	}
	if l.TurnLogs == 0 {
		l.TurnLogs = 1
	}
	if l.SessionLog <= 0 {
		l.SessionLog = 4096
	}
	if l.MaxTurnBytes <= 0 {
		l.MaxTurnBytes = 256 << 20
	}
	if l.MaxEndedTurnBytes <= 0 {
		l.MaxEndedTurnBytes = math.MaxInt64
		if l.MaxTurnBytes <= math.MaxInt64/2 {
			l.MaxEndedTurnBytes = 2 * l.MaxTurnBytes
		}
	}
	if l.OutsideLog <= 0 {
		l.OutsideLog = 1 << 16
	}
	if l.MaxOrphanSessions <= 0 {
		l.MaxOrphanSessions = 64
	}
	if l.MaxOrphanBytes <= 0 {
		l.MaxOrphanBytes = 4 << 20
	}
	if l.MaxSubagentSessions <= 0 {
		l.MaxSubagentSessions = 64
	}
	if l.MaxSubagentBytes <= 0 {
		l.MaxSubagentBytes = l.MaxTurnBytes
	}
	if l.MaxMCPRequests <= 0 {
		l.MaxMCPRequests = 64
	}
	if l.MaxElicitationPatternBytes <= 0 {
		l.MaxElicitationPatternBytes = schema.DefaultElicitationPatternBytes
	}
	return l
}
