// This file holds the compliant agent's v2 background work: a prompt
// starting "background" leaves an agent-owned terminal running after the
// turn, which terminal/cancel stops.

package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// withBackground makes o's v2 agent answer a prompt starting "background"
// with a terminal announced and listed in background after the turn's
// idle, until terminal/cancel stops it (exitStatus, then a snapshot
// without it) or its connection ends. With remove false it is broken: the
// cancel is accepted, but the terminal stays listed forever.
func withBackground(o *acptest.Options, remove bool) {
	var mu sync.Mutex
	stops := map[string]chan struct{}{}
	turn := o.OnPrompt
	o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
		if !strings.HasPrefix(t.PromptText(), "background") {
			return turn(t)
		}
		term := fmt.Sprintf("%s-bg-%d", t.SessionID(), t.Number())
		stop := make(chan struct{})
		mu.Lock()
		stops[term] = stop
		mu.Unlock()
		t.AfterTurn(func() {
			sid := t.SessionID()
			state := func(bg ...any) {
				t.UpdateAs(sid, map[string]any{"sessionUpdate": "state_update", "state": "idle", "background": append([]any{}, bg...)})
			}
			t.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_update", "terminalId": term, "command": "watch", "cwd": t.Cwd(),
				"capabilities": map[string]any{"cancel": map[string]any{}}})
			state(map[string]any{"type": "terminal", "terminalId": term})
			select {
			case <-stop:
			case <-t.Context().Done():
				return
			}
			if remove {
				t.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_update", "terminalId": term,
					"exitStatus": map[string]any{"exitCode": nil, "signal": "SIGTERM"}})
				state()
			}
		})
		return schema.StopReasonEndTurn, nil
	}
	o.OnExtMethod = func(_ context.Context, _ *acptest.Conn, method string, params json.RawMessage) (any, error) {
		if method != "terminal/cancel" {
			return nil, &acptest.Error{Code: -32601, Message: "Method not found"}
		}
		var p struct {
			TerminalID string `json:"terminalId"`
		}
		json.Unmarshal(params, &p)
		mu.Lock()
		stop, ok := stops[p.TerminalID]
		delete(stops, p.TerminalID)
		mu.Unlock()
		if !ok {
			return nil, &acptest.Error{Code: -32602, Message: "unknown or exited terminal"}
		}
		close(stop)
		return map[string]any{}, nil
	}
}
