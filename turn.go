package acp

import (
	"github.com/acpclient/acp/internal/agenttext"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/creachadair/jrpc2"
)

// Turn is one prompt turn, like an exec.Cmd: [Session.Prompt] starts it,
// [Turn.Wait] ends it. Its updates are folded as they arrive, in wire order,
// whoever watches; Updates replays and follows them, State snapshots the
// fold. All methods are safe for concurrent use.
type Turn struct {
	s    *Session
	id   string     // the session/prompt request id, as JSON text; set (under c.mu) when sent
	sent chan error // the result of writing the request
	// expired: the cancel grace ended the turn (guarded by c.mu).
	expired bool

	// Guarded by s.mu.
	fold fold
	log  [][]entry // every event, in chunks of logChunk: seq n is at (n-1)/logChunk, (n-1)%logChunk
	// metas holds the notifications' own _meta, by seq, for the entries
	// that have one.
	metas     map[uint64]json.RawMessage
	seq       uint64 // events applied so far
	released  bool   // the log was released (the turn has ended)
	forgotten bool   // Release was called: the fold goes too, at the end
	readers   int    // iterators reading the log
	// releasePending: release the log when the last reader stops.
	releasePending bool
	waitCh         chan struct{} // closed at the next update or at the end; nil when nobody waits
	ended          bool
	cancelled      bool
	stop           StopReason
	usage          *Usage
	meta           json.RawMessage // the prompt response's _meta
	agentStop      StopReason
	agentErr       *Error
	err            error
	grace          *time.Timer
	stopCtx        func() bool // stops the AfterFunc watching the Prompt context
	// bytes counts what the turn's updates were charged against
	// Limits.MaxTurnBytes (what they retain, or their length if more; see
	// cost.go); overBudget is set once it crossed it (the turn
	// was cancelled), and dropped counts the updates dropped past twice it.
	bytes      int64
	overBudget bool
	dropped    int
	// kept is the part of bytes that was folded: what the turn keeps, as
	// Limits.MaxEndedTurnBytes counts it once it has ended.
	kept int64

	done chan struct{}
}

// TurnState is a snapshot of a turn's folded state. Snapshots are values,
// safe to keep: later updates never change one (text shares memory with the
// live fold but never changes). The raw updates are not part of it:
// [Turn.Updates] and [Turn.Events] replay them.
type TurnState struct {
	// StopReason is why the turn ended; empty while it runs or if it failed.
	// A cancelled turn says cancelled whatever the agent answered.
	StopReason StopReason `json:"stopReason,omitempty"`
	// Usage is the prompt response's token usage, if the agent sent one.
	Usage *Usage `json:"usage,omitempty"`
	// Meta is the prompt response's _meta, if the agent sent one.
	Meta json.RawMessage `json:"_meta,omitempty"`

	Messages     []Message       `json:"messages"`
	Thoughts     []Message       `json:"thoughts"`
	UserMessages []Message       `json:"userMessages,omitempty"`
	ToolCalls    []ToolCallState `json:"toolCalls"`
	Plan         []PlanEntry     `json:"plan"`
	// PlanID is the id of the plan_update list plan whose entries Plan
	// shows (the plan the turn updated last, until its plan_removed); ""
	// when Plan is a legacy plan update's, or empty because the last plan
	// is markdown, a file or removed. SessionState.Plans has every plan.
	PlanID string `json:"planId,omitempty"`

	// Cancelled: the client cancelled the turn. AgentStopReason and
	// AgentError keep what the agent answered when that was not
	// "cancelled" (real agents answer end_turn, or an error).
	Cancelled       bool       `json:"cancelled,omitempty"`
	AgentStopReason StopReason `json:"agentStopReason,omitempty"`
	AgentError      *Error     `json:"agentError,omitempty"`
}

func (f *fold) state() TurnState {
	return TurnState{
		Messages:     f.messages.snapshot(),
		Thoughts:     f.thoughts.snapshot(),
		UserMessages: f.user.snapshot(),
		ToolCalls:    f.tools.snapshot(),
		Plan:         f.plan[:len(f.plan):len(f.plan)],
		PlanID:       f.planID,
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
func (s *Session) Prompt(ctx context.Context, blocks ...ContentBlock) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, callError(MethodSessionPrompt, err)
	}
	if len(blocks) == 0 {
		return nil, callError(MethodSessionPrompt, errors.New("empty prompt"))
	}
	if err := s.c.checkPrompt(blocks); err != nil {
		return nil, err
	}
	req := &PromptRequest{SessionID: s.id, Prompt: blocks}

	// Lock order is c.mu before s.mu (see Client.register), so the turn is
	// registered with the client outside s.mu.
	c := s.c
	t := &Turn{s: s, done: make(chan struct{}), sent: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, callError(MethodSessionPrompt, ErrSessionClosed)
	}
	if s.turn != nil {
		s.mu.Unlock()
		return nil, callError(MethodSessionPrompt, ErrTurnInProgress)
	}
	s.turn = t
	s.turns = append(s.turns, t)
	s.started++
	s.logLocked(sentry{kind: entTurnStart, turn: t})
	s.notifyLocked()
	s.mu.Unlock()
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		<-c.done
		t.fail(callError(MethodSessionPrompt, c.endErr))
		return nil, callError(MethodSessionPrompt, c.endErr)
	}
	c.calls.Add(1)
	c.mu.Unlock()
	// jrpc2 picks the request id when it sends the frame; the wire's hook
	// (onCallSent) learns it there and gives it to c.sending. One prompt at
	// a time passes this point, for the few microseconds jrpc2 takes to
	// encode and queue the frame, so the id always reaches its own turn.
	c.promptSlot <- struct{}{}
	c.mu.Lock()
	c.sending = t
	c.mu.Unlock()
	go c.runPrompt(t, req)

	var err error
	select {
	case err = <-t.sent:
	case <-t.done:
		if t.RequestID() == "" {
			return nil, t.Err() // never handed to the wire (the connection ended)
		}
		// The answer can end the turn before the writer reports the write.
		err = <-t.sent
	case <-ctx.Done():
		// The frame may still go out; cancelling covers both cases.
		t.Cancel()
		return t, nil
	}
	if err != nil {
		t.fail(callError(MethodSessionPrompt, c.mapSendErr(err)))
		return nil, t.Err()
	}
	stop := context.AfterFunc(ctx, t.Cancel)
	s.mu.Lock()
	if t.ended {
		stop()
	} else {
		t.stopCtx = stop
	}
	s.mu.Unlock()
	return t, nil
}

// runPrompt is the session/prompt call: an ordinary jrpc2 call, whose
// answer the reader also reads on its way to jrpc2 to end the turn in wire
// order (onResponse). What jrpc2 then delivers here only matters when the
// agent never answered: jrpc2 failed the call because the connection ended.
func (c *Client) runPrompt(t *Turn, req *PromptRequest) {
	defer c.calls.Done()
	// The call is not tied to the Prompt context: ending a turn early is
	// session/cancel (see Turn.Cancel), never an abandoned call.
	rsps, err := c.rpc.Batch(c.baseCtx, []jrpc2.Spec{{Method: MethodSessionPrompt, Params: req}})
	if err != nil {
		c.mu.Lock()
		if c.sending == t { // never reached the wire
			c.sending = nil
			<-c.promptSlot
		}
		c.mu.Unlock()
		t.fail(callError(MethodSessionPrompt, c.mapSendErr(err)))
		return
	}
	if out := c.wire.Settle(rsps[0].ID()); out.Answered {
		return // the reader ended the turn
	}
	<-c.done
	t.fail(callError(MethodSessionPrompt, c.endErr))
}

// onCallSent is the wire's hook for every call jrpc2 sends, called before
// the frame can reach the agent. A prompt's turn learns its request id here
// and is registered under it, so its response always finds it.
func (c *Client) onCallSent(id []byte, method string, params []byte) func(error) {
	if method != MethodSessionPrompt {
		return c.onCreateSent(id, method, params)
	}
	c.mu.Lock()
	t := c.sending
	c.sending = nil
	if t != nil {
		<-c.promptSlot
		t.id = string(id)
		if !t.expired {
			c.prompts[t.id] = t
		}
	}
	c.mu.Unlock()
	if t == nil {
		return nil
	}
	return func(err error) { t.sent <- err }
}

func (c *Client) mapSendErr(err error) error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return err
	}
}

// checkPrompt enforces promptCapabilities (spec: the client MUST restrict
// prompt content to what the agent advertised).
func (c *Client) checkPrompt(blocks []ContentBlock) error {
	pc := c.init.AgentCapabilities.PromptCapabilities
	for i, b := range blocks {
		var need string
		switch b.(type) {
		case *ImageContent:
			if !pc.Image {
				need = "promptCapabilities.image"
			}
		case *AudioContent:
			if !pc.Audio {
				need = "promptCapabilities.audio"
			}
		case *EmbeddedResource:
			if !pc.EmbeddedContext {
				need = "promptCapabilities.embeddedContext"
			}
		case nil:
			return callError(MethodSessionPrompt, fmt.Errorf("prompt block %d is nil", i))
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
	return t.id
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
func (t *Turn) Wait() (StopReason, error) {
	<-t.done
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.stop, t.err
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
	return t.stateLocked(), t.seq
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
	st.StopReason = t.stop
	st.Usage = t.usage
	st.Meta = t.meta
	st.Cancelled = t.cancelled
	st.AgentStopReason = t.agentStop
	st.AgentError = t.agentErr
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
// rely on two readers getting the same pointer). The turn's log is not
// released (see Limits.TurnLogs) while an iteration runs; one started after
// the release yields nothing.
func (t *Turn) Updates() iter.Seq[Update] {
	return func(yield func(Update) bool) {
		t.s.mu.Lock()
		t.enterLocked()
		t.s.mu.Unlock()
		defer t.leave()
		var next uint64 // entries read
		for {
			t.s.mu.Lock()
			if t.released {
				t.s.mu.Unlock()
				return
			}
			var batch []entry
			var us []Update
			if next < t.seq {
				c := t.log[next/logChunk]
				batch = c[next%logChunk : len(c) : len(c)]
				us = updatesLocked(batch)
			}
			ended := t.ended
			var wait chan struct{}
			if len(batch) == 0 && !ended {
				if t.waitCh == nil {
					t.waitCh = make(chan struct{})
				}
				wait = t.waitCh
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

// applyLocked folds one update into the turn; meta is its notification's
// own _meta. s.mu is held.
func (t *Turn) applyLocked(u Update, meta json.RawMessage) {
	tc := t.fold.apply(u)
	e := newEntry(entAgent, u, tc)
	if k := plainText(u); k != textNone {
		if te, ok := textEntry(k, t.fold.lastMsg, t.fold.lastPos); ok {
			e = te
		}
	}
	t.logAgentLocked(e, meta)
	t.markIfCancelledLocked(tc)
}

// logAgentLocked logs the entry of an agent's update, whose notification
// had its own _meta when meta is not nil. s.mu is held.
func (t *Turn) logAgentLocked(e entry, meta json.RawMessage) {
	if meta != nil && !t.released {
		if t.metas == nil {
			t.metas = map[uint64]json.RawMessage{}
		}
		t.metas[t.seq+1] = meta
		e.x |= entryMetaBit
	}
	t.appendLocked(e)
}

// applyTextLocked is applyLocked for a plain text chunk of kind k, folded
// from the wire as appendText says; it logs no decoded update (see entry).
// s.mu is held.
func (t *Turn) applyTextLocked(k uint8, m *msgAcc, id, plain []byte, text string, meta json.RawMessage) {
	m, pos := t.fold.appendText(k, m, id, plain, text)
	e, ok := textEntry(k, m, pos)
	if !ok {
		e = newEntry(entAgent, newTextChunk(k, m.id, m.slice(pos)), nil)
	}
	t.logAgentLocked(e, meta)
}

func (t *Turn) wakeLocked() {
	if t.waitCh != nil {
		close(t.waitCh)
		t.waitCh = nil
	}
}

// Cancel cancels the turn the way the spec demands, at once:
//  1. session/cancel is sent ahead of any queued traffic;
//  2. the turn's unfinished tool calls are marked cancelled (a local status,
//     ToolCallStatusCancelled), and so is every tool call the agent announces
//     or reopens afterwards with an unfinished status. The mark holds
//     against the agent's later pending or in_progress, and yields to its
//     later completed or failed, which say what the tool really did: an
//     agent that reports failed for the tools it stopped leaves no
//     cancelled status in the final state (see ToolCallStatusCancelled for
//     what a renderer should show);
//  3. every pending permission request of the session is answered
//     {"outcome":"cancelled"} and its handler's context cancelled (a later
//     answer from the handler is dropped);
//  4. the turn keeps folding what the agent still sends until the agent
//     answers session/prompt; Wait then reports StopReasonCancelled, whatever
//     the agent answered (its answer is kept in State);
//  5. if the agent does not answer within ClientOptions.CancelGrace, the turn
//     ends locally with an error wrapping ErrCancelGrace, and a late answer is
//     ignored.
//
// Cancel returns without waiting. Cancelling an ended or already cancelled
// turn does nothing.
func (t *Turn) Cancel() {
	s, c := t.s, t.s.c
	s.mu.Lock()
	if t.ended || t.cancelled {
		s.mu.Unlock()
		return
	}
	t.cancelled = true
	t.logLocked(entCancel, nil, nil)
	t.markAllLocked()
	perms := make([]*inbound, 0, len(s.perms))
	for _, in := range s.perms {
		perms = append(perms, in)
	}
	grace := c.opts.CancelGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	t.grace = time.AfterFunc(grace, t.expire)
	s.notifyLocked()
	s.mu.Unlock()

	frame, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  MethodSessionCancel,
		"params":  &CancelNotification{SessionID: s.id},
	})
	_ = c.wire.SendRaw(frame, true)
	for _, in := range perms {
		in.cancel(errTurnCancelled)
	}
}

// errTurnCancelled is the cancellation cause of a permission handler whose
// turn was cancelled: its request is answered with the cancelled outcome.
var errTurnCancelled = errors.New("acp: the turn was cancelled")

// expire ends a cancelled turn whose agent did not answer in time.
func (t *Turn) expire() {
	c := t.s.c
	c.mu.Lock()
	t.expired = true // if it goes out still, its answer finds no turn
	if c.prompts[t.id] == t {
		delete(c.prompts, t.id)
		if c.deadPrompts == nil {
			c.deadPrompts = map[string]bool{}
		}
		c.deadPrompts[t.id] = true
	}
	c.mu.Unlock()
	t.finish(func() {
		t.stop = StopReasonCancelled
		t.err = callError(MethodSessionPrompt, ErrCancelGrace)
	})
}

// fail ends the turn with err (connection lost, write failed, line too long).
func (t *Turn) fail(err error) {
	t.finish(func() {
		if t.cancelled {
			t.stop = StopReasonCancelled
		}
		t.err = err
	})
}

// finish ends the turn once; set runs under s.mu to record the outcome.
// From here on, updates for the session are kept outside any turn.
func (t *Turn) finish(set func()) {
	s := t.s
	s.mu.Lock()
	if t.ended {
		s.mu.Unlock()
		return
	}
	t.ended = true
	set()
	t.logLocked(entEnd, nil, nil)
	if s.turn == t {
		s.turn = nil
	}
	if t.grace != nil {
		t.grace.Stop()
	}
	released := s.retainLocked(t)
	endedKept := s.endedKept
	stop := t.stopCtx
	unregister := s.closed && s.turn == nil
	dropped, bytes := t.dropped, t.bytes
	s.notifyLocked()
	close(t.done)
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if dropped > 0 {
		s.c.diag(string(DiagLimitExceeded), fmt.Sprintf("a turn of session %s ended; %d of its updates and permission requests were not folded (it sent %d bytes, over twice Limits.MaxTurnBytes)", agenttext.Item(s.id), dropped, bytes), nil)
	}
	if released > 0 {
		s.c.diag(string(DiagLimitExceeded), fmt.Sprintf("released the %d oldest ended turns of session %s: its ended turns kept more than Limits.MaxEndedTurnBytes (%d); they keep %d bytes now", released, agenttext.Item(s.id), s.c.opts.Limits.MaxEndedTurnBytes, endedKept), nil)
	}
	if unregister {
		s.c.unregister(s)
	}
}

// onResponse is the wire's hook for every response to a call of ours, on
// the reader goroutine, before jrpc2 has it. A prompt's turn ends here, in
// wire order: every update the agent wrote before the answer is in the
// turn, every one after it is not. jrpc2 still completes the call.
func (c *Client) onResponse(id []byte, method string, raw []byte) {
	if method != MethodSessionPrompt {
		c.onCreateAnswered(id, method, raw)
		return
	}
	key := string(id)
	c.mu.Lock()
	t := c.prompts[key]
	if t != nil {
		delete(c.prompts, key)
	} else if c.deadPrompts[key] {
		delete(c.deadPrompts, key)
		c.mu.Unlock()
		c.diag("late_response", "ignored the answer to a cancelled prompt that came after the cancel grace", raw)
		return
	}
	c.mu.Unlock()
	if t == nil {
		return
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.fail(callError(MethodSessionPrompt, err))
		return
	}
	var res PromptResponse
	var decodeErr error
	if msg.Error == nil {
		decodeErr = json.Unmarshal(msg.Result, &res)
	}
	t.finish(func() {
		t.usage = res.Usage
		t.meta = res.Meta
		switch {
		case t.cancelled:
			// The spec says the agent answers a cancelled turn with
			// "cancelled"; real agents answer end_turn or an error. It is
			// cancelled either way; keep what they said.
			t.stop = StopReasonCancelled
			if msg.Error != nil {
				t.agentErr = msg.Error
			} else if res.StopReason != StopReasonCancelled {
				t.agentStop = res.StopReason
			}
		case msg.Error != nil:
			t.err = callError(MethodSessionPrompt, c.authError(msg.Error))
		case decodeErr != nil:
			t.err = callError(MethodSessionPrompt, fmt.Errorf("decoding the result: %w", decodeErr))
		default:
			t.stop = res.StopReason
		}
	})
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
		p.Plan = []PlanEntry{}
	}
	return json.Marshal(p)
}
