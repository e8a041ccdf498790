package main

// A word while the agent is slow to start: npx and uvx agents fetch their
// packages on a first run, and a cold machine takes a while to start any
// agent. Said only when it takes a while, so a quick start prints nothing.

import (
	"fmt"
	"time"
)

// slowStartAfter is how long the agent may take to answer initialize
// before the command says what it is waiting for.
const slowStartAfter = time.Second

// slowStart prints, in text mode, one line if the agent has not answered
// initialize within slowStartAfter; stop (call it when Connect returns)
// prevents it.
func (o *output) slowStart(cfg *config) (stop func()) {
	if o.json {
		return func() {}
	}
	what := "the agent"
	switch {
	case cfg.remote.url != "":
		what = "the remote agent at " + cleanLine(cfg.remote.url)
	case cfg.registry.agentID != "":
		what = cleanLine(cfg.registry.agentID)
	case len(cfg.agent) > 0:
		what = cleanLine(cfg.agent[0])
	default:
		what = "the demo agent (this program, started again as a subprocess)"
	}
	done := false // under o.mu: a note due as Connect returns stays unsaid
	t := time.AfterFunc(slowStartAfter, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if !done {
			fmt.Fprintf(o.stderr, "acp: starting %s and waiting for its initialize answer…\n", what)
		}
	})
	return func() {
		t.Stop()
		o.mu.Lock()
		done = true
		o.mu.Unlock()
	}
}
