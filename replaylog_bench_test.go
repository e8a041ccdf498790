package acp

import (
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"io"
	"testing"
)

// BenchmarkTurnRetained100k reports what a turn of 100 000 plain text
// chunks (24 bytes of text each) keeps on the heap, per update: while it
// runs (every chunk folded, the prompt not answered yet: the text, the log
// that replays it, the fold) and after it ended (the last ended turn keeps
// its log, Limits.TurnLogs), measured as the live heap after a GC above the
// heap before the turn. The text alone is 24 bytes an update.
func BenchmarkTurnRetained100k(b *testing.B) {
	const n = 100_000
	wireBytes := renderChunks(n, 24)
	_, s, a := startPipeAgent(b)
	measured := make(chan struct{})
	f := func(w io.Writer, _ json.RawMessage) {
		w.Write(wireBytes)
		w.(interface{ Flush() error }).Flush()
		<-measured // the prompt is answered after the measure
	}
	a.turn.Store(&f)
	var during, after float64
	rounds := 0
	for b.Loop() {
		base := liveHeap()
		t, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.WaitFor(context.Background(), func(ev Event) bool { return ev.Seq == n }); err != nil {
			b.Fatal(err)
		}
		during += float64(liveHeap()) - float64(base)
		close(measured)
		if _, err := t.Wait(); err != nil {
			b.Fatal(err)
		}
		after += float64(liveHeap()) - float64(base)
		if st := t.State(); len(st.Messages) != 1 || len(st.Messages[0].Text) != n*24 {
			b.Fatalf("folded %d messages", len(st.Messages))
		}
		t.Release()
		measured = make(chan struct{})
		rounds++
	}
	b.ReportMetric(during/float64(rounds*n), "retained-B/update-running")
	b.ReportMetric(after/float64(rounds*n), "retained-B/update-ended")
}
