package otelacp_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/acpclient/acp/otelacp"
)

// A supervised client whose agent is killed counts the restart through the
// Observer alone: acp.client.restarts gains one "restored".
func TestObserverCountsRestarts(t *testing.T) {
	inst, _, reader, _ := setup(t, otelacp.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := acptest.New(nil)
	defer a.Close()
	restored := make(chan struct{}, 1)
	c, err := acp.Connect(ctx, &acptest.Transport{Agent: a}, &acp.ClientOptions{
		Observer: inst.Observer(),
		Restart: &acp.RestartPolicy{OnRestart: func(ev acp.RestartEvent) {
			if ev.Phase == acp.RestartRestored {
				restored <- struct{}{}
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Kill()
	select {
	case <-restored:
	case <-ctx.Done():
		t.Fatal("no restart")
	}
	// The Observer runs before OnRestart, on the same goroutine: the
	// restart is counted by now.
	var rm metricdata.ResourceMetrics
	reader.Collect(ctx, &rm)
	if got := metricsOf(rm)[otelacp.MetricRestarts]; got != "sum=1 acp.restart.reason=restored" {
		t.Errorf("restarts metric %q", got)
	}
	// And the restored session takes the next turn.
	turn, err := s.Prompt(ctx, schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
}
