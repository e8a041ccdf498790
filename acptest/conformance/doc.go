// Package conformance grades an ACP agent against the protocol: it drives
// the agent through scripted scenarios — with the acp client, which
// follows every rule and reports what it tolerated, and with raw JSON-RPC
// for what no client sends — and grades each rule of the spec it can
// observe, in each protocol version the agent offers.
//
// Each rule ([Rules]) has an id, the level the spec states it at (MUST,
// SHOULD, MAY), the spec page it comes from, and on failure the frames
// that show it. A rule that needs something no scenario saw (a tool call
// when the model made none, session/load when the agent does not
// advertise it) is reported [NotExercised], never passed. docs/CHECK.md
// lists every rule and what is observed.
//
// From go test:
//
//	func TestConformance(t *testing.T) {
//		conformance.Test(t, conformance.Target{Command: []string{"./my-agent"}},
//			&conformance.Options{Skip: []string{"modes.unknown"}})
//	}
//
// The `acp check` command (examples/acp) runs the same checks from a shell.
//
// # Scenarios
//
// Each scenario opens connections of its own (a process per connection
// for a Command target) and has a deadline (Options.ScenarioTimeout).
// negotiate: initialize offering 1, 2 and 99 on fresh connections.
// probes: an unknown method and invalid params. session: two sessions,
// modes, config options, a prompt of each content type the agent
// advertises. cancel: a prompt cancelled at once, then another. restore:
// in v1 session/list, load, resume and close on new connections, each only
// when advertised; in v2 session/list, resume without and with replayFrom
// {"type":"start"}, close, and a prompt the closed session must refuse.
// tool: a prompt asking for a file tool, read and edit tool calls allowed;
// in v1 the only scenario offering fs, served inside the workspace.
// background (v2, with Prompts.Background): background work followed to
// its end, cancelled when it can be. Every frame of every scenario is then
// checked for framing, response ids, the sessions updates name, tool
// calls, permission requests, capability gating, v2 background lists and
// what comes for a closed session.
//
// # Safety
//
// A run is bounded: a scenario that runs out of time is closed and fails
// the rules it was observing, and after two such scenarios the rest are
// not run, so a hung agent yields a failed report in about two scenario
// timeouts. Processes are shut down in stages when their connection
// closes (stdin closed, then SIGTERM, then SIGKILL to the process group)
// and the temporary workspace is removed. The grader offers no terminal
// capability, serves fs requests only inside the workspace, and rejects
// every permission request except, in the tool scenario, those of tool
// calls of kind read or edit.
//
// # Concurrency
//
// Run may be called concurrently with itself; a Report is plain data.
package conformance
