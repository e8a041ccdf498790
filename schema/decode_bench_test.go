package schema

import "testing"

// The decoding benchmarks of session updates other than the plain text chunk
// (BenchmarkDecodeAgentMessageChunk): the text-chunk fast path that
// decodeNotification takes, and the general decoder on the larger kinds.

var benchNotification = []byte(`{"sessionId":"sess-1","update":` + string(benchChunk) + `}`)

// BenchmarkDecodeNotificationTextChunk decodes a session/update whose update
// is a bare text chunk, through the one-pass path of decodeNotification.
func BenchmarkDecodeNotificationTextChunk(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchNotification)))
	for b.Loop() {
		_, u, err := decodeNotification(benchNotification)
		if err != nil || u == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeNotificationTextChunkPlain decodes the same notification
// the way decodeNotification would without its text-chunk path: the
// envelope is split, then the update takes the general decoder. It is the
// baseline that path has to beat to stay.
func BenchmarkDecodeNotificationTextChunkPlain(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchNotification)))
	for b.Loop() {
		_, upd, _, ok := splitNotification(benchNotification)
		if !ok {
			b.Fatal("not split")
		}
		u, err := decodeUpdate(upd)
		if err != nil || u == nil {
			b.Fatal(err)
		}
	}
}

var benchToolCall = []byte(`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Edit main.go","kind":"edit","status":"pending",` +
	`"content":[{"type":"diff","path":"/p/main.go","oldText":"a\nb\n","newText":"a\nc\n"},{"type":"content","content":{"type":"text","text":"done"}}],` +
	`"locations":[{"path":"/p/main.go","line":2}],"rawInput":{"path":"/p/main.go","edits":[{"old":"b","new":"c"}]}}`)

// BenchmarkDecodeToolCall decodes a tool_call with a diff, a content item,
// a location and raw input.
func BenchmarkDecodeToolCall(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchToolCall)))
	for b.Loop() {
		u, err := decodeUpdate(benchToolCall)
		if err != nil || u == nil {
			b.Fatal(err)
		}
	}
}

var benchToolCallUpdate = []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed",` +
	`"content":[{"type":"terminal","terminalId":"term_1"}],"rawOutput":{"exitCode":0}}`)

// BenchmarkDecodeToolCallUpdate decodes a tool_call_update that completes a
// call with terminal output.
func BenchmarkDecodeToolCallUpdate(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchToolCallUpdate)))
	for b.Loop() {
		u, err := decodeUpdate(benchToolCallUpdate)
		if err != nil || u == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeToolCallUpdateWalk decodes the status and title update
// of BenchmarkFoldV1V2 (the root package's) with the one-walk decoder.
//
//	go test -run '^$' -bench DecodeToolCallUpdateWalk -benchmem ./schema/
func BenchmarkDecodeToolCallUpdateWalk(b *testing.B) {
	body := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, ok := decodeToolCallUpdate(body); !ok {
			b.Fatal("not taken")
		}
	}
}
