package acp

// close_reap_linux_test.go tests that Close learns the agent's group is
// gone from the kernel, not from a scan of /proc.

import (
	"context"
	"testing"

	"github.com/acpclient/acp/internal/procgroup"
)

// Closing a client whose agent exits at once needs no scan of /proc: the
// group's watchdog, killed with it, is reaped before Close asks whether
// any of the group is left, so kill(-pgid, 0) answers ESRCH. Asked before
// the reap, the zombie watchdog made every Close read the stat file of
// every process on the machine.
func TestCloseAsksTheKernel(t *testing.T) {
	c, err := Connect(context.Background(), &CommandTransport{Command: agentCommand("echo")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := procgroup.ProcScans()
	if err := c.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if n := procgroup.ProcScans() - before; n != 0 {
		t.Errorf("Close scanned /proc %d times to learn the group was gone", n)
	}
}
