package demo_test

// The demo graded by acptest/conformance in v2, /background steering its
// background scenario.

import (
	"context"
	"testing"

	"github.com/acpclient/acp/acptest/conformance"
	"github.com/acpclient/acp/acptest/demo"
)

// TestConformanceV2: the demo passes every v2 rule it is graded on, and
// its sessions are resumed and replayed on new connections, and its
// /background watcher is listed, cancelled with terminal/cancel and
// listed gone.
func TestConformanceV2(t *testing.T) {
	a := demo.New(&demo.Options{StateDir: t.TempDir()}) // resumed from disk
	t.Cleanup(func() { a.Close() })
	rep, err := conformance.Run(context.Background(), conformance.PipeTarget(a.Pipe), &conformance.Options{Protocol: []int{2},
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
