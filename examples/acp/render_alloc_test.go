// render_alloc_test.go counts what the renderer allocates per text chunk.
package main

import (
	"context"
	"io"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// TestRenderChunkAllocs: showing a plain text chunk, the bulk of a turn,
// allocates nothing in text mode or with --json (counts, not times: a
// regression shows on any machine). Before, each cost fmt's boxing of the
// text, or for --json an Encoder, two marshals and a dozen allocations.
func TestRenderChunkAllocs(t *testing.T) {
	c, _ := acptest.Connect(t, nil, nil)
	s, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		json bool
	}{{"text", false}, {"json", true}} {
		o := newOutput(&config{json: mode.json}, io.Discard, io.Discard)
		seq := uint64(0)
		for _, u := range []schema.Update{schema.AgentMessageText("", "w0001 "), schema.AgentThoughtText("", "hmm, <b> & \u2028")} {
			ev := acp.Event{Kind: acp.EventUpdate, Origin: acp.OriginAgent, Update: u}
			allocs := testing.AllocsPerRun(1000, func() {
				seq++
				ev.Seq = seq
				o.event(s, nil, ev)
			})
			if allocs != 0 {
				t.Errorf("%s, %T: %.1f allocations per chunk, want 0", mode.name, u, allocs)
			}
		}
		o.stop()
	}
}
