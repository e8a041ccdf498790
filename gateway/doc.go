// Package gateway serves stdio ACP agents to remote clients on the
// endpoint of the ACP RFD "Streamable HTTP & WebSocket transport", both
// profiles on one URL:
//
//   - Streamable HTTP: POST a JSON-RPC message; initialize starts a
//     connection (an agent process) and answers 200 with the agent's
//     response and Acp-Connection-Id; every later POST answers 202 and the
//     agent's messages arrive on SSE streams opened with GET: the
//     connection's (Acp-Connection-Id) and one per session (plus
//     Acp-Session-Id). DELETE ends the connection.
//   - WebSocket: GET with Upgrade: websocket starts a connection (the 101
//     carries Acp-Connection-Id); one JSON-RPC message per text frame each
//     way, initialize first.
//
// Unstable: the RFD is at stage Active, not yet part of the protocol;
// where its prose and the TypeScript SDK 2.4.0 (the one shipped peer)
// differ, the gateway follows the SDK's wire, and each such place says so.
//
// Each ACP connection has its own agent, started by a [DialFunc] (for a
// command, [CommandAgent]) and shut down when the connection ends: DELETE,
// the WebSocket's close, the agent's exit, a limit, the idle reaper, or
// [Gateway.Shutdown]. The gateway reads only what it routes by: a
// message's id, method and params.sessionId. A response goes to the
// stream of the request it answers (session/new's and session/load's to
// the connection stream, a session's requests' to the session's), an agent
// message whose params carry a sessionId to that session's stream, the
// rest to the connection stream.
//
// The gateway is safe on loopback by default ([Options]' zero value):
// without a Token it serves only loopback Host names (localhost,
// 127.0.0.0/8, ::1), so a web page cannot reach it through DNS rebinding;
// Origin is checked; agents alive, sessions, pending requests, message
// sizes, POST bodies in flight and buffered output are bounded; idle
// connections are reaped; slow bodies and agents that do not read their
// input time out. It does not authenticate unless Options.Token is
// set: do that, or authenticate in front of it, off loopback. [NewServer]
// gives an http.Server with the timeouts a public listener needs.
package gateway
