package demo_test

// The demo graded by acptest/conformance in v2, /background steering its
// background scenario.

import (
	"context"
	"io"
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/acptest/conformance"
	"github.com/acpclient/acp/acptest/demo"
)

// TestConformanceV2: the demo passes every v2 rule it is graded on: each
// connection is a demo of its own sharing one state directory, as
// processes started one after the other are, so its sessions are resumed
// and replayed from disk; and its /background watcher is listed,
// cancelled with terminal/cancel and listed gone.
func TestConformanceV2(t *testing.T) {
	dir := t.TempDir()
	target := conformance.Target{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		a := demo.New(&demo.Options{StateDir: dir})
		r, w := a.Pipe()
		return &agentConn{ReadCloser: r, w: w, a: a}, nil
	}}
	rep, err := conformance.Run(context.Background(), target, &conformance.Options{Protocol: []int{2},
		Prompts: conformance.Prompts{Cancel: "/slow", Background: "/background"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if res.Status == conformance.Fail || res.Status == conformance.Warn {
			t.Errorf("%s: %s: %s %s", res.ID, res.Status, res.Message, res.Evidence)
		}
	}
	for _, id := range []string{"session.list", "session.resume", "session.close", "v2.resume-replay", "v2.resume-ids",
		"v2.resume-state", "v2.close", "v2.background", "v2.background-ends"} {
		if res, _ := rep.Result(id, 2); res.Status != conformance.Pass {
			t.Errorf("%s: %s (%s), want pass", id, res.Status, res.Message)
		}
	}
}

// agentConn is the client's side of a pipe to an agent of its own, which
// Close shuts down with it.
type agentConn struct {
	io.ReadCloser
	w io.WriteCloser
	a *acptest.Agent
}

func (c *agentConn) Write(b []byte) (int, error) { return c.w.Write(b) }

func (c *agentConn) Close() error {
	c.w.Close()
	c.ReadCloser.Close()
	return c.a.Close()
}
