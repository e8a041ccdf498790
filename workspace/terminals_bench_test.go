//go:build unix

package workspace

import (
	"context"
	"testing"

	"github.com/acpclient/acp/schema"
)

// BenchmarkTerminalLifecycle is one command's full cost to the client:
// create (with its process group and watchdog), wait for exit, release.
func BenchmarkTerminalLifecycle(b *testing.B) {
	m := &Terminals{Roots: []string{b.TempDir()}}
	defer m.Close()
	ctx := context.Background()
	for b.Loop() {
		c, err := m.CreateTerminal(ctx, &schema.CreateTerminalRequest{SessionID: "s", Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: c.TerminalID}); err != nil {
			b.Fatal(err)
		}
		if _, err := m.ReleaseTerminal(ctx, &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: c.TerminalID}); err != nil {
			b.Fatal(err)
		}
	}
}
