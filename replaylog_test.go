package acp

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// replayLines are session/update params of every shape a turn logs: plain
// text chunks (compacted in the log) of the three kinds, with and without
// a messageId, empty and escaped, between the shapes that keep their
// decoded update (annotations, _meta on the chunk or its block, other
// blocks, tool calls, unknown kinds) and a notification _meta.
var replayLines = []string{
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hel"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo\n\"\u00e9\""}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"two"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","messageId":"u1","content":{"type":"text","text":"you"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":" more"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m\u0032","content":{"type":"text","text":", escaped id"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":" and \ud83d\ude00"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":null,"content":{"type":"text","text":"null id"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","annotations":{"priority":1}}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b","_meta":{"k":1}}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"c"},"_meta":{"k":2}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"d"}},"_meta":{"n":3}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"u","name":"n"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read"}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after the tool"}}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"hologram","beam":1}}`,
	`{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"done"}}}`,
}

// A turn's log keeps plain text chunks as places in their message's text;
// replaying it still yields every update equal, by value, to what the
// agent sent, in Updates and Events, to readers that followed the turn and
// to readers that started after it ended — and folding the replayed events
// gives State.
func TestReplayMakesEqualUpdates(t *testing.T) {
	var want []schema.Update
	var wantMeta []json.RawMessage
	for _, l := range replayLines {
		n, err := schema.DecodeNotification(1, []byte(l))
		u, meta := n.Update, n.Meta
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, u)
		wantMeta = append(wantMeta, meta)
	}
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	followed := make(chan []schema.Update, 1)
	go func() { followed <- slices.Collect(turn.Updates()) }()
	p := a.expect(schema.MethodSessionPrompt)
	for _, l := range replayLines {
		a.write(`{"jsonrpc":"2.0","method":"session/update","params":` + l + "}\n")
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()

	raw := cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })
	if diff := cmp.Diff(want, <-followed, raw); diff != "" {
		t.Errorf("Updates followed during the turn (-want +got):\n%s", diff)
	}
	for range 2 { // twice: each replay makes the chunks again
		if diff := cmp.Diff(want, slices.Collect(turn.Updates()), raw); diff != "" {
			t.Errorf("Updates replayed after the end (-want +got):\n%s", diff)
		}
		var got []schema.Update
		var gotMeta []json.RawMessage
		var tf TurnFold
		for ev := range turn.Events(context.Background(), 0) {
			tf.Apply(ev)
			if ev.Kind == EventUpdate && ev.Origin == OriginAgent {
				got = append(got, ev.Update)
				gotMeta = append(gotMeta, ev.Meta)
			}
		}
		if diff := cmp.Diff(want, got, raw); diff != "" {
			t.Errorf("Events replayed after the end (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantMeta, gotMeta, raw); diff != "" {
			t.Errorf("notification _meta of the replayed events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(turn.State(), tf.State(), raw); diff != "" {
			t.Errorf("folded replay differs from State (-State +fold):\n%s", diff)
		}
	}
}

// A turn released while a reader still reads its log drops its state, but
// the reader still gets every chunk's text.
func TestReplayAfterReleaseWhileReading(t *testing.T) {
	c, a := connectRaw(t, nil, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect(schema.MethodSessionPrompt)
	for _, w := range []string{"one ", "two ", "three"} {
		a.update("s1", chunk(w))
	}
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	var text strings.Builder
	first := true
	for u := range turn.Updates() {
		if first {
			turn.Release() // the reader keeps the log
			if len(turn.State().Messages) != 0 {
				t.Error("Release kept the turn's messages")
			}
			first = false
		}
		text.WriteString(schema.TextOf(u.(*schema.AgentMessageChunk).Content))
	}
	if text.String() != "one two three" {
		t.Errorf("replayed %q after Release, want %q", text.String(), "one two three")
	}
	if n := len(slices.Collect(turn.Updates())); n != 0 {
		t.Errorf("a reader that started after the release got %d updates", n)
	}
}

// A turn of plain text chunks keeps its text once plus a small constant per
// chunk, while it runs and after it ended (the last ended turn keeps its
// log). It kept ~216 bytes per 24-byte chunk before: the decoded chunk, its
// string, its slot in the update list and in its message's parts, its log
// entry.
func TestTurnOfTextChunksRetainsTextOnce(t *testing.T) {
	const n, pad = 20_000, 24
	wire := renderChunks(n, pad)
	_, s, a := startPipeAgent(t)
	measured := make(chan struct{})
	f := func(w io.Writer, _ json.RawMessage) {
		w.Write(wire)
		w.(interface{ Flush() error }).Flush()
		<-measured
	}
	a.turn.Store(&f)
	base := liveHeap()
	turn, err := s.Prompt(context.Background(), schema.Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.WaitFor(context.Background(), func(ev Event) bool { return ev.Seq == n }); err != nil {
		t.Fatal(err)
	}
	running := float64(liveHeap()) - float64(base)
	close(measured)
	turn.Wait()
	ended := float64(liveHeap()) - float64(base)
	if st := turn.State(); len(st.Messages) != 1 || len(st.Messages[0].Text) != n*pad {
		t.Fatalf("folded %d messages", len(st.Messages))
	}
	t.Logf("retained per %d-byte chunk: %.0f bytes while running, %.0f after", pad, running/n, ended/n)
	// 24 bytes of text, 24 of log entry, the buffer's growth slack.
	const most = 80
	if running/n > most || ended/n > most {
		t.Errorf("a turn of %d chunks of %d bytes retained %.0f bytes a chunk while running, %.0f after it ended; want at most %d", n, pad, running/n, ended/n, most)
	}
}
