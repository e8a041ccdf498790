package acp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
)

// Close racing a death: the agent's connection ends (Kill) while Close
// runs. The supervisor must not start a restart once Close stopped it —
// under -race, a restart's WaitGroup.Add concurrent with Close's Wait is
// reported — and no restart event follows Close's return.
func TestRestartCloseRacesDeath(t *testing.T) {
	for range 300 {
		a := acptest.New(nil)
		var mu sync.Mutex
		closed := false
		var late []acp.RestartPhase
		c, err := acp.Connect(context.Background(), &acptest.Transport{Agent: a}, &acp.ClientOptions{Restart: &acp.RestartPolicy{
			OnRestart: func(ev acp.RestartEvent) {
				mu.Lock()
				if closed {
					late = append(late, ev.Phase)
				}
				mu.Unlock()
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		a.Kill() // returns at once: the client reads the end meanwhile
		c.Close()
		mu.Lock()
		closed = true
		mu.Unlock()
		a.Close()
		mu.Lock()
		if len(late) > 0 {
			t.Fatalf("restart events after Close returned: %v", late)
		}
		mu.Unlock()
	}
}
