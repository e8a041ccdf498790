package acp

import (
	"context"
	"fmt"
	"github.com/acpclient/acp/schema"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// densestKind is a session/update an agent can repeat to make the client
// keep as much as possible per byte it sends: the densest update of one
// kind. line renders the i-th notification.
type densestKind struct {
	name string
	line func(buf []byte, i int) []byte
}

func updateLine(buf []byte, update string) []byte {
	buf = append(buf[:0], `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`...)
	buf = append(buf, update...)
	return append(buf, "}}"...)
}

func repeatJSON(item string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
}

var densestKinds = []densestKind{
	{"message_new_id", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"agent_message_chunk","messageId":"`+strconv.Itoa(i)+`","content":{"type":"text","text":"x"}}`)
	}},
	{"message_alternating", func(b []byte, i int) []byte {
		kind := "agent_message_chunk"
		if i%2 == 1 {
			kind = "agent_thought_chunk"
		}
		return updateLine(b, `{"sessionUpdate":"`+kind+`","content":{"type":"text","text":"x"}}`)
	}},
	{"message_text", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+strings.Repeat("t", 1000)+`"}}`)
	}},
	{"message_block", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"resource_link","uri":"u","name":"n"}}`)
	}},
	{"tool_call_new_id", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"tool_call","toolCallId":"`+strconv.Itoa(i)+`","title":""}`)
	}},
	{"tool_call_update_new_id", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"tool_call_update","toolCallId":"`+strconv.Itoa(i)+`"}`)
	}},
	{"tool_call_update_same_id", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"in_progress"}`)
	}},
	{"tool_call_content", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"tool_call_update","toolCallId":"t","content":`+repeatJSON(`{"type":"content","content":{"type":"text","text":""}}`, 100)+`}`)
	}},
	{"tool_call_locations", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"tool_call_update","toolCallId":"t","locations":`+repeatJSON(`{"path":""}`, 100)+`}`)
	}},
	{"plan", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"plan","entries":`+repeatJSON(`{"content":"","priority":"high","status":"pending"}`, 100)+`}`)
	}},
	{"commands", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"available_commands_update","availableCommands":`+repeatJSON(`{"name":"c","description":""}`, 100)+`}`)
	}},
	{"config_options", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"config_option_update","configOptions":[{"type":"select","id":"m","name":"M","currentValue":"a","options":`+repeatJSON(`{"value":"a","name":"A"}`, 100)+`}]}`)
	}},
	{"usage", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"usage_update","used":1,"size":2}`)
	}},
	{"session_info", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"session_info_update","title":"t"}`)
	}},
	{"mode", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"current_mode_update","currentModeId":"m"}`)
	}},
	{"unknown", func(b []byte, i int) []byte {
		return updateLine(b, `{"sessionUpdate":"x"}`)
	}},
}

// floodRetained sends lines of kind k worth 3×limit bytes into one turn of
// a client with Limits.MaxTurnBytes = limit (or, outside, between turns),
// ends the turn, takes a snapshot (which joins message text), and returns
// the heap in use it grew by.
func floodRetained(tb testing.TB, k densestKind, limit int64, outside bool) int64 {
	c, s, _ := startPipeAgentOpts(tb, &ClientOptions{Limits: Limits{MaxTurnBytes: limit}, CancelGrace: time.Hour})
	var turn *Turn
	if !outside {
		var err error
		if turn, err = s.Prompt(context.Background(), schema.Text("go")); err != nil {
			tb.Fatal(err)
		}
	}
	before := heapInuse()
	var buf []byte
	for i, sent := 0, int64(0); sent < 3*limit; i++ {
		buf = k.line(buf, i)
		c.conn.Load().wire.Dispatch(buf)
		sent += int64(len(buf))
	}
	var keep any
	if outside {
		keep = s.State()
	} else {
		c.conn.Load().wire.Dispatch(promptResponseLine(turn))
		if _, err := turn.Wait(); err != nil {
			tb.Fatal(err)
		}
		keep = turn.State()
	}
	after := heapInuse()
	runtime.KeepAlive(keep)
	runtime.KeepAlive(s)
	c.Close()
	return int64(after) - int64(before)
}

// BenchmarkTurnRetainedDensest floods one turn with the densest update of
// each kind, three times Limits.MaxTurnBytes of them, and reports the heap
// the client kept as a multiple of the limit (retained/limit), and per
// update sent. The outside/ runs flood the time between turns, which
// shares one such budget per session.
func BenchmarkTurnRetainedDensest(b *testing.B) {
	for _, limit := range []int64{1 << 20, 16 << 20} {
		for _, k := range densestKinds {
			b.Run(fmt.Sprintf("%s/limit=%dMiB", k.name, limit>>20), func(b *testing.B) {
				var grown int64
				for b.Loop() {
					grown = floodRetained(b, k, limit, false)
				}
				b.ReportMetric(float64(grown)/float64(limit), "retained/limit")
			})
		}
	}
	for _, k := range densestKinds[:6] {
		b.Run("outside/"+k.name+"/limit=1MiB", func(b *testing.B) {
			var grown int64
			for b.Loop() {
				grown = floodRetained(b, k, 1<<20, true)
			}
			b.ReportMetric(float64(grown)/float64(1<<20), "retained/limit")
		})
	}
}
