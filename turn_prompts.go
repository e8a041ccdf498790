package acp

import "sync"

// The client's table of session/prompt calls (Client.prompts): which turn
// a request id belongs to, from the moment jrpc2 gives the call its id
// until the answer ends the turn, on the reader, in wire order
// (turn_v1.go). One prompt at a time passes from Batch to the wire, so
// the id jrpc2 picks always reaches its own turn.

// promptTable is the client's part that matches prompt answers to their
// turns. Every field but slot and calls is guarded by the client's mu; the
// methods named Locked say so.
type promptTable struct {
	turns   map[string]*Turn // in-flight session/prompt by request id
	dead    map[string]bool  // prompts ended locally; their late answers are ignored
	sending *Turn            // the prompt between Batch and the wire (holds slot)
	slot    chan struct{}    // one prompt at a time on its way into jrpc2
	// calls counts the prompt calls running in jrpc2 (runPrompt); Close
	// waits for them.
	calls sync.WaitGroup
}

// promptCall is a turn's session/prompt call: how v1 finds the turn its
// answer ends, and whether it is to be sent again. All but sent are
// guarded by the client's mu.
type promptCall struct {
	id      string     // the request id, as JSON text, set when sent
	expired bool       // the cancel grace ended the turn: a late answer finds none
	sent    chan error // the result of writing the request
	// retry: the agent never got the prompt; it is sent again after the
	// restart (turn_retry.go).
	retry *retryPrompt
	// writing: the prompt is on its way to the transport, which has not
	// said yet whether it took it; a connection's end leaves the turn
	// to the write's outcome (wrote, runPrompt).
	writing bool
	// answered: the agent answered this sending of the prompt. A v2 turn
	// runs on past its answer (it only accepts the prompt), and the agent
	// has it then: a drained end must not send it again
	// (holdRunningLocked).
	answered bool
	// holds counts the times the turn was held for a retry: a write error
	// reported for a sending a hold has since overtaken fails nothing
	// (startPrompt).
	holds int
	// outcome is closed once the write of the latest sending has been
	// reported (Client.wrote): whether it is held is decided then.
	outcome chan struct{}
}

func (p *promptTable) init() {
	p.turns = map[string]*Turn{}
	p.slot = make(chan struct{}, 1)
}

// take waits for the slot, with no lock held: the caller then hands t to
// the wire with sendingLocked.
func (p *promptTable) take() { p.slot <- struct{}{} }

// sendingLocked makes t the prompt whose id the wire's CallSent hook
// learns next. The caller holds the slot.
func (p *promptTable) sendingLocked(t *Turn) { p.sending = t }

// unsentLocked gives the slot back for t, if it is still waiting for the
// wire (its call failed before it was sent).
func (p *promptTable) unsentLocked(t *Turn) {
	if p.sending == t {
		p.sending = nil
		<-p.slot
	}
}

// sentLocked gives the prompt being sent its request id and registers it
// under the id, unless it expired meanwhile (its answer then finds no
// turn); it returns that turn, nil if no prompt was being sent.
func (p *promptTable) sentLocked(id string) *Turn {
	t := p.sending
	if t == nil {
		return nil
	}
	p.sending = nil
	<-p.slot
	t.call.id = id
	t.call.writing = true
	t.call.outcome = make(chan struct{})
	if !t.call.expired {
		p.turns[id] = t
	}
	return t
}

// answeredLocked takes the turn of the prompt id answered: the turn, or
// nil with dead set when the prompt was ended locally (expireLocked) and
// its answer is late.
func (p *promptTable) answeredLocked(id string) (t *Turn, dead bool) {
	if t = p.turns[id]; t != nil {
		delete(p.turns, id)
		t.call.answered = true
		return t, false
	}
	if p.dead[id] {
		delete(p.dead, id)
		return nil, true
	}
	return nil, false
}

// forgetLocked removes t from the table if it is there: its prompt is to
// be sent again on the next connection, whose ids start again.
func (p *promptTable) forgetLocked(t *Turn) {
	if p.turns[t.call.id] == t {
		delete(p.turns, t.call.id)
	}
}

// takeLocked removes and returns the turn of prompt id (nil if none).
func (p *promptTable) takeLocked(id string) *Turn {
	t := p.turns[id]
	delete(p.turns, id)
	return t
}

// expireLocked forgets t, a cancelled prompt whose agent did not answer
// in time: its answer, if it comes, is ignored (answeredLocked says dead).
func (p *promptTable) expireLocked(t *Turn) {
	t.call.expired = true // if it goes out still, its answer finds no turn
	if p.turns[t.call.id] != t {
		return
	}
	delete(p.turns, t.call.id)
	if p.dead == nil {
		p.dead = map[string]bool{}
	}
	p.dead[t.call.id] = true
}

// drainLocked removes and returns every turn waiting for its answer, for
// the caller to fail once c.mu is released. newConn says request ids start
// again (a restart's next connection): late answers of the old one can no
// longer be told apart, so the dead are forgotten too.
func (p *promptTable) drainLocked(newConn bool) []*Turn {
	turns := make([]*Turn, 0, len(p.turns))
	for id, t := range p.turns {
		turns = append(turns, t)
		delete(p.turns, id)
	}
	if newConn {
		p.dead = nil
	}
	return turns
}
