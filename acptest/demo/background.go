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
// BackgroundTicks lines, unless terminal/cancel or the end of its
// connection stops it first.
const (
	BackgroundTicks = 20
	BackgroundTick  = 100 * time.Millisecond
)

// watchers are the running /background terminals, by terminal id; each
// channel is closed by terminal/cancel.
type watchers struct {
	mu   sync.Mutex
	stop map[string]chan struct{}
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
	stop := make(chan struct{})
	w.mu.Lock()
	if w.stop == nil {
		w.stop = map[string]chan struct{}{}
	}
	w.stop[t.SessionID()+"\x00"+term] = stop
	w.mu.Unlock()
	sid := t.SessionID()
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
	t.AfterTurn(func() { w.watch(t.Session, term, stop) })
	return "end_turn", nil
}

func output(term, text string) map[string]any {
	return map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": term,
		"data": base64.StdEncoding.EncodeToString([]byte(text))}
}

// watch streams the watcher's lines until it ends, is cancelled or its
// connection goes; then it reports the exit status before the snapshot
// that lists the terminal gone, as the schema asks.
func (w *watchers) watch(s *acptest.Session, term string, stop chan struct{}) {
	sid := s.SessionID()
	defer func() {
		w.mu.Lock()
		delete(w.stop, sid+"\x00"+term)
		w.mu.Unlock()
	}()
	tick := time.NewTicker(BackgroundTick)
	defer tick.Stop()
	exit := map[string]any{"exitCode": 0, "signal": nil}
loop:
	for i := 1; i <= BackgroundTicks; i++ {
		select {
		case <-s.Context().Done():
			return
		case <-stop:
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
	stop, ok := w.stop[p.SessionID+"\x00"+p.TerminalID]
	delete(w.stop, p.SessionID+"\x00"+p.TerminalID)
	w.mu.Unlock()
	if !ok {
		return nil, &acptest.Error{Code: -32602, Message: "no running terminal " + p.TerminalID + " in session " + p.SessionID}
	}
	close(stop)
	return map[string]any{}, nil
}
