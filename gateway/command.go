package gateway

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"time"

	"github.com/acpclient/acp"
)

// CommandAgent starts an agent subprocess per connection through
// [acp.CommandTransport]: its own process group, stderr drained, a staged
// shutdown (stdin closed, ShutdownGrace, SIGTERM, TerminateGrace, SIGKILL
// to the group) when the connection ends, and death with the gateway's
// process. Use its Dial as the gateway's [DialFunc].
type CommandAgent struct {
	// Command returns a new command for each connection (an exec.Cmd runs
	// once), with Stdin, Stdout and Stderr left nil.
	Command func(ctx context.Context) (*exec.Cmd, error)
	// Stderr, if set, receives every agent's stderr, line by line.
	Stderr io.Writer
	// ShutdownGrace and TerminateGrace are those of acp.CommandTransport
	// (zero: 5s and 2s).
	ShutdownGrace, TerminateGrace time.Duration
}

// Dial starts the agent.
func (a *CommandAgent) Dial(ctx context.Context) (acp.Conn, error) {
	if a.Command == nil {
		return nil, errors.New("gateway: CommandAgent.Command is nil")
	}
	cmd, err := a.Command(ctx)
	if err != nil {
		return nil, err
	}
	t := &acp.CommandTransport{Command: cmd, Stderr: a.Stderr, ShutdownGrace: a.ShutdownGrace, TerminateGrace: a.TerminateGrace}
	return t.Connect(ctx)
}
