//go:build unix

package proxytest

import (
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/schema"
)

// HAProxy's health check (docs/deploy/haproxy.cfg: GET /healthz) takes a
// draining backend out of rotation while its listener is still open and
// its running turn goes on: the server is logged DOWN for the 503, new
// connections all reach the other backend, and the running turn, on the
// draining one, still ends normally (its cancel reaches it: the cookie
// keeps it there). nginx has no active checks (see docs/OPERATORS.md).
func TestHealthCheckTakesDrainingBackendOut(t *testing.T) {
	s := newSetup(t, startHAProxy)
	c := connect(t, s.transport(t, "http", newJar(t)), nil)
	sess, err := c.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	draining := s.backend(say(t, sess, "backend"))
	other := s.a
	if draining == s.a {
		other = s.b
	}
	turn, err := sess.Prompt(bounded(t), schema.Text("wait"))
	if err != nil {
		t.Fatal(err)
	}
	for u := range turn.Updates() {
		if _, ok := u.(*schema.AgentMessageChunk); ok {
			break // the agent is in the turn: the drain waits for it
		}
	}
	start := time.Now()
	drained := make(chan error, 1)
	go func() { drained <- draining.drain() }()

	down := "Server acp/" + draining.name + " is DOWN, reason: Layer7 wrong status, code: 503"
	for i := 0; !strings.Contains(s.proxy.out.String(), down); i++ {
		if i == 1000 {
			t.Fatalf("HAProxy did not take the draining backend out within 20 s:\n%s", s.proxy.out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the proxy's log: it has no other signal
	}
	t.Logf("draining backend %s out of rotation after %v", draining.name, time.Since(start).Round(time.Millisecond))
	for i := range 4 {
		nc := connect(t, s.transport(t, "http", newJar(t)), nil)
		ns, err := nc.NewSession(bounded(t), &schema.NewSessionRequest{Cwd: t.TempDir()})
		if err != nil {
			t.Fatalf("new connection %d while %s drains: %v", i, draining.name, err)
		}
		if got := say(t, ns, "backend"); got != other.name {
			t.Errorf("new connection %d reached backend %q while %s drains", i, got, draining.name)
		}
		nc.Close()
	}
	select {
	case err := <-drained:
		t.Fatalf("the drain ended (%v) with its turn running", err)
	default:
	}
	turn.Cancel()
	if stop, err := turn.Wait(); err != nil || stop != "cancelled" {
		t.Errorf("the turn running through the drain: %q, %v", stop, err)
	}
	if err := <-drained; err != nil {
		t.Errorf("the drain: %v", err)
	}
}
