package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// TestCloseMidTurn: closing the client while the model stalls mid-turn
// ends the turn with ErrConnClosed and leaves no process of the agent (the
// cleanup of start checks the process group and the session directory).
func TestCloseMidTurn(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		r := start(t, ag, nil)
		release := make(chan struct{})
		defer close(release)
		r.Model.Script(Reply{Text: []string{"Thinking it over"}, Stall: release})
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		turn, err := r.S.Prompt(ctx, schema.Text("take your time"))
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.Model.Arrived(1):
		case <-turn.Done():
			t.Fatalf("the turn ended before the model was asked: %v", turn.Err())
		}
		if err := r.C.Close(); err != nil {
			t.Logf("Close: %v", err)
		}
		if _, err := turn.Wait(); !errors.Is(err, acp.ErrConnClosed) {
			t.Errorf("turn after Close: %v, want ErrConnClosed", err)
		}
		if alive := groupAlive(r.pgid); alive != "" {
			t.Errorf("processes left right after Close returned: %s", alive)
		}
	})
}
