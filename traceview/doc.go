// Package traceview renders a recorded ACP wire trace as one self-contained
// HTML page: a timeline per session and turn with the messages, thoughts,
// tool-call cards (their status changes and diffs), permission requests
// with the answer and how long it took, errors and diagnostics, and every
// raw frame on demand.
//
// A trace is the JSONL that acp.TraceWriter writes (`acp --trace FILE`),
// that acptest's Agent.WriteTranscript writes, or a recording of a real
// agent in the same shape (v1 and v2): one object a line,
//
//	{"t":12.5,"dir":">","msg":{...}}    a frame to the agent
//	{"t":13.1,"dir":"<","msg":{...}}    a frame from the agent
//	{"t":14.0,"dir":"!","note":"..."}   a note (stderr, a line that is not JSON)
//
// with t in milliseconds since the trace began (optional: without it the
// page shows no times and says so where a duration would be).
//
// The page needs no network: its CSS and JavaScript are inline, and the
// trace is embedded as JSON and turned into DOM nodes only when a session,
// turn or frame list is expanded, a page at a time, so a trace of 100 000
// updates opens with a few hundred nodes. Everything from the trace is
// inserted as text (never as markup or a link), and the embedded JSON
// escapes '<', '>' and '&', so a hostile trace cannot end the script
// element or run code.
//
// A trace is untrusted input. A line that is not a trace object is
// reported on the page with its line number and error (the first
// Options.MaxMalformed of them; the others are counted), and the rest of
// the trace is rendered as if it were absent. Retained input is bounded by
// [Options] (MaxBytes, MaxLineBytes, MaxMalformed); what is over a bound
// is reported on the page, never silently dropped. The page and the memory
// Render uses grow with the frames kept, each costing its bytes and a
// bounded overhead, and not with what is only counted.
//
// Render is safe to call from several goroutines at once; it keeps no
// state between calls.
package traceview
