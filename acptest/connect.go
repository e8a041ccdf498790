package acptest

import (
	"context"
	"testing"

	"github.com/acpclient/acp"
)

// Connect starts an agent configured by opts in-process, connects an
// [acp.Client] configured by copts to it over in-memory pipes, and returns
// both once the initialize handshake is done. Nil opts and copts are the
// zero values: an agent that answers every prompt with end_turn, a client
// that rejects every permission request and serves no files or terminals.
//
// The test's cleanup closes the client and then the agent, which waits for
// the agent's scripts. A failed handshake ends the test with t.Fatal.
func Connect(t testing.TB, opts *Options, copts *acp.ClientOptions) (*acp.Client, *Agent) {
	t.Helper()
	a := New(opts)
	return ConnectAgent(t, a, copts), a
}

// ConnectAgent is Connect for an agent built already (by New, or by a
// package built on acptest such as acptest/demo): it connects a client
// configured by copts to a over in-memory pipes, and the test's cleanup
// closes the client and then a. A failed handshake closes a and ends the
// test with t.Fatal.
func ConnectAgent(t testing.TB, a *Agent, copts *acp.ClientOptions) *acp.Client {
	t.Helper()
	fromAgent, toAgent := a.Pipe()
	c, err := acp.Connect(context.Background(), &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, copts)
	if err != nil {
		a.Close()
		t.Fatalf("acptest: connecting to the agent: %v", err)
	}
	t.Cleanup(func() {
		// The client first: closing its end of the pipes lets scripts
		// blocked on the client see the connection end, so Agent.Close
		// does not wait on them.
		c.Close()
		a.Close()
	})
	return c
}
