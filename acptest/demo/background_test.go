package demo

// /background's watcher without a cancel (acp check's background
// scenario cancels it: conformance_test.go).

import (
	"encoding/json"
	"testing"
)

// TestBackgroundEndsByItself: /background's watcher, not cancelled,
// prints BackgroundTicks lines after the turn, reports exit code 0, and
// only then is listed gone.
func TestBackgroundEndsByItself(t *testing.T) {
	c := dialVersion(t, New(nil), 2, nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "/background"))
	ticks, exited := 0, false
	for {
		m := c.next()
		var p struct {
			Update map[string]any `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		u := p.Update
		switch u["sessionUpdate"] {
		case "terminal_output_chunk":
			if !exited {
				ticks++
			}
		case "terminal_update":
			if st, ok := u["exitStatus"].(map[string]any); ok {
				if st["exitCode"] != float64(0) {
					t.Errorf("exit status %v, want exit code 0", st)
				}
				exited = true
			}
		case "state_update":
			if bg, _ := u["background"].([]any); len(bg) == 0 && exited {
				if ticks != BackgroundTicks+1 { // "started" and the ticks
					t.Errorf("%d output chunks, want %d", ticks, BackgroundTicks+1)
				}
				return
			} else if len(bg) == 0 && ticks > 1 {
				t.Fatal("listed gone before its exit status")
			}
		}
	}
}

// TestBackgroundStoppedByClose: session/close stops the watcher, whose
// exit status and the snapshot listing it gone come before the close
// response (nothing may follow it for the session).
func TestBackgroundStoppedByClose(t *testing.T) {
	c := dialVersion(t, New(nil), 2, nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "/background"))
	for listed := false; !listed; { // the watcher runs: it is listed
		var p struct {
			Update struct {
				Background []any `json:"background"`
			} `json:"update"`
		}
		json.Unmarshal(c.next().Params, &p)
		listed = len(p.Update.Background) > 0
	}
	_, ups := c.call("session/close", map[string]any{"sessionId": sid})
	exited := -1
	for i, u := range ups {
		if st, ok := u["exitStatus"].(map[string]any); ok && u["sessionUpdate"] == "terminal_update" {
			if st["signal"] != "SIGTERM" {
				t.Errorf("exit status %v, want SIGTERM", st)
			}
			exited = i
		}
	}
	if exited < 0 || len(ups) == exited+1 {
		t.Fatalf("before the close response: %v; want the exit status, then the snapshot without the terminal", ups)
	}
	if last := ups[len(ups)-1]; last["sessionUpdate"] != "state_update" || len(last["background"].([]any)) != 0 {
		t.Errorf("the last update before the close response is %v, want an empty background list", last)
	}
}
