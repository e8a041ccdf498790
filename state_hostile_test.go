package acp

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// An agent that sends a new messageId with every chunk makes the reader do
// one lookup per chunk, not one per message so far: the work of folding 2n
// chunks is twice that of n, not four times.
func TestFoldDistinctMessageIDsIsLinear(t *testing.T) {
	work := func(n int) int {
		var f fold
		for i := range n {
			id := fmt.Sprint("m", i)
			f.apply(&schema.AgentMessageChunk{MessageID: id, Content: schema.Text("x")})
			f.apply(&schema.AgentThoughtChunk{MessageID: id, Content: schema.Text("y")})
		}
		if len(f.messages.l) != n || len(f.thoughts.l) != n {
			t.Fatalf("%d messages, %d thoughts from %d ids", len(f.messages.l), len(f.thoughts.l), n)
		}
		return f.visits
	}
	small, large := work(5_000), work(10_000)
	if large > 2*small+10 {
		t.Errorf("folding 10 000 ids touched %d entries, 5 000 ids %d: worse than linear", large, small)
	}
}

// After a cancel, each new tool_call is marked cancelled in O(1): the table
// is not rescanned for every call.
func TestCancelledTurnMarksNewToolCallsInConstantWork(t *testing.T) {
	work := func(n int) int {
		_, _, s, turn, p := startTurn(t, nil)
		_ = p
		turn.Cancel()
		s.mu.Lock()
		before := turn.fold.visits
		s.mu.Unlock()
		for i := range n {
			s.apply(&schema.ToolCall{ToolCallID: fmt.Sprint("t", i), Title: "run", Status: schema.ToolCallStatusPending}, nil, 0)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, tc := range turn.fold.tools.calls {
			if tc.Status != schema.ToolCallStatusCancelled {
				t.Fatalf("tool call %s announced after the cancel is %s", tc.ToolCallID, tc.Status)
			}
		}
		return turn.fold.visits - before
	}
	small, large := work(2_000), work(4_000)
	if large > 2*small+10 {
		t.Errorf("4 000 tool calls after a cancel touched %d entries, 2 000 touched %d: worse than linear", large, small)
	}
}

// retainedHeap runs turns turns of chunks chunks of pad-byte text through a
// pipe agent and returns the live heap they added and the text bytes sent.
func retainedHeap(tb testing.TB, opts *ClientOptions, turns, chunks, pad int, release bool) (heap, text uint64) {
	tb.Helper()
	_, s, a := startPipeAgentOpts(tb, opts)
	wire := renderChunks(chunks, pad)
	text = uint64(turns * chunks * pad)
	a.answer(wire)
	before := liveHeap()
	for range turns {
		turn, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			tb.Fatal(err)
		}
		if release {
			turn.Release()
		}
	}
	after := liveHeap()
	if st := s.State(); st.Turns != turns {
		tb.Fatalf("%d turns", st.Turns)
	}
	runtime.KeepAlive(s)
	if after < before {
		return 0, text
	}
	return after - before, text
}

func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// With the default options, a long session keeps the folded text of every
// turn but the update log of only the last: the live heap stays within 2×
// the text the agent sent (it kept every update, ~3.8× here, before).
func TestLongSessionRetainsAboutTheText(t *testing.T) {
	heap, text := retainedHeap(t, nil, 60, 2000, 64, false)
	t.Logf("60 turns × 2 000 chunks: %d bytes of text, %d bytes of heap retained (%.2f×)", text, heap, float64(heap)/float64(text))
	if heap > 2*text {
		t.Errorf("retained %d bytes for %d bytes of text: over 2×", heap, text)
	}
}

// A caller that releases each turn keeps a heap that does not grow with the
// number of turns.
func TestReleasedTurnsRetainNothing(t *testing.T) {
	heap, text := retainedHeap(t, nil, 60, 2000, 64, true)
	t.Logf("60 released turns: %d bytes of text, %d bytes of heap retained", text, heap)
	if heap > 1<<20 {
		t.Errorf("retained %d bytes after releasing every turn (%d bytes of text)", heap, text)
	}
}

// TurnLogs keeps more logs, or none; the folded state stays either way.
func TestTurnLogsPolicy(t *testing.T) {
	for _, tc := range []struct {
		keep   int
		logged []bool // per turn, oldest first, after the third ended
	}{
		{0, []bool{false, false, true}},
		{2, []bool{false, true, true}},
		{-1, []bool{false, false, false}},
	} {
		t.Run(fmt.Sprint(tc.keep), func(t *testing.T) {
			c, a := connectRaw(t, &ClientOptions{Limits: Limits{TurnLogs: tc.keep}}, nil)
			s := newSessionRaw(t, c, a)
			var turns []*Turn
			for i := range 3 {
				turn, err := s.Prompt(context.Background(), schema.Text("go"))
				if err != nil {
					t.Fatal(err)
				}
				p := a.expect("session/prompt")
				a.update("s1", chunk(fmt.Sprint("turn ", i)))
				a.reply(p, map[string]any{"stopReason": "end_turn"})
				turn.Wait()
				turns = append(turns, turn)
			}
			for i, turn := range turns {
				st := turn.State()
				if got := len(slices.Collect(turn.Updates())) > 0; got != tc.logged[i] {
					t.Errorf("turn %d: log kept %v, want %v", i, got, tc.logged[i])
				}
				if textOf(st) != fmt.Sprint("turn ", i) || st.StopReason != schema.StopReasonEndTurn {
					t.Errorf("turn %d: folded state lost: %q %q", i, textOf(st), st.StopReason)
				}
			}
		})
	}
}

// Updates for session ids nobody registered are bounded in ids and bytes;
// what is dropped is reported as limit_exceeded.
func TestOrphanUpdatesBounded(t *testing.T) {
	var mu sync.Mutex
	var drops []string
	opts := &ClientOptions{
		Limits: Limits{MaxOrphanSessions: 10, MaxOrphanBytes: 8 << 10},
		OnDiagnostic: func(d Diagnostic) {
			if d.Kind == "limit_exceeded" {
				mu.Lock()
				drops = append(drops, d.Message)
				mu.Unlock()
			}
		},
	}
	c, a := connectRaw(t, opts, nil)
	for i := range 100 {
		a.update(fmt.Sprint("ghost-", i), chunk("boo"))
	}
	big := strings.Repeat("x", 1000)
	for range 20 {
		a.update("ghost-0", chunk(big))
	}
	s := newSessionRaw(t, c, a) // a round trip: every update above was read
	c.mu.Lock()
	ids, bytes := len(c.routing.orphans), c.routing.orphanBytes
	c.mu.Unlock()
	if ids > 10 || bytes > 8<<10 {
		t.Errorf("kept %d ids, %d bytes; limits 10 and 8 KiB", ids, bytes)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(drops) < 90+10 {
		t.Errorf("%d limit_exceeded diagnostics, want at least 100", len(drops))
	}
	if len(drops) > 0 && !strings.Contains(drops[0], "MaxOrphanSessions") {
		t.Errorf("diagnostic %q does not name the limit", drops[0])
	}
	_ = s
}

// Close forgets the session: Client.Session no longer returns it, and a
// later Prompt fails locally.
func TestCloseForgetsSession(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	done := make(chan error, 1)
	go func() { done <- s.Close(context.Background()) }()
	a.reply(a.expect("session/close"), map[string]any{})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.Session("s1") != nil {
		t.Error("Client.Session still returns the closed session")
	}
	if _, err := s.Prompt(context.Background(), schema.Text("again")); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Prompt after Close: %v, want ErrSessionClosed", err)
	}
	if err := s.SetMode(context.Background(), "x"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("SetMode after Close: %v, want ErrSessionClosed", err)
	}
}

// outsideChunks returns n session/update lines for session s1, each an
// id-less 64-byte text chunk, sent outside any turn.
func outsideChunks(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 64) + `"}}}}` + "\n")
	}
	return b.String()
}

// Updates outside turns (a load replay, an agent talking between turns)
// are kept raw in Outside until ReleaseHistory; the folded History stays.
func TestReleaseHistory(t *testing.T) {
	const n = 20_000
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{OutsideLog: n}}, nil)
	s := newSessionRaw(t, c, a)
	a.write(outsideChunks(n))
	for range s.Changes(context.Background()) {
		if len(s.State().Outside) == n {
			break
		}
	}
	before := liveHeap()
	s.ReleaseHistory()
	after := liveHeap()
	st := s.State()
	if len(st.Outside) != 0 || len(st.History.Messages) != 1 || len(st.History.Messages[0].Text) != 64*n {
		t.Fatalf("after ReleaseHistory: %d outside, history %d messages", len(st.Outside), len(st.History.Messages))
	}
	t.Logf("ReleaseHistory freed %d bytes of %d updates", int64(before)-int64(after), n)
	if before < after || before-after < 64*n {
		t.Errorf("ReleaseHistory freed %d bytes; the raw updates alone took over %d", int64(before)-int64(after), 64*n)
	}
}

// An agent that talks between turns without end cannot grow Outside past
// twice Limits.OutsideLog: the oldest entries are dropped in batches, the
// folded History keeps every chunk, and the session's feed, folded, still
// equals State (an EventOutsideTrimmed says what was dropped, as it does
// for ReleaseHistory).
func TestOutsideLogBounded(t *testing.T) {
	const keep, n = 100, 1_000
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{OutsideLog: keep}}, nil)
	s := newSessionRaw(t, c, a)
	a.write(outsideChunks(n))
	for range s.Changes(context.Background()) {
		if st := s.State(); len(st.History.Messages) == 1 && len(st.History.Messages[0].Text) == 64*n {
			break
		}
	}
	st := s.State()
	if got := len(st.Outside); got < keep || got >= 2*keep {
		t.Errorf("Outside holds %d updates after %d, want [%d, %d)", got, n, keep, 2*keep)
	}
	// A trim at 200 entries keeps 100, so after 1000 updates the last trim
	// (at update 1000) left exactly 100.
	if got := len(st.Outside); got != keep {
		t.Errorf("Outside holds %d, want %d", got, keep)
	}
	s.ReleaseHistory()
	if got := len(s.State().Outside); got != 0 {
		t.Errorf("after ReleaseHistory Outside holds %d", got)
	}

	// Released, the session's feed ends after its last event.
	s.Release()
	var sf SessionFold
	trimmed := 0
	for ev := range s.Events(context.Background(), 0) {
		sf.Apply(ev)
		if ev.Kind == EventOutsideTrimmed {
			trimmed += ev.Trimmed
		}
	}
	if trimmed != n {
		t.Errorf("EventOutsideTrimmed events dropped %d entries in all, want %d", trimmed, n)
	}
	if d := cmp.Diff(s.State(), sf.State(), rawCmp); d != "" {
		t.Errorf("the folded feed differs from State (-state +fold):\n%s", d)
	}
}

// A reader that catches up through an EventReleased after ReleaseHistory
// emptied Outside still folds the next id-less chunk as the session does:
// it continues the history's last message. (The snapshot's Outside was the
// only record of the last update's kind.)
func TestSessionFoldAfterReleaseHistoryContinuesMessage(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{SessionLog: 2}}, nil)
	s := newSessionRaw(t, c, a)
	a.update("s1", chunk("a"))
	for range s.Changes(context.Background()) {
		if len(s.State().Outside) == 1 {
			break
		}
	}
	s.ReleaseHistory()
	// Session events that do not touch Outside, enough to release the log's
	// start: a turn with session-level updates.
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	prompt := expectCall(a, "session/prompt")
	for i := range 6 {
		a.update("s1", map[string]any{"sessionUpdate": "session_info_update", "title": fmt.Sprint("t", i)})
	}
	a.reply(prompt, map[string]any{"stopReason": "end_turn"})
	turn.Wait()

	var sf SessionFold
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := iter.Pull(s.Events(ctx, 0))
	defer stop()
	if ev, ok := next(); !ok || ev.Kind != EventReleased {
		t.Fatalf("first event %v, want EventReleased (the log's start was released)", ev.Kind)
	} else {
		sf.Apply(ev)
	}
	a.update("s1", chunk("b"))
	ev, ok := next()
	if !ok || ev.Kind != EventUpdate {
		t.Fatalf("next event %v %v, want the chunk", ev.Kind, ok)
	}
	sf.Apply(ev)
	if d := cmp.Diff(s.State().History, sf.State().History, rawCmp); d != "" {
		t.Errorf("the fold's history differs from the session's (-session +fold):\n%s", d)
	}
	if got := s.State().History.Messages; len(got) != 1 || got[0].Text != "ab" {
		t.Errorf("session history %+v, want one message \"ab\"", got)
	}
}
