package demo

// The demo's /background (ACP v2): a watcher in an agent-owned terminal
// that outlives the turn, listed in state_update.background, so that a
// client (and acp check's background scenario) can see background work
// and stop it with terminal/cancel.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// BackgroundTicks and BackgroundTick bound /background's watcher: it
// prints a line every BackgroundTick and ends by itself after
// BackgroundTicks lines, unless terminal/cancel, session/close or the end
// of its connection stops it first.
const (
	BackgroundTicks = 20
	BackgroundTick  = 100 * time.Millisecond
)

// watchers are the running /background terminals, by session and
// terminal id.
type watchers struct {
	mu  sync.Mutex
	run map[string]*watcher
	// closed are the sessions session/close closed since they were last
	// opened: a /background turn still running then starts no watcher.
	closed map[string]bool
}

// watcher is one running terminal: stop is closed to stop it (once:
// stopped), done when it has reported its end.
type watcher struct {
	session string
	stop    chan struct{}
	stopped bool
	done    chan struct{}
}

// start runs /background: a tool call that starts the watcher's terminal
// and returns control at once, leaving the terminal listed as background
// work; the watcher runs on after the turn (AfterTurn).
func (w *watchers) start(t *acptest.Turn, msgID string) (schema.StopReason, error) {
	if t.ProtocolVersion() < 2 {
		return "end_turn", t.SayID(msgID, "Background work needs ACP v2 (state_update.background); with the acp command, run it with --protocol 2.")
	}
	n := t.Number()
	term, toolID := fmt.Sprintf("watch-%d", n), fmt.Sprintf("run-%d", n)
	sid := t.SessionID()
	wt := &watcher{session: sid, stop: make(chan struct{}), done: make(chan struct{})}
	w.mu.Lock()
	if w.closed[sid] {
		w.mu.Unlock()
		return "cancelled", nil
	}
	if w.run == nil {
		w.run = map[string]*watcher{}
	}
	w.run[sid+"\x00"+term] = wt
	w.mu.Unlock()
	// The terminal's frames are display-only and not remembered for a
	// replay (UpdateAs): a resumed session does not list it.
	t.ToolCall(acptest.ToolCallSpec{ID: toolID, Title: "Run a watcher in the background", Kind: "execute", Status: "in_progress",
		Content: []any{acptest.TerminalContent(term)}})
	t.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_update", "terminalId": term, "command": "watch", "cwd": t.Cwd(),
		"capabilities": map[string]any{"cancel": map[string]any{}}})
	t.UpdateAs(sid, output(term, "started\n"))
	t.SetBackground(map[string]any{"type": "terminal", "terminalId": term})
	t.UpdateToolCall(acptest.ToolCallSpec{ID: toolID, Status: "completed"})
	t.SayID(msgID, fmt.Sprintf("Started a watcher in the background (terminal %s): it prints a line every %v and ends after %d; terminal/cancel stops it.",
		term, BackgroundTick, BackgroundTicks))
	t.AfterTurn(func() { w.watch(t.Session, term, wt) })
	return "end_turn", nil
}

func output(term, text string) map[string]any {
	return map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": term,
		"data": base64.StdEncoding.EncodeToString([]byte(text))}
}

// watch streams the watcher's lines until it ends, is cancelled or its
// connection goes; then it reports the exit status before the snapshot
// that lists the terminal gone, as the schema asks.
func (w *watchers) watch(s *acptest.Session, term string, wt *watcher) {
	sid := s.SessionID()
	defer func() {
		w.mu.Lock()
		delete(w.run, sid+"\x00"+term)
		w.mu.Unlock()
		close(wt.done)
	}()
	tick := time.NewTicker(BackgroundTick)
	defer tick.Stop()
	exit := map[string]any{"exitCode": 0, "signal": nil}
loop:
	for i := 1; i <= BackgroundTicks; i++ {
		select {
		case <-s.Context().Done():
			return
		case <-wt.stop:
			exit = map[string]any{"exitCode": nil, "signal": "SIGTERM"}
			break loop
		case <-tick.C:
			if s.UpdateAs(sid, output(term, fmt.Sprintf("tick %d\n", i))) != nil {
				return
			}
		}
	}
	s.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_update", "terminalId": term, "exitStatus": exit})
	s.SetBackground()
}

// cancel answers terminal/cancel: it stops a running watcher (the
// exitStatus and the snapshot without it follow), and refuses an unknown
// or ended terminal with -32602, as the schema asks.
func (w *watchers) cancel(_ context.Context, _ *acptest.Conn, method string, params json.RawMessage) (any, error) {
	if method != "terminal/cancel" {
		return nil, &acptest.Error{Code: acptest.CodeMethodNotFound, Message: "Method not found"}
	}
	var p struct {
		SessionID  string `json:"sessionId"`
		TerminalID string `json:"terminalId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &acptest.Error{Code: -32602, Message: err.Error()}
	}
	w.mu.Lock()
	wt := w.run[p.SessionID+"\x00"+p.TerminalID]
	ok := wt != nil && !wt.stopped
	if ok {
		wt.stopped = true
		close(wt.stop)
	}
	w.mu.Unlock()
	if !ok {
		return nil, &acptest.Error{Code: -32602, Message: "no running terminal " + p.TerminalID + " in session " + p.SessionID}
	}
	return map[string]any{}, nil
}

// closeSession stops the session's watchers and waits until each has
// reported its end: closing a session stops its background work, and
// nothing may follow the close response.
func (w *watchers) closeSession(s *acptest.Session) {
	var wait []chan struct{}
	w.mu.Lock()
	if w.closed == nil {
		w.closed = map[string]bool{}
	}
	w.closed[s.SessionID()] = true
	for _, wt := range w.run {
		if wt.session != s.SessionID() {
			continue
		}
		if !wt.stopped {
			wt.stopped = true
			close(wt.stop)
		}
		wait = append(wait, wt.done)
	}
	w.mu.Unlock()
	for _, done := range wait {
		<-done
	}
}

// reopen forgets that the session was closed (session/load, resume).
func (w *watchers) reopen(s *acptest.Session) {
	w.mu.Lock()
	delete(w.closed, s.SessionID())
	w.mu.Unlock()
}
