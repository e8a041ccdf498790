package acp

import (
	"context"
	"github.com/acpclient/acp/schema"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTurn100kChunksObserved is BenchmarkTurn100kChunks with an
// Observer watching every update: the cost of observing (text chunks then
// take the general path, decoded into Update values). Compare with
// BenchmarkTurn100kChunks, which has none: an unset Observer costs nothing.
func BenchmarkTurn100kChunksObserved(b *testing.B) {
	const n = 100_000
	wireBytes := renderChunks(n, 24)
	var seen atomic.Int64
	obs := &Observer{Turn: func(ctx context.Context, _ TurnInfo) (context.Context, *TurnObserver) {
		return ctx, &TurnObserver{Update: func(schema.Update) { seen.Add(1) }}
	}}
	_, s, a := startPipeAgentOpts(b, &ClientOptions{Observer: obs})
	a.answer(wireBytes)
	var ms0, ms1 runtime.MemStats
	b.SetBytes(int64(len(wireBytes)))
	b.ReportAllocs()
	runtime.ReadMemStats(&ms0)
	var elapsed time.Duration
	turns := 0
	for b.Loop() {
		start := time.Now()
		t, err := s.Prompt(context.Background(), schema.Text("go"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.Wait(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		turns++
	}
	runtime.ReadMemStats(&ms1)
	if got := seen.Load(); got != int64(n*turns) {
		b.Fatalf("observed %d updates, want %d", got, n*turns)
	}
	b.ReportMetric(float64(n*turns)/elapsed.Seconds(), "updates/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n*turns), "allocs/update")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n*turns), "B/update")
}
