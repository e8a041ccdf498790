package acptest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp/schema"
)

// Turn is the handle a turn script ([Options.OnPrompt]) gets for one
// session/prompt. It embeds the [Session] (updates, requests to the
// client) and through it the [Conn] (raw frames, faults).
//
// The script runs on its own goroutine and may block; every frame it
// writes goes out before the prompt response, which the agent writes when
// the script returns. Frames written by functions registered with
// [Turn.AfterTurn] go out after it.
type Turn struct {
	*Session
	id     json.RawMessage
	prompt json.RawMessage
	number int

	cancelOnce sync.Once
	cancelled  chan struct{}

	// v2: the turn runs the v2 way (Options.Version 2, turn_v2.go).
	v2     bool
	script func(*Turn) (schema.StopReason, error)

	mu    sync.Mutex
	extra map[string]any
	after []func()
	ended bool
}

// startTurn registers a turn for a session/prompt request; it runs on the
// read goroutine so that a session/cancel read next finds the turn.
func (c *Conn) startTurn(m message) (*Turn, func(context.Context) (any, error)) {
	fail := func(err error) (*Turn, func(context.Context) (any, error)) {
		return nil, func(context.Context) (any, error) { return nil, err }
	}
	if err := c.checkAuth(); err != nil {
		return fail(err)
	}
	var p struct {
		SessionID string          `json:"sessionId"`
		Prompt    json.RawMessage `json:"prompt"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return fail(invalidParams(err.Error()))
	}
	c.mu.Lock()
	closed := c.closedIDs[p.SessionID]
	c.mu.Unlock()
	a := c.a
	a.mu.Lock()
	st := a.sessions[p.SessionID]
	if st == nil || closed {
		a.mu.Unlock()
		return fail(notFound("session", p.SessionID))
	}
	st.prompts++
	t := &Turn{
		Session:   &Session{Conn: c, st: st, params: m.Params},
		id:        m.ID,
		prompt:    p.Prompt,
		number:    st.prompts,
		cancelled: make(chan struct{}),
	}
	st.turns[t] = struct{}{}
	a.mu.Unlock()
	if c.isV2() {
		return t, t.acceptV2()
	}

	return t, func(context.Context) (any, error) {
		// The accepted prompt is history, for replay on session/load.
		var blocks []json.RawMessage
		_ = json.Unmarshal(p.Prompt, &blocks)
		for _, b := range blocks {
			t.remember(mustJSON(map[string]any{"sessionUpdate": "user_message_chunk", "content": b}))
		}
		var stop schema.StopReason
		if f := a.opts.OnPrompt; f != nil {
			var err error
			if stop, err = f(t); err != nil {
				return nil, err
			}
		}
		if stop == "" {
			stop = schema.StopReasonEndTurn
			if t.IsCancelled() {
				stop = schema.StopReasonCancelled
			}
		}
		res := map[string]any{"stopReason": stop}
		t.mu.Lock()
		for k, v := range t.extra {
			res[k] = v
		}
		t.mu.Unlock()
		return res, nil
	}
}

// finish runs after the prompt response was written (or the script
// exited without one): the turn stops being cancellable, then the
// AfterTurn functions run.
func (t *Turn) finish(responded bool) {
	t.a.mu.Lock()
	delete(t.st.turns, t)
	t.a.mu.Unlock()
	t.mu.Lock()
	after := t.after
	t.after, t.ended = nil, true
	t.mu.Unlock()
	if responded {
		for _, f := range after {
			f()
		}
	}
}

// RequestID returns the JSON-RPC id of the session/prompt request.
func (t *Turn) RequestID() json.RawMessage { return t.id }

// Number returns the turn's 1-based position among the session's prompts.
func (t *Turn) Number() int { return t.number }

// Prompt returns the prompt's content blocks as sent.
func (t *Turn) Prompt() json.RawMessage { return t.prompt }

// PromptText returns the text of the prompt's text blocks, joined by
// newlines.
func (t *Turn) PromptText() string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(t.prompt, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Cancelled is closed when the client cancels the turn: session/cancel or
// session/close for its session, or $/cancel_request for the prompt. The
// script should then stop, send any last updates and return "cancelled"
// (or ""), as the spec requires.
func (t *Turn) Cancelled() <-chan struct{} { return t.cancelled }

// IsCancelled reports whether Cancelled is closed.
func (t *Turn) IsCancelled() bool {
	select {
	case <-t.cancelled:
		return true
	default:
		return false
	}
}

func (t *Turn) cancel() { t.cancelOnce.Do(func() { close(t.cancelled) }) }

// Pause waits for d and reports true, or reports false as soon as the
// turn is cancelled or the connection ends. For scripts that simulate
// slow work; tests should synchronise on frames, not on Pause.
func (t *Turn) Pause(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.cancelled:
		return false
	case <-t.ctx.Done():
		return false
	}
}

// SetResult adds a field to the prompt response next to stopReason, e.g.
// "usage" or "_meta".
func (t *Turn) SetResult(key string, value any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.extra == nil {
		t.extra = make(map[string]any)
	}
	t.extra[key] = value
}

// AfterTurn registers f to run on the script's goroutine after the prompt
// response has been written, so that the frames f writes arrive after the
// turn ended, as some real agents send late updates. Functions run in
// registration order. Registered after the turn ended, f runs at once.
func (t *Turn) AfterTurn(f func()) {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		f()
		return
	}
	t.after = append(t.after, f)
	t.mu.Unlock()
}
