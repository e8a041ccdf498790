package acp

import (
	"bytes"
	"context"
	"github.com/acpclient/acp/schema"
	"runtime"
	"testing"
)

// The same updates in v1 and v2 form, for BenchmarkFoldV1V2.
var (
	benchChunkLineID = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hello, this is a streamed token or two of the answer"}}}}`)
	benchToolLine    = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","title":"Edit a.go"}}}`)
	benchRunningLine = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"running"}}}`)
	benchIdleLine    = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`)
)

// BenchmarkFoldV1V2 runs one update line through the reader's path
// (dispatch → decode → fold) with a v1 and a v2 client, in one run, so
// their allocations per update compare: a text chunk with a messageId (the
// bulk of a turn, the same line in both versions) and a tool_call_update
// (v2: an upsert decoded from the generated wire type).
//
//	go test -run '^$' -bench BenchmarkFoldV1V2 -benchmem .
func BenchmarkFoldV1V2(b *testing.B) {
	for _, kind := range []struct {
		name string
		line []byte
	}{{"chunk", benchChunkLineID}, {"tool", benchToolLine}} {
		for _, v := range []int{1, 2} {
			b.Run(kind.name+"/v"+string(rune('0'+v)), func(b *testing.B) {
				benchFoldLine(b, v, kind.line)
			})
		}
	}
}

func benchFoldLine(b *testing.B, version int, line []byte) {
	var c *Client
	var t *Turn
	var a *pipeAgent
	newRound := func() {
		if c != nil {
			if version == 2 {
				c.conn.Load().wire.Dispatch(benchIdleLine)
			} else {
				c.conn.Load().wire.Dispatch(promptResponseLine(t))
			}
			if _, err := t.Wait(); err != nil {
				b.Fatal(err)
			}
			a.stop() // and drop it: a round's state must not outlive it
		}
		var s *Session
		c, s, a = startPipeAgentOpts(b, &ClientOptions{ProtocolVersion: version})
		if c.InitializeResponse().ProtocolVersion != version {
			b.Fatalf("negotiated %d", c.InitializeResponse().ProtocolVersion)
		}
		var err error
		if t, err = s.Prompt(context.Background(), schema.Text("go")); err != nil {
			b.Fatal(err)
		}
		if version == 2 {
			c.conn.Load().wire.Dispatch(benchRunningLine)
		}
		runtime.GC()
	}
	newRound()
	line = bytes.Clone(line)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	const round = 64 << 10
	n := 0
	for b.Loop() {
		if out := c.conn.Load().wire.Dispatch(line); out != nil {
			b.Fatalf("a session/update went to jrpc2: %s", out)
		}
		if n++; n%round == 0 {
			b.StopTimer()
			newRound()
			b.StartTimer()
		}
	}
	b.StopTimer()
}
