//go:build unix

package acp

import (
	"context"
	"errors"
	"github.com/acpclient/acp/schema"
	"testing"
)

// When the agent exits while a process it started still holds its stdout
// open, the connection ends anyway — as soon as what the agent wrote before
// exiting has been read, with no timer: the answer it wrote last still
// reaches its call, and the end reports the exit status.
func TestAgentExitEndsConnectionWhileGrandchildHoldsStdout(t *testing.T) {
	c, err := Connect(context.Background(), &CommandTransport{Command: agentCommand("leaveout")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"}); err != nil {
		t.Fatalf("NewSession: %v (the answer written before the exit was lost)", err)
	}
	waitFor(t, c.Done(), "the end of the connection")
	var ee *ExitError
	if err := c.Err(); !errors.Is(err, ErrConnClosed) || !errors.As(err, &ee) || ee.ExitCode != 4 {
		t.Errorf("Err = %v, want ErrConnClosed wrapping exit status 4", err)
	}
}
