package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acpclient/acp/schema"
	"iter"
)

// Turn is one prompt turn, like an exec.Cmd: [Session.Prompt] starts it,
// [Turn.Wait] ends it. Its updates are folded as they arrive, in wire order,
// whoever watches; Updates replays and follows them, State snapshots the
// fold. All methods are safe for concurrent use.
type Turn struct {
	s *Session
	// call is the turn's session/prompt call, as the client's promptTable
	// knows it (turn_prompts.go).
	call promptCall

	// Guarded by s.mu.
	fold fold
	// log holds every event of the turn, entries as feed.go packs them
	// (and runs of plain text chunks as turnlog.go keeps those), until it
	// is released (Limits.TurnLogs, Release).
	log turnLog
	// metas holds the notifications' own _meta, by seq, for the entries
	// that have one.
	metas   map[uint64]json.RawMessage
	updated notifier // fired at every event: Updates and Events wait on it
	// life is how far the turn has come, and how it ended (turn_life.go).
	life turnLife
	// v2 is what a v2 turn knows of the agent's state (turn_v2.go).
	v2 turnV2
	// budget counts the turn's updates against Limits.MaxTurnBytes.
	budget    byteBudget
	forgotten bool // Release was called: the fold goes too, at the end
	// byAgent: a child session's turn, started by the agent (subagents.go).
	byAgent bool
	// obs is the Observer's watch on the turn; nil without one. octx is
	// the context Observer.Turn returned, which session/cancel is sent
	// with too; nil without an Observer. Both are set before the turn is
	// the session's and never change.
	obs  *turnObs
	octx context.Context
	// prompt is the text of the prompt's text blocks: what a restart's
	// replay sends back as the user's message (reconciler).
	prompt       string
	promptBlocks int

	done chan struct{} // closed when the turn has ended
}

// TurnState is a snapshot of a turn's folded state. Snapshots are values,
// safe to keep: later updates never change one (text shares memory with the
// live fold but never changes). The raw updates are not part of it:
// [Turn.Updates] and [Turn.Events] replay them.
type TurnState struct {
	// StopReason is why the turn ended; empty while it runs or if it failed.
	// A cancelled turn says cancelled whatever the agent answered.
	StopReason schema.StopReason `json:"stopReason,omitempty"`
	// Usage is the prompt response's token usage, if the agent sent one.
	Usage *schema.Usage `json:"usage,omitempty"`
	// Meta is the prompt response's _meta, if the agent sent one.
	Meta json.RawMessage `json:"_meta,omitempty"`

	Messages     []Message       `json:"messages"`
	Thoughts     []Message       `json:"thoughts"`
	UserMessages []Message       `json:"userMessages,omitempty"`
	ToolCalls    []ToolCallState `json:"toolCalls"`
	// Plan is the entries of the turn's latest plan. It is nil both when
	// the turn received no plan and when its latest plan has no entries
	// (an agent clearing its plan): the two are one state, never an empty
	// non-nil slice, and JSON (`acp --json`'s turn_end) writes [] for both.
	Plan []schema.PlanEntry `json:"plan"`
	// PlanID is the id of the plan_update list plan whose entries Plan
	// shows (the plan the turn updated last, until its plan_removed); ""
	// when Plan is a legacy plan update's, or empty because the last plan
	// is markdown, a file or removed. SessionState.Plans has every plan.
	PlanID string `json:"planId,omitempty"`
	// SessionMessages are the messages between sessions that arrived on
	// this turn's session (session_message, session_message_chunk), one
	// per messageId, in the order each started.
	SessionMessages []InterSessionMessage `json:"sessionMessages,omitempty"`

	// Cancelled: the client cancelled the turn. AgentStopReason and
	// AgentError keep what the agent answered when that was not
	// "cancelled" (real agents answer end_turn, or an error).
	Cancelled       bool              `json:"cancelled,omitempty"`
	AgentStopReason schema.StopReason `json:"agentStopReason,omitempty"`
	AgentError      *schema.Error     `json:"agentError,omitempty"`
}

func (f *fold) state() TurnState {
	return TurnState{
		Messages:     f.messages.snapshot(),
		Thoughts:     f.thoughts.snapshot(),
		UserMessages: f.user.snapshot(),
		ToolCalls:    f.tools.snapshot(),
		Plan:         f.plan[:len(f.plan):len(f.plan)],
		PlanID:       f.planID,

		SessionMessages: f.smsgs.snapshot(),
	}
}

// Prompt sends session/prompt and returns the running turn once the request
// is on the wire. blocks may mix any content; image, audio and embedded
// resources fail locally, before anything is sent, unless the agent
// advertised them in promptCapabilities.
//
// One turn runs at a time per session: Prompt returns ErrTurnInProgress
// while one runs (turns are not queued). A ctx that is already done sends
// nothing. When ctx ends while the turn runs, the turn is cancelled exactly
// as by [Turn.Cancel] — the call is never simply abandoned.
func (s *Session) Prompt(ctx context.Context, blocks ...schema.ContentBlock) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, callError(schema.MethodSessionPrompt, err)
	}
	if len(blocks) == 0 {
		return nil, callError(schema.MethodSessionPrompt, errors.New("empty prompt"))
	}
	if err := s.checkMutable(schema.MethodSessionPrompt); err != nil {
		return nil, err
	}
	if err := s.c.checkPrompt(blocks); err != nil {
		return nil, err
	}
	req := &schema.PromptRequest{SessionID: s.id, Prompt: blocks}

	// Lock order is c.mu before s.mu (see Client.register), so the turn is
	// registered with the client outside s.mu, once it is the session's.
	c := s.c
	// During a restart the turn waits for the restored session rather
	// than fail on the dead connection (restart.go).
	if _, err := c.connFor(ctx); err != nil {
		return nil, callError(schema.MethodSessionPrompt, err)
	}
	t := &Turn{s: s, done: make(chan struct{}), call: promptCall{sent: make(chan error, 1)}}
	// Observed before the turn is the session's: from then on the reader
	// may hand its updates to t.obs.
	octx := c.observeTurn(ctx, t)
	if c.sup != nil { // only a restart's reconciler reads it
		t.prompt, t.promptBlocks = promptText(blocks)
	}
	s.mu.Lock()
	if s.closed {
		err := ErrSessionClosed
		if s.restore.lost != nil {
			err = s.restore.lost
		}
		s.mu.Unlock()
		err = callError(schema.MethodSessionPrompt, err)
		t.obs.end(TurnEnd{Err: err})
		return nil, err
	}
	if s.turn != nil {
		s.mu.Unlock()
		err := callError(schema.MethodSessionPrompt, ErrTurnInProgress)
		t.obs.end(TurnEnd{Err: err})
		return nil, err
	}
	s.turn = t
	s.turns = append(s.turns, t)
	s.started++
	s.logLocked(sentry{kind: entTurnStart, turn: t})
	s.notifyLocked()
	s.mu.Unlock()
	return c.startPrompt(ctx, octx, t, req)
}

// checkPrompt enforces promptCapabilities (spec: the client MUST restrict
// prompt content to what the agent advertised).
func (c *Client) checkPrompt(blocks []schema.ContentBlock) error {
	pc := c.agent().AgentCapabilities.PromptCapabilities
	for i, b := range blocks {
		var need string
		switch b.(type) {
		case *schema.ImageContent:
			if !pc.Image {
				need = "promptCapabilities.image"
			}
		case *schema.AudioContent:
			if !pc.Audio {
				need = "promptCapabilities.audio"
			}
		case *schema.EmbeddedResource:
			if !pc.EmbeddedContext {
				need = "promptCapabilities.embeddedContext"
			}
		case nil:
			return callError(schema.MethodSessionPrompt, fmt.Errorf("prompt block %d is nil", i))
		}
		if need != "" {
			return notSupported(fmt.Sprintf("session/prompt block %d (%T)", i, b), need)
		}
	}
	return nil
}

// RequestID returns the JSON-RPC id of the turn's session/prompt request,
// as JSON text ("3" for the first turn of a fresh client). It is empty
// until the request was handed to the wire, which Prompt waits for unless
// its context ended first.
func (t *Turn) RequestID() string {
	c := t.s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return t.call.id
}

// Session returns the turn's session.
func (t *Turn) Session() *Session { return t.s }

// Done is closed when the turn has ended.
func (t *Turn) Done() <-chan struct{} { return t.done }

// Wait blocks until the turn has ended: the agent answered session/prompt
// and every update it wrote before the answer is folded, or the turn
// failed (connection lost, agent error, cancel grace expired). A cancelled
// turn returns StopReasonCancelled — with a nil error when the agent
// answered, with an error wrapping ErrCancelGrace when it did not in time.
func (t *Turn) Wait() (schema.StopReason, error) {
	<-t.done
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.life.out.StopReason, t.life.out.Err
}

// Err returns the turn's error once it has ended, nil before.
func (t *Turn) Err() error {
	select {
	case <-t.done:
		_, err := t.Wait()
		return err
	default:
		return nil
	}
}

// State returns a snapshot of the turn's folded state, as of the last event
// applied. Its cost is O(messages + tool calls + plan entries) in time and
// allocation — the text itself is shared, not copied — so a UI that redraws
// on every event should use each event's ToolCall, [Turn.ToolCall] or
// [Turn.LastMessage] instead.
func (t *Turn) State() TurnState {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.stateLocked()
}

// Snapshot returns State together with the sequence number of the last
// event folded into it: Events(ctx, seq) then yields exactly the events
// that came after the snapshot.
func (t *Turn) Snapshot() (TurnState, uint64) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.stateLocked(), t.log.seq
}

// ToolCall returns one tool call of the turn as merged so far, in O(1).
func (t *Turn) ToolCall(id string) (ToolCallState, bool) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if tc, ok := t.fold.tools.get(id); ok {
		return *tc, true
	}
	return ToolCallState{}, false
}

// LastMessage returns the agent message started last, with its text so far.
// Its cost does not grow with the turn: the text is joined incrementally
// and shared, not copied.
func (t *Turn) LastMessage() (Message, bool) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.fold.messages.last()
}

func (t *Turn) stateLocked() TurnState {
	st := t.fold.state()
	t.life.state(&st)
	return st
}

// Updates returns an iterator over the turn's updates: it replays those
// already received, then follows new ones as they are folded, and stops when
// the turn has ended and all were yielded. Any number of goroutines may range
// over it at once; each reads the turn's log at its own pace, so a slow
// consumer never slows the connection or the other consumers. It yields only
// the agent's updates, every one in wire order, unknown kinds included;
// [Turn.Events] yields every change to the turn's state. A plain text chunk
// is yielded as an equal value made again from the log (a reader must not
// rely on two readers getting the same pointer), made with up to 63 others
// in one allocation, which keeping any of them keeps. The turn's log is not
// released (see Limits.TurnLogs) while an iteration runs; one started after
// the release yields nothing.
func (t *Turn) Updates() iter.Seq[schema.Update] {
	return func(yield func(schema.Update) bool) {
		t.s.mu.Lock()
		t.log.enter()
		t.s.mu.Unlock()
		defer t.leave()
		var next uint64     // entries read
		var scratch []entry // a run's entries (turnlog.go)
		// The chunks are new values (a reader may keep them), in a slice
		// used again batch after batch (the reader keeps none of it): at
		// most logChunk updates, 4 KB, held while the iteration runs.
		r := textReuse{sliceOnly: true}
		for {
			t.s.mu.Lock()
			if t.log.released {
				t.s.mu.Unlock()
				return
			}
			batch := t.log.from(next+1, &scratch)
			us := updatesLocked(batch, &r)
			ended := t.life.ended
			var wait chan struct{}
			if len(batch) == 0 && !ended {
				wait = t.updated.wait()
				// A waiting reader holds none of the chunks it yielded
				// (they are the reader's to keep or drop), only the slice.
				clear(r.us)
			}
			t.s.mu.Unlock()
			for i := range batch {
				next++
				if batch[i].kind() != entAgent {
					continue
				}
				if u, _ := entryUpdate(&batch[i], us, i); !yield(u) {
					return
				}
			}
			if len(batch) == 0 {
				if ended {
					return
				}
				<-wait
			}
		}
	}
}

// recordLocked logs the turn's event of an agent's update that the fold
// stage applied to t.fold (tc: the tool call it changed); meta is its
// notification's own _meta. A plain text chunk is logged as a pointer
// into its message, not as the update (see entry). s.mu is held.
func (t *Turn) recordLocked(u schema.Update, meta json.RawMessage, tc *ToolCallState) {
	var e entry
	if te := t.fold.tools.takeEntry(u, tc); te != nil {
		e = toolEntry(entAgent, te)
	} else {
		e = newEntry(entAgent, u, tc)
	}
	if k := plainText(u); k != textNone {
		if te, ok := textEntry(k, t.fold.lastMsg, t.fold.lastPos); ok {
			e = te
		}
	}
	t.logAgentLocked(e, meta)
}

// markFoldLocked is the fold of the cancellation policy after an update
// that changed tc (nil: none): on a cancelled turn, it marks tc
// cancelled unless it finished, and returns the mark and the tool call's
// state after it, for the record stage to log after the update's own
// event (nil, nil when nothing was marked). s.mu is held.
func (t *Turn) markFoldLocked(tc *ToolCallState) (*schema.ToolCallUpdate, *ToolCallState) {
	if tc == nil || !t.life.cancelled {
		return nil, nil
	}
	ids := t.fold.tools.toMark(true, tc)
	if len(ids) == 0 {
		return nil, nil
	}
	return t.foldMarkLocked(ids[0])
}

// foldMarkLocked marks the tool call id of a cancelled turn cancelled in
// the turn's fold and returns the mark and the tool call's new state; the
// caller logs them as a local event. s.mu is held.
func (t *Turn) foldMarkLocked(id string) (*schema.ToolCallUpdate, *ToolCallState) {
	st := schema.ToolCallStatusCancelled
	mk := &schema.ToolCallUpdate{ToolCallID: id, Status: &st}
	// A mark is never dropped (the tool call will not run), but it is kept,
	// so it counts against the turn's budget like what the agent sent.
	t.budget.charged += costMark
	t.budget.keep(costMark)
	t.fold.visits++
	return mk, t.fold.tools.update(mk)
}

// logAgentLocked logs the entry of an agent's update, whose notification
// had its own _meta when meta is not nil. s.mu is held.
func (t *Turn) logAgentLocked(e entry, meta json.RawMessage) {
	if meta != nil && !t.log.released {
		if t.metas == nil {
			t.metas = map[uint64]json.RawMessage{}
		}
		t.metas[t.log.seq+1] = meta
		e.x |= entryMetaBit
	}
	t.appendLocked(e)
}

// applyTextLocked is the fold and record stages for a plain text chunk of
// kind k on the fast path (Client.applyPlainText): folded from the wire as
// appendText says, then logged with no decoded update (see entry). s.mu is
// held.
func (t *Turn) applyTextLocked(k uint8, m *msgAcc, id, plain []byte, text string, meta json.RawMessage) {
	m, pos := t.fold.appendText(k, m, id, plain, text)
	e, ok := textEntry(k, m, pos)
	if !ok {
		e = newEntry(entAgent, newTextChunk(k, m.id, m.slice(pos)), nil)
	}
	t.logAgentLocked(e, meta)
}

// MarshalJSON writes the state with empty lists as [] rather than null, so
// scripts reading `acp --json` can index them without a null check.
func (st TurnState) MarshalJSON() ([]byte, error) {
	type plain TurnState
	p := plain(st)
	if p.Messages == nil {
		p.Messages = []Message{}
	}
	if p.Thoughts == nil {
		p.Thoughts = []Message{}
	}
	if p.ToolCalls == nil {
		p.ToolCalls = []ToolCallState{}
	}
	if p.Plan == nil {
		p.Plan = []schema.PlanEntry{}
	}
	return json.Marshal(p)
}
