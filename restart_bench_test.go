package acp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// BenchmarkRestart measures the time from the agent's death to a usable
// session (the restart restored it: RestartRestored), against a fresh
// Connect and LoadSession of the same history, in one run: the metric
// restart/fresh is their ratio (the goal is at most 1.5). The agent is
// in-process and offers session/load only, so both replay the whole
// history; the restart also reconciles it with what the session holds.
//
//	go test -run '^$' -bench BenchmarkRestart -benchtime 200x .
func BenchmarkRestart(b *testing.B) {
	for _, n := range []int{100, 2000} {
		b.Run(fmt.Sprint("history=", n), func(b *testing.B) {
			var history []any
			for i := range n / 2 {
				history = append(history, acptest.UserMessage("", fmt.Sprintf("question %d ", i)),
					acptest.AgentMessage("", fmt.Sprintf("answer %d ", i)))
			}
			a := acptest.New(&acptest.Options{Restore: acptest.RestoreLoadOnly, DisableTranscript: true,
				History: map[string][]any{"sess-h": history}})
			defer a.Close()
			ctx := context.Background()
			restored := make(chan struct{}, 1)
			c, err := acp.Connect(ctx, &acptest.Transport{Agent: a}, &acp.ClientOptions{Restart: &acp.RestartPolicy{
				MaxRestarts: 1 << 30, Window: time.Nanosecond, // every restart is the window's first: no backoff
				OnRestart: func(ev acp.RestartEvent) {
					if ev.Phase == acp.RestartRestored {
						restored <- struct{}{}
					}
				}}})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-h"}); err != nil {
				b.Fatal(err)
			}
			var restart, fresh time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				a.Kill()
				<-restored
				restart += time.Since(start)

				start = time.Now()
				c2, err := acp.Connect(ctx, &acptest.Transport{Agent: a}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c2.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: "sess-h"}); err != nil {
					b.Fatal(err)
				}
				fresh += time.Since(start)
				c2.Close()
			}
			b.ReportMetric(float64(restart.Nanoseconds())/float64(b.N), "restart-ns/op")
			b.ReportMetric(float64(fresh.Nanoseconds())/float64(b.N), "fresh-ns/op")
			b.ReportMetric(float64(restart)/float64(fresh), "restart/fresh")
		})
	}
}
