package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// checkTurnEnd encodes ev with st both ways and fails on any difference.
func checkTurnEnd(t testing.TB, ev map[string]any, st acp.TurnState) {
	t.Helper()
	var want, got bytes.Buffer
	ev["state"] = st
	if err := json.NewEncoder(&want).Encode(ev); err != nil {
		t.Fatal(err)
	}
	delete(ev, "state")
	if err := writeTurnEnd(&got, ev, st); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		g, w := got.String(), want.String()
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Fatalf("writeTurnEnd differs from json.Encoder at byte %d of %d (want %d):\n got %q\nwant %q", i, len(g), len(w), g[max(0, i-40):min(len(g), i+40)], w[max(0, i-40):min(len(w), i+40)])
	}
}

// A text that puts what encoding/json escapes specially at and around
// every piece boundary: multi-byte runes cut by the boundary, bytes that
// are not UTF-8, U+2028, HTML characters, controls.
func awkwardText(n int) string {
	var b strings.Builder
	unit := "ab<c>&d\"e\\f\n\t\x01é€😀\u2028\u2029\xff\xe2\x82 g"
	for i := 0; b.Len() < n; i++ {
		b.WriteString(unit[:1+i%len(unit)])
		b.WriteString(unit)
	}
	return b.String()
}

func TestTurnEndMatchesEncoder(t *testing.T) {
	big := strings.Repeat("w0001 ", 100_000)
	for _, tc := range []struct {
		name string
		ev   map[string]any
		st   acp.TurnState
	}{
		{"empty", map[string]any{"event": "turn_end", "stopReason": schema.StopReasonEndTurn}, acp.TurnState{}},
		{"short texts", map[string]any{"event": "turn_end", "stopReason": schema.StopReasonEndTurn},
			acp.TurnState{Messages: []acp.Message{{Text: "hi <there>"}}, Thoughts: []acp.Message{{Text: "hm"}}}},
		{"one long message", map[string]any{"event": "turn_end", "stopReason": schema.StopReasonEndTurn},
			acp.TurnState{Messages: []acp.Message{{MessageID: "m1", Text: big}}}},
		{"awkward long texts of every kind", map[string]any{"event": "turn_end", "stopReason": schema.StopReasonCancelled, "error": "agent \u2028died", "plans": map[string]int{"a": 1}},
			acp.TurnState{
				Messages:     []acp.Message{{Text: "short"}, {Text: awkwardText(3*splicePiece + 7)}, {Text: awkwardText(spliceMin)}},
				Thoughts:     []acp.Message{{Text: awkwardText(splicePiece + 1)}},
				UserMessages: []acp.Message{{Text: awkwardText(2 * splicePiece)}},
			}},
		{"a short text that looks like a placeholder", map[string]any{"event": "turn_end"},
			acp.TurnState{Messages: []acp.Message{{Text: "\x00acp:0:0\x00"}, {Text: big + "\x00acp:1:0\x00"}}}},
		{"a text of bytes that are not UTF-8", map[string]any{"event": "turn_end"},
			acp.TurnState{Messages: []acp.Message{{Text: strings.Repeat("\xe2\x82", splicePiece)}}}},
		{"a text of continuation bytes only", map[string]any{"event": "turn_end"},
			acp.TurnState{Messages: []acp.Message{{Text: "\xf0\x9f\x98" + strings.Repeat("\x80", 3*splicePiece) + "😀"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTurnEnd(t, tc.ev, tc.st) })
	}
}

// writeTurnEnd holds none of a long text beyond a piece: its allocations
// are those of the short encoding, whatever the text's length.
func TestTurnEndAllocs(t *testing.T) {
	st := acp.TurnState{Messages: []acp.Message{{Text: strings.Repeat("w0001 ", 200_000)}}}
	var w countWriter
	allocated := func() uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if err := writeTurnEnd(&w, map[string]any{"event": "turn_end"}, st); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	allocated()
	if got := allocated(); got > 256<<10 {
		t.Errorf("writing a turn_end of a %d-byte text allocated %d bytes, want at most %d (a piece and the short line)", len(st.Messages[0].Text), got, 256<<10)
	}
	if w.n < 1_200_000 {
		t.Fatalf("wrote %d bytes", w.n)
	}
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func FuzzTurnEnd(f *testing.F) {
	f.Add("w0001 ", "thought", 2000)
	f.Add("é€😀\u2028<>&\xff\xe2\x82", "\x00acp:", 5000)
	f.Fuzz(func(t *testing.T, unit, short string, reps int) {
		if unit == "" || reps < 0 || reps > 20_000 || len(unit)*reps > 1<<20 {
			return
		}
		st := acp.TurnState{Messages: []acp.Message{{Text: short}, {Text: strings.Repeat(unit, reps)}}, Thoughts: []acp.Message{{Text: short + strings.Repeat(unit, reps/2)}}}
		checkTurnEnd(t, map[string]any{"event": "turn_end", "error": short}, st)
	})
}

// A piece is bounded whatever the text: a run of continuation bytes (each
// escaped as \ufffd, six bytes) does not make one piece of the rest.
func TestTurnEndPieceBounded(t *testing.T) {
	st := acp.TurnState{Messages: []acp.Message{{Text: strings.Repeat("\x80", 8*splicePiece)}}}
	var w maxWriter
	if err := writeTurnEnd(&w, map[string]any{"event": "turn_end"}, st); err != nil {
		t.Fatal(err)
	}
	if limit := 6*(splicePiece+4) + 2; w.max > limit {
		t.Errorf("a write of %d bytes, want at most %d (one piece, escaped)", w.max, limit)
	}
}

type maxWriter struct{ max int }

func (w *maxWriter) Write(p []byte) (int, error) { w.max = max(w.max, len(p)); return len(p), nil }
