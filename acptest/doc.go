// Package acptest provides a scriptable ACP agent for tests of ACP
// clients, the way net/http/httptest provides servers for tests of HTTP
// clients.
//
// An [Agent] speaks the Agent Client Protocol (newline-delimited JSON-RPC
// 2.0) as an agent: it answers initialize, authenticate, the session/*
// methods and extension methods, runs a turn script for each
// session/prompt, and makes the agent's own requests to the client
// (permission, fs, terminal, anything). It sends what a script gives it as
// is — acp's typed values, acptest's builders or raw objects — so it can
// test any client, including one that gets the protocol wrong.
//
// [Connect] gives a test a connected [acp.Client] and the agent in one call:
//
//	c, agent := acptest.Connect(t, &acptest.Options{
//		OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
//			t.Say("you said: " + t.PromptText())
//			return schema.StopReasonEndTurn, nil
//		},
//	}, nil) // the test's cleanup closes both
//
// For any other client, serve the agent over pipes:
//
//	a := acptest.New(opts)
//	defer a.Close()
//	fromAgent, toAgent := a.Pipe() // the client's ends of the agent's stdout and stdin
//
// The same agent runs as a real subprocess by re-executing the test binary
// (see [Register], [MainIfAgent], [Command]), and [Replay] builds an agent
// that replays a recorded transcript of a real one. Package
// github.com/acpclient/acp/acptest/demo is a ready-made agent built on
// this one: the SDK's demo, with sessions kept on disk.
//
// # Concurrency
//
// Each connection reads on one goroutine and never writes on it. Every
// client request is answered on its own goroutine, so scripts may block —
// on the client's answer to a permission request, on [Turn.Cancelled], on
// anything — while the agent keeps answering other requests and noticing
// session/cancel. Notifications from the client are handled on the read
// goroutine in arrival order. [Agent.Close] and the end of a connection
// wait for every script; scripts should return when [Conn.Context] is done.
//
// # Ordering
//
// Frames are written whole, one at a time, in the order of the calls that
// write them; a call returns once its frame is written. All frames a turn
// script writes therefore precede its prompt response, and updates sent by
// OnNewSession or replayed by session/load precede those responses.
// Responses to requests the client sends without waiting may come in any
// order, as with real agents.
//
// # Faults
//
// Scripts can misbehave on purpose: [Conn.Junk] (non-JSON or blank
// lines), [Conn.Raw] (arbitrary bytes: split, oversized or unterminated
// frames; see [HugeFrame]), [Conn.Exit] and [Conn.Crash] (the stream or
// process dies), [Conn.Hang] and [NeverAnswer] (no reply), [Turn.AfterTurn]
// (updates after the prompt response), [Session.Update] with anything
// (unknown update kinds, enum values, tool-call ids), [Conn.FloodStderr],
// and Options.CRLF, StderrFlood, IgnoreStdinEOF and SpawnGrandchild.
//
// A hostile agent attacks the client's resources; these faults let a test
// check that a client stays usable and bounded: [Conn.StartWithID] and
// [Conn.RequestWithID] (requests with any id, even invalid or shared with
// a pending request), [Conn.Batch] (JSON-RPC batch lines; see [BatchItem]),
// [Conn.OversizedLine] (a line of any size carrying any id),
// [Conn.FloodUpdates] (optionally a new messageId per chunk),
// [Conn.OrphanUpdates] (updates for sessions nobody opened),
// [Conn.FloodRequests] (requests never cancelled), and [Stall] (the agent
// stops reading its input, so the client's writes back up).
//
// # Transcript
//
// Every frame in and out is recorded in the format of the real-agent
// recordings ({"t": ms, "dir": ">"|"<"|"!", "msg"|"note": …}); see
// [Agent.Transcript], [Agent.WriteTranscript] and [Agent.Received].
package acptest
