package acptest

import (
	"context"
	"sync/atomic"

	"github.com/acpclient/acp"
)

// Restore says which ways back to an existing session an agent offers
// (Options.Restore).
type Restore int

const (
	// RestoreBoth offers session/resume and session/load (the default).
	RestoreBoth Restore = iota
	// RestoreResumeOnly offers session/resume only.
	RestoreResumeOnly
	// RestoreLoadOnly offers session/load only.
	RestoreLoadOnly
	// RestoreNone offers neither: a session cannot outlive its connection.
	RestoreNone
)

func (r Restore) resume() bool { return r == RestoreBoth || r == RestoreResumeOnly }
func (r Restore) load() bool   { return r == RestoreBoth || r == RestoreLoadOnly }

// apply removes from the default capabilities what r does not offer.
func (r Restore) apply(caps map[string]any) {
	if !r.load() {
		delete(caps, "loadSession")
	}
	if !r.resume() {
		if sc, ok := caps["sessionCapabilities"].(map[string]any); ok {
			delete(sc, "resume")
		}
	}
}

// Transport is an [acp.Transport] that opens a new in-process connection
// to Agent at every Connect, as a CommandTransport starts a new process:
// the agent's sessions, history and authentication outlive each
// connection. A client with ClientOptions.Restart reconnects through it
// after [Agent.Kill] or a script's Crash or Exit. It is safe for
// concurrent use.
type Transport struct {
	Agent *Agent
	// BeforeConnect, if set, runs at the start of each Connect with its
	// number (1 for the first); an error it returns fails that Connect,
	// as a failed start of an agent process would. A test may kill the
	// agent here during a reconnect, or block until told to go on.
	BeforeConnect func(ctx context.Context, n int) error

	n atomic.Int64
}

// Connect opens a new connection to t.Agent.
func (t *Transport) Connect(ctx context.Context) (acp.Conn, error) {
	n := int(t.n.Add(1))
	if f := t.BeforeConnect; f != nil {
		if err := f(ctx, n); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fromAgent, toAgent := t.Agent.Pipe()
	return &pipeConn{r: fromAgent, w: toAgent}, nil
}

// Connects returns how many times Connect was called.
func (t *Transport) Connects() int { return int(t.n.Load()) }

type pipeConn struct {
	r interface {
		Read([]byte) (int, error)
		Close() error
	}
	w interface {
		Write([]byte) (int, error)
		Close() error
	}
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeConn) CloseWrite() error           { return p.w.Close() }
func (p *pipeConn) Close() error {
	err := p.w.Close()
	if rerr := p.r.Close(); err == nil {
		err = rerr
	}
	return err
}

// Kill ends every open connection of the agent at once, as if its
// process had been killed (SIGKILL): nothing more is written or answered
// on them, the client reads the end of its input, and running scripts see
// their Conn's context end. Unlike Close, the agent lives on: its
// sessions, their history and its authentication stay, and it serves the
// next connection (Transport, Pipe, Serve). It returns without waiting
// for the scripts.
func (a *Agent) Kill() {
	a.mu.Lock()
	conns := make([]*Conn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	a.record("!", nil, "kill")
	for _, c := range conns {
		c.abort()
	}
}
