// Package acp is a client for the Agent Client Protocol (ACP): it lets an
// editor, an IDE plugin or a test harness drive an AI coding agent that
// speaks ACP over its stdin and stdout.
//
// # Getting started
//
// [Connect] starts the agent ([CommandTransport]; any byte stream works
// with [StreamTransport]) and performs the initialize handshake. A session
// holds a conversation; [Session.Prompt] starts a [Turn]:
//
//	c, err := acp.Connect(ctx, &acp.CommandTransport{Command: exec.Command("my-agent", "--acp")}, nil)
//	if err != nil { ... }
//	defer c.Close()
//	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
//	turn, err := s.Prompt(ctx, schema.Text("Fix the failing test"))
//	for u := range turn.Updates() { ... }       // stream as it happens
//	stop, err := turn.Wait()                    // or just wait
//	fmt.Println(stop, turn.State().Messages)
//
// Nil [ClientOptions] is a safe client: every permission request is
// rejected (never allowed), no files are served and no terminals are run
// (the fs and terminal capabilities are not advertised). Set
// [ClientOptions.Permission] (ready policies: [RejectAll], [AllowAll],
// [RememberAlways], [OneAtATime]), [ClientOptions.FS],
// [ClientOptions.Terminal] and [ClientOptions.Elicitation] to offer more;
// capabilities are advertised only for the handlers that are set. Each
// handler is a func of one request; package workspace has ready ones
// (workspace.FS confines files to the session's directories,
// workspace.Terminals runs commands with bounded output).
//
// # Testing
//
// Package acptest is a scriptable agent, in-process or as a subprocess.
// acptest.Connect(t, agentOpts, clientOpts) returns a *Client connected to
// it in memory and closes both when the test ends. To try a client by hand
// without a real agent, run the demo agent: go run ./examples/demoagent
// (it speaks ACP on stdin and stdout; the acp command in examples/acp runs
// it when given no agent command).
//
// # Sessions and state
//
// Sessions come from [Client.NewSession], [Client.LoadSession],
// [Client.ResumeSession] and [Client.ListSessions]. Every session/update
// the agent sends is folded, as it arrives, into the turn's [TurnState]
// (messages by messageId, thoughts, the tool-call table, the plan) and the
// session's [SessionState] (commands, mode, config options, session info,
// usage). [schema.TextOf] gives the text of a content block and
// [DiffContent.Unified] renders a tool call's diff. The agent's requests
// are answered by the handlers in [ClientOptions]; extension methods go to
// [ClientOptions.ExtMethod].
//
// With [ClientOptions.Subagents] the agent may expose the subagents it
// delegates to as child sessions: a subagent_update on a parent announces
// one, and the client keeps it as a [Session] of its own ([Session.Parent],
// [Session.Children], [Client.Session]), whose turns the agent starts and
// ends by the state it reports ([Turn.AgentStarted]); the parent's
// [SessionState].Subagents holds what it said about each. Messages between
// sessions fold into [TurnState].SessionMessages. A child takes no
// mutation from the client but the cancel it grants ([Session.Cancel];
// the rest fail with [ErrSubagentRestricted]). docs/SUBAGENTS.md has the
// rules and limits.
//
// A UI renders from one feed: every change to a turn's state is an [Event]
// with a sequence number — the agent's updates, a permission request's
// patch to its tool call, the client's own cancelled marks, the end of the
// turn — and folding the events from the first with a [TurnFold] gives
// exactly [Turn.State]. [Turn.Snapshot] and [Turn.Events] let a UI render
// once and then follow; an event that changed a tool call carries the tool
// call as merged after it. [Session.Events] and [SessionFold] do the same
// for the session. Permission and elicitation requests carry their Turn and
// the Seq of the last event before them, so a dialog can follow its card.
//
// Memory follows what the caller keeps: every turn keeps its folded state,
// but only the last ended turn keeps its event log by default
// ([Limits].TurnLogs); [Turn.Release], [Session.Release] and
// [Session.Close] free the rest.
//
// # Ordering
//
// Updates are applied in the order the agent wrote them (one goroutine reads
// the agent's output and folds each update before it reads the next line).
// When [Turn.Wait] returns, every update written before the agent's answer
// is in [Turn.State]; the same holds for every other call (a session/load
// replay is folded before [Client.LoadSession] returns). An agent request —
// a permission prompt, a file read — reaches its handler only after every
// update written before it has been applied, so a permission handler always
// sees the tool call it is about. Updates that arrive outside a turn (before
// session/new answers, between turns, during a load replay) are folded into
// the session's History and kept raw in SessionState.Outside (the latest
// [Limits].OutsideLog of them); updates for a session id not registered yet are
// held and applied when it is (up to [Limits].MaxOrphanSessions ids and
// MaxOrphanBytes bytes; beyond that they are dropped and reported).
//
// # Untrusted agents
//
// The agent is third-party, model-driven code, so every quantity it
// controls is bounded by a limit with a safe default: [ClientOptions].Limits
// (line size, pending requests, queued reply bytes, batch size, queued
// callbacks, retained logs, updates for unknown sessions, the bytes one turn
// folds, MCP-over-ACP connections) and the ready handlers' own options
// (terminal output and count, file sizes). Exceeding
// one never crashes the client or wedges the connection: the agent is
// answered with an error wrapping [schema.ErrLimitExceeded] and the integrator gets
// a [Diagnostic] of kind [DiagLimitExceeded]. No frame the client writes is
// ever invalid, and neither an agent started by [CommandTransport] nor a
// command run by the workspace package's terminals outlives its host
// process.
//
// # Cancellation
//
// [Turn.Cancel], or the end of the context given to [Session.Prompt], does
// what the spec asks of a client: it sends session/cancel at once, marks the
// turn's unfinished tool calls [schema.ToolCallStatusCancelled], answers every
// pending permission request of the session with the cancelled outcome
// (cancelling its handler's context) — and a permission request that comes
// after the cancel too, without calling the handler — and keeps folding what
// the agent still sends into the same turn until the agent answers. The turn then ends with
// [schema.StopReasonCancelled], also when the agent answers end_turn or an error (its
// answer is kept in [TurnState]). If the agent does not answer within
// [ClientOptions.CancelGrace] the turn ends with an error wrapping
// [ErrCancelGrace], and the late answer is ignored. For other calls, the end
// of the call's context abandons it and sends $/cancel_request; when the
// agent withdraws one of its own requests, the handler's context ends and the
// request is answered -32800.
//
// A call never reports [context.Canceled] because the agent died: the agent's
// death fails every pending call, promptly, with an error wrapping
// [ErrConnClosed] and an [*ExitError] carrying the exit status and the tail
// of the agent's stderr.
//
// # Concurrency
//
// A Client, its Sessions and Turns are safe for concurrent use. One turn
// runs at a time per session; [Session.Prompt] returns [ErrTurnInProgress]
// while one runs. Handlers run on goroutines of their own, never on the
// reader, so a handler may block for minutes and may call back into the
// client; several may run at once ([OneAtATime] serializes permission
// dialogs per session). [Turn.Updates] may be ranged over by any number of
// goroutines, each at its own pace; a slow consumer never slows the
// connection. Diagnostics and extension notifications are delivered in order
// on one goroutine of the client's, through a bounded queue
// ([Limits.MaxQueuedEvents]). [Client.Close] waits for the client's
// goroutines (all but that one when called from its callbacks) and ends the
// agent's whole process group.
//
// # Robustness
//
// Blank lines, non-JSON lines, unknown methods, unknown update kinds,
// content types and enum values, and unknown fields never break the
// connection: unknown variants are kept with their raw JSON (and re-encode
// unchanged), and what is skipped is reported to [ClientOptions.Logger] or
// [ClientOptions.OnDiagnostic]. A line longer than
// [Limits.MaxLineBytes] is skipped; only the call it answered fails,
// with [ErrLineTooLong]. A panicking handler becomes a -32603 reply.
// [LogDiagnostics] sends diagnostics to a [log/slog] logger of the
// caller's, with their kind and session as attributes.
//
// # Tracing
//
// [ClientOptions.Observer] watches calls, agent requests and turns, and
// adds W3C trace context (traceparent, tracestate, baggage) to the _meta of
// outgoing requests; the module github.com/acpclient/acp/otelacp maps it
// onto OpenTelemetry spans and metrics, so this package imports no tracing
// library. An unset Observer costs nothing. See docs/TRACING.md.
//
// # Supervision
//
// By default a Client ends with its agent: when the agent exits or the
// connection drops, every call and turn fails with [ErrConnClosed]. With
// [ClientOptions.Restart] set (a [RestartPolicy]; its zero value selects
// the defaults) the client restarts it instead: it connects through its
// Transport again (a new process for a [CommandTransport]), initializes
// and authenticates again, and brings every open session back —
// session/resume where the agent offers it, else session/load, whose
// replay is reconciled with what the session already holds (messages by
// messageId, tool calls by toolCallId, id-less chunks by position), so
// nothing is shown twice; else the session ends with [ErrSessionLost].
// The turn the agent died in ends with [ErrAgentRestarted] and keeps what
// it had folded; its permission dialogs are cancelled; calls made during
// the restart wait for it, bounded by their context; each session's feed
// gets one [EventRestarted]. A crash loop spends the restart budget and
// ends the client with [ErrTooManyRestarts]. What a restart cannot bring
// back — the rest of the interrupted turn, tool side effects the agent
// did not report — is in docs/SUPERVISION.md.
//
// # Unstable features
//
// Some of the API follows schema.unstable.json (pinned in
// schema/sdk-2.4.0/v1; NES, document sync and MCP-over-ACP in the shapes of
// schema/1.21.0, see internal/schemagen/frozen.json) or no schema at all,
// and may change in any release, whatever this module's version says.
// Each such identifier's doc has an "Unstable:" line, api/unstable.txt
// lists them all (checked by internal/apilist, so promising one is a
// reviewed diff), and the Client and Session methods are together in
// client_unstable.go. They are:
//
//   - Next-edit suggestions (NES) and document sync: package
//     github.com/acpclient/acp/nes (nes.Start, and the Suggest, Accept,
//     Reject, Close and DidOpen…DidFocus methods of nes.Session), written
//     over this package's public API. Here stay what initialize carries:
//     [ClientOptions].PositionEncodings, [schema.AgentCapabilities].NES and
//     PositionEncoding, and the NES*Capabilities and PositionEncodingKind
//     types.
//   - MCP-over-ACP: [ClientOptions].MCP ([MCPHandlers]), [schema.MCPServerACP],
//     [schema.MCPCapabilities].ACP, [schema.MessageMCPRequest], [schema.MessageMCPResponse],
//     [schema.MCPError], [schema.MessageMCPNotification] and [Client.NotifyMCP].
//   - Session fork: [Client.ForkSession], [Session.Fork],
//     [schema.ForkSessionRequest], [schema.SessionCapabilities].Fork.
//   - Model selection with the legacy session/set_model: [Session.SetModel],
//     [schema.SessionModelState], [schema.ModelInfo].
//   - Token usage ([schema.PromptResponse].Usage, [schema.Usage]); the error stop reason
//     of a session's activity ([schema.StopReasonError]).
//   - Method names: the unstable block of Method* constants
//     ([schema.MethodSessionFork], [schema.MethodNESStart], [schema.MethodDocumentDidOpen], ...).
//
// Providers (providers/*) are in schema.unstable.json but not implemented
// here; [Client.Call] reaches them, as any method, by name.
package acp
