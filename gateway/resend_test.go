package gateway

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// countingDial is newPipeDial's scripted agent, counting the prompts it
// receives.
func countingDial(t *testing.T) (*pipeDial, *atomic.Int64) {
	var n atomic.Int64
	opts := scriptOptions()
	run := opts.OnPrompt
	opts.OnPrompt = func(turn *acptest.Turn) (schema.StopReason, error) {
		n.Add(1)
		return run(turn)
	}
	return newPipeDial(t, opts), &n
}

// waitingTurn starts a gateway on a counting agent, opens a connection and
// a session with their streams, and starts prompt 10, "wait", which runs
// until cancelled.
func waitingTurn(t *testing.T) (g *Gateway, c *client, conn, sess *sse, sid string, prompts *atomic.Int64) {
	d, prompts := countingDial(t)
	g, url := start(t, d.Dial, nil)
	c = &client{t: t, url: url}
	c.initialize()
	conn = c.open("")
	sid = newSession(t, c, conn, 1)
	sess = c.open(sid)
	c.post(sid, prompt(10, sid, "wait"))
	sess.until(t, func(m map[string]any) bool { return chunkText(m) == "waiting" })
	return g, c, conn, sess, sid, prompts
}

// The rule of resend.go: a POST a proxy sends again (the same request id
// on the same connection), while the first copy awaits the agent's answer
// or just after it was answered, is answered 202 and not forwarded: the
// agent runs each prompt once, and the client gets one answer.
func TestResentRequestNotForwardedTwice(t *testing.T) {
	_, c, _, sess, sid, prompts := waitingTurn(t)

	// In flight.
	if r := c.post(sid, prompt(10, sid, "wait")); r.status != 202 {
		t.Fatalf("the resent prompt: %d %s, want 202", r.status, r.body)
	}
	c.post(sid, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
	for {
		m := sess.next(t)
		if chunkText(m) == "waiting" {
			t.Fatal("the resent prompt 10 reached the agent: a second turn began")
		}
		if isResponse(10)(m) {
			if result(m)["stopReason"] != "cancelled" {
				t.Fatalf("prompt 10 answered %v, want its turn's stopReason", m)
			}
			break
		}
	}

	// Just answered.
	c.post(sid, prompt(11, sid, "hello"))
	sess.until(t, isResponse(11))
	if r := c.post(sid, prompt(11, sid, "hello")); r.status != 202 {
		t.Fatalf("the resent answered prompt: %d %s, want 202", r.status, r.body)
	}
	c.post(sid, prompt(12, sid, "bye"))
	for {
		m := sess.next(t)
		if isResponse(11)(m) || chunkText(m) == "echo:hello" {
			t.Fatalf("the resent prompt 11 reached the agent: %v", m)
		}
		if isResponse(12)(m) {
			break
		}
	}
	if n := prompts.Load(); n != 3 {
		t.Fatalf("the agent received %d prompts, want 3 (10, 11, 12, each once)", n)
	}
}

// During a drain, a proxy's copy of a prompt that was forwarded before the
// drain began is not refused as not delivered (the agent is running it: a
// supervised client would send it again, and the turn would run twice,
// as TestRollingRestart saw behind HAProxy); a new prompt still is.
func TestDrainResentRequestNotRefused(t *testing.T) {
	g, c, conn, sess, sid, prompts := waitingTurn(t)

	drained := make(chan error, 1)
	go func() { drained <- g.Drain(context.Background()) }()
	waitFor(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.draining
	})
	if r := c.post(sid, prompt(10, sid, "wait")); r.status != 202 {
		t.Fatalf("the resent prompt while draining: %d %s, want 202", r.status, r.body)
	}
	c.post(sid, prompt(11, sid, "new"))
	c.post(sid, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"`+sid+`"}}`)
	// Every answer on the stream until prompt 10's: the first for 10 must
	// be its turn's.
	for new := false; ; {
		m := sess.next(t)
		if isResponse(11)(m) {
			if errorCode(m) != acp.CodeNotDelivered {
				t.Fatalf("a new prompt while draining answered %v, want %d", m, acp.CodeNotDelivered)
			}
			new = true
		}
		if isResponse(10)(m) {
			if result(m)["stopReason"] != "cancelled" {
				t.Fatalf("prompt 10 answered %v, want its turn's stopReason (not %d)", m, acp.CodeNotDelivered)
			}
			if !new {
				t.Fatal("prompt 11 was not answered before prompt 10's turn ended")
			}
			break
		}
	}
	if n := prompts.Load(); n != 1 {
		t.Fatalf("the agent received %d prompts, want 1", n)
	}
	sess.ended(t)
	c.openStatus(sid)
	conn.ended(t)
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
}

func errorCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

// What a connection keeps of its answered ids: the last answeredKept, for
// resentWindow each.
func TestAnsweredIDs(t *testing.T) {
	var a answeredIDs
	t0 := time.Now()
	a.add("1", t0)
	if !a.has("1", t0.Add(resentWindow-time.Millisecond)) {
		t.Error("an id answered within the window is not known")
	}
	if a.has("1", t0.Add(resentWindow)) {
		t.Error("an id answered a window ago is still known")
	}
	if a.has("2", t0) {
		t.Error("an id never answered is known")
	}
	for i := range answeredKept {
		a.add(fmt.Sprint(100+i), t0)
	}
	if a.has("1", t0) {
		t.Errorf("the oldest id is still known after %d more", answeredKept)
	}
	if !a.has("100", t0) || !a.has(fmt.Sprint(100+answeredKept-1), t0) {
		t.Errorf("the last %d ids are not all known", answeredKept)
	}
}
