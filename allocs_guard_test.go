package acp

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
)

// The allocation guard: counts, not times, so it holds on a loaded
// machine. It fails when the fold path allocates more per update than it
// does now: a plain text chunk not at all, a tool_call_update no more than
// maxToolUpdateAllocs, a whole mixed turn no more than maxTurnAllocs per
// update. When a change lowers a count, lower its bound here in the same
// commit, so the gain cannot be lost silently either.
//
// The race detector changes allocation counts (sync.Pool drops items at
// random under it), so the guard skips itself in race builds; test.sh runs
// it once more without -race.
const (
	// maxToolUpdateAllocs is benchToolLine's count (a status and title
	// update of a known call, v1 and v2 alike), measured 2026-12-02: 16,
	// then 14 once a tool call without _meta stopped allocating the
	// terminal convention's decoded form (decodeAgentTerminalMeta), then
	// 5 once schema decoded such an update in one walk
	// (decodeToolCallUpdate) instead of through encoding/json, then 4 once
	// the update's strings went into its own allocation (toolUpdateBox):
	// then 3 once the merged ToolCallState and its event's log entry
	// were allocated as one (toolSnap), then 2 once the notification's
	// session id was the session's own string (decodePeeked's known): the
	// update with its strings, and the state with its entry.
	maxToolUpdateAllocs = 2
	// maxTurnAllocs bounds a whole turn per update, counted the way the
	// bench/ harness counts its turn A: every allocation in the process
	// from the prompt until Turn.Updates has yielded the last update, over
	// the harness's mix (100 text chunks per tool call, a tool_call and a
	// tool_call_update each). Measured 1.96, then 1.92 with
	// the tool calls' two allocations fewer, then 1.73 once schema decoded
	// the mix's tool_call_update (content and rawOutput) in one walk, then
	// 0.76 once Updates made a batch's text chunks in slabs
	// (fold_textbatch.go) instead of one allocation each, then 0.53 once
	// schema decoded the tool_call in one walk (decodeToolCall), then 0.38
	// once a content item of one text block was read in place
	// (plainToolText), then 0.29 once an escaped chunk's text decoded on
	// the stack (jsonscan.AppendUnquote) instead of into a string of its
	// own, then 0.276 with a tool call's state and log entry in one
	// allocation (toolSnap), then 0.256 with the session id of an update
	// the session's own string, then 0.247 with one slice for every batch
	// of an Updates iteration (TestUpdatesAllocsPerChunk). What is left is mostly the tool calls' merged states, entries
	// and strings, and the messages' growing first blocks; the margin
	// absorbs the amortized growth of the turn's log, not one more
	// allocation in every tenth chunk (which would add 0.1).
	maxTurnAllocs = 0.29
)

func skipAllocGuardUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; test.sh runs this guard without -race")
	}
}

// lineAllocs is the allocations per Dispatch of line into a running turn
// of a fresh client speaking version.
func lineAllocs(t *testing.T, version int, line []byte) float64 {
	t.Helper()
	c, s, _ := startPipeAgentOpts(t, &ClientOptions{ProtocolVersion: version})
	if got := c.InitializeResponse().ProtocolVersion; got != version {
		t.Fatalf("negotiated %d, want %d", got, version)
	}
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.conn.Load().wire
	if version == 2 {
		w.Dispatch(benchRunningLine)
	}
	line = bytes.Clone(line)
	w.Dispatch(line) // the first of a kind may set up the message or the call
	allocs := testing.AllocsPerRun(2000, func() {
		if out := w.Dispatch(line); out != nil {
			t.Fatalf("a session/update went to jrpc2: %s", out)
		}
	})
	if version == 2 {
		w.Dispatch(benchIdleLine)
	} else {
		w.Dispatch(promptResponseLine(turn))
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	return allocs
}

func TestFoldAllocsTextChunk(t *testing.T) {
	skipAllocGuardUnderRace(t)
	for _, tc := range []struct {
		name    string
		version int
		line    []byte
	}{
		{"v1", 1, benchChunkLine},
		{"v1/messageId", 1, benchChunkLineID},
		{"v2", 2, benchChunkLineID},
		// An escaped text decodes on the stack (applyPlainText).
		{"v1/escaped", 1, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a line\n\"quoted\" caf\u00e9\tend"}}}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lineAllocs(t, tc.version, tc.line); got != 0 {
				t.Errorf("a plain text chunk allocates %v times, want 0", got)
			}
		})
	}
}

func TestFoldAllocsToolCallUpdate(t *testing.T) {
	skipAllocGuardUnderRace(t)
	for _, version := range []int{1, 2} {
		t.Run("v"+strconv.Itoa(version), func(t *testing.T) {
			got := lineAllocs(t, version, benchToolLine)
			t.Logf("tool_call_update: %v allocs", got)
			if got > maxToolUpdateAllocs {
				t.Errorf("a tool_call_update allocates %v times, want at most %d", got, maxToolUpdateAllocs)
			}
		})
	}
}

func TestFoldAllocsWholeTurn(t *testing.T) {
	skipAllocGuardUnderRace(t)
	const chunks, tools = 20_000, 200
	wire := renderMixedTurn(chunks, tools)
	want := chunks + 2*tools
	_, s, a := startPipeAgent(t)
	a.answer(wire)
	turnOnce := func() (allocs uint64, updates int) {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		turn, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		for range turn.Updates() {
			updates++
		}
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs, updates
	}
	turnOnce() // the first turn sizes pools and buffers that later ones reuse
	// The lowest of three: a stray allocation elsewhere in the process (a
	// test helper's goroutine, the runtime) only ever adds.
	best := -1.0
	for range 3 {
		allocs, n := turnOnce()
		if n != want {
			t.Fatalf("the turn yielded %d updates, want %d", n, want)
		}
		if per := float64(allocs) / float64(n); best < 0 || per < best {
			best = per
		}
	}
	t.Logf("whole turn: %.3f allocs/update (%d chunks, %d tool calls)", best, chunks, tools)
	if best > maxTurnAllocs {
		t.Errorf("the whole turn allocates %.3f times per update, want at most %.2f", best, maxTurnAllocs)
	}
}

// renderMixedTurn renders the bench/ harness's turn A in miniature (see
// bench/writer.go): n text chunks, one in ten with an escaped newline, and
// a tool_call with rawInput and locations plus a tool_call_update with
// content after every n/tools chunks.
func renderMixedTurn(n, tools int) []byte {
	var b []byte
	every := n / tools
	tool := 0
	for i := range n {
		b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"tok`...)
		b = strconv.AppendInt(b, int64(i), 10)
		if i%10 == 9 {
			b = append(b, ` end of line\n`...)
		} else {
			b = append(b, " and a word"...)
		}
		b = append(b, "\"}}}}\n"...)
		if i%every == every-1 && tool < tools {
			id, n := "call_"+strconv.Itoa(tool), strconv.Itoa(tool)
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"`+id+`","title":"Read src/file`+n+`.go","kind":"read","status":"pending","rawInput":{"path":"/work/src/file`+n+`.go"},"locations":[{"path":"/work/src/file`+n+`.go"}]}}}`+"\n"...)
			b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"`+id+`","status":"completed","content":[{"type":"content","content":{"type":"text","text":"package main\n\nfunc main() {}\n"}}],"rawOutput":{"bytes":31}}}}`+"\n"...)
			tool++
		}
	}
	return b
}

// chunkReaders are the iterations that make each plain text chunk anew,
// for a reader that may keep it: each calls f with every message chunk.
var chunkReaders = []struct {
	name string
	each func(t *Turn, f func(schema.Update))
}{
	{"Updates", func(t *Turn, f func(schema.Update)) {
		for u := range t.Updates() {
			if _, ok := u.(*schema.AgentMessageChunk); ok {
				f(u)
			}
		}
	}},
	{"Events", func(t *Turn, f func(schema.Update)) {
		for ev := range t.Events(context.Background(), 0) {
			if _, ok := ev.Update.(*schema.AgentMessageChunk); ok {
				f(ev.Update)
			}
		}
	}},
}

// Turn.Updates and Turn.Events make each plain text chunk anew (a reader
// may keep it), textSlab of them in one allocation, and nothing else a
// batch: the slice a batch's updates are made into is the iteration's,
// used again batch after batch, not one more allocation every logChunk
// entries.
func TestUpdatesAllocsPerChunk(t *testing.T) {
	skipAllocGuardUnderRace(t)
	const n = 20_000
	_, s, a := startPipeAgent(t)
	a.answer(renderChunks(n, 24))
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, r := range chunkReaders {
		t.Run(r.name, func(t *testing.T) {
			// The lowest of five: a stray allocation elsewhere in the
			// process (a test helper's goroutine, the runtime's own at a
			// collection) only ever adds.
			var allocs uint64
			for i := range 5 {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				got := 0
				r.each(turn, func(schema.Update) { got++ })
				runtime.ReadMemStats(&m1)
				if got != n {
					t.Fatalf("%s yielded %d chunks, want %d", r.name, got, n)
				}
				if a := m1.Mallocs - m0.Mallocs; i == 0 || a < allocs {
					allocs = a
				}
			}
			// What a reader keeps stays as it was yielded, batch after
			// batch.
			var kept []schema.Update
			r.each(turn, func(u schema.Update) { kept = append(kept, u) })
			for i, u := range kept {
				text := u.(*schema.AgentMessageChunk).Content.(*schema.TextContent).Text
				if want := strconv.Itoa(i) + ","; !strings.HasPrefix(text, want) {
					t.Fatalf("kept chunk %d reads %q, want %q...", i, text, want)
				}
			}
			// The slabs, and a few for the iteration itself (its closure,
			// the slice, a run's scratch entries): a slice a batch would
			// be n/logChunk (78) more.
			slabs := (n + textSlab - 1) / textSlab
			if max := uint64(slabs + 16); allocs > max {
				t.Errorf("ranging over %s of %d chunks allocates %v times, want at most %v (%d slabs of chunks and the iteration's own)", r.name, n, allocs, max, slabs)
			}
		})
	}
}
