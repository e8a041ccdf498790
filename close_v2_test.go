package acp

import (
	"errors"
	"testing"
	"time"
)

// Rule: a v2 turn whose prompt the agent accepted (the answer came, the
// idle has not) fails with ErrConnClosed when the connection ends, as a v1
// turn waiting for its answer does. Found by the e2e suite
// (TestCloseMidTurn/*/v2): the accepted turn is no longer a pending prompt
// call, and it waited for an idle that could never come.
func TestV2CloseEndsAcceptedTurn(t *testing.T) {
	c, a, _, turn, p := startTurnV2(t, nil)
	a.update("s1", state("running"))
	a.reply(p, map[string]any{"messageId": "u1"})
	syncRaw(t, a, 900)
	c.Close()
	select {
	case <-turn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the accepted turn did not end when the connection closed")
	}
	if _, err := turn.Wait(); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Wait: %v, want ErrConnClosed", err)
	}
}
