package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"time"
)

// A turn's life: it runs, may be cancelled, and ends once, with an
// outcome. This is the part of a turn where protocol versions differ. In
// v1 (turn_v1.go) a turn starts when session/prompt is on the wire and
// ends at the agent's answer to it; in v2 the answer only accepts the
// prompt and the turn ends at the agent's idle state_update. Either way
// the end goes through Session.endTurn with the agent's answer (agentEnded)
// or a local reason (failed, expired), so the log, the fold, the budget
// and retention do not know which version ran the turn.

// turnLife is where a turn is in its life and, once ended, how it ended.
// Guarded by s.mu.
type turnLife struct {
	ended     bool
	cancelled bool // Cancel was called (or the Prompt context ended)
	// out is the outcome, final once ended: Wait, State and the end
	// event report it.
	out TurnEnd
	// grace ends a cancelled turn whose agent does not answer in time.
	grace *time.Timer
	// stopCtx stops the AfterFunc watching the Prompt context.
	stopCtx func() bool
}

// agentAnswer is how the agent ended a turn: its stop reason and the rest
// of its answer, or the error it answered with.
type agentAnswer struct {
	stop  schema.StopReason
	usage *schema.Usage
	meta  json.RawMessage
	err   *schema.Error // the agent answered an error
	// fail is the turn's error when it was not cancelled: err as the
	// caller reports it, or why the answer did not decode.
	fail error
}

// cancel marks a running turn cancelled and reports whether it was
// running and not cancelled yet.
func (l *turnLife) cancel() bool {
	if l.ended || l.cancelled {
		return false
	}
	l.cancelled = true
	return true
}

// agentEnded records what the agent answered as the outcome.
func (l *turnLife) agentEnded(a agentAnswer) {
	l.out.Usage = a.usage
	l.out.Meta = a.meta
	switch {
	case l.cancelled:
		// The spec says the agent answers a cancelled turn with
		// "cancelled"; real agents answer end_turn or an error. It is
		// cancelled either way; keep what they said.
		l.out.StopReason = schema.StopReasonCancelled
		if a.err != nil {
			l.out.AgentError = a.err
		} else if a.stop != schema.StopReasonCancelled {
			l.out.AgentStopReason = a.stop
		}
	case a.fail != nil:
		l.out.Err = a.fail
	default:
		l.out.StopReason = a.stop
	}
}

// failed records a local failure (connection lost, write failed, line too
// long) as the outcome; a cancelled turn still says cancelled.
func (l *turnLife) failed(err error) {
	if l.cancelled {
		l.out.StopReason = schema.StopReasonCancelled
	}
	l.out.Err = err
}

// expired records that the cancel grace ended the turn.
func (l *turnLife) expired(err error) {
	l.out.StopReason = schema.StopReasonCancelled
	l.out.Err = err
}

// state adds the outcome to a snapshot of the fold.
func (l *turnLife) state(st *TurnState) {
	st.StopReason = l.out.StopReason
	st.Usage = l.out.Usage
	st.Meta = l.out.Meta
	st.Cancelled = l.cancelled
	st.AgentStopReason = l.out.AgentStopReason
	st.AgentError = l.out.AgentError
}
