package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func TestPermissionRoundTrip(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		out, err := t.RequestPermission(ToolCallSpec{ID: "tc1", Title: "Edit", Kind: "edit"}, nil)
		if err != nil {
			return "", err
		}
		id, cancelled, err := ParseOutcome(out)
		t.Say(fmt.Sprintf("%s %v %v", id, cancelled, err))
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	var asked []wireMsg
	c.onRequest = func(m wireMsg) (any, *Error) {
		asked = append(asked, m)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}, nil
	}
	res, before := c.call("session/prompt", prompt(sid, "go"))
	if len(asked) != 1 || asked[0].Method != "session/request_permission" {
		t.Fatalf("agent requests: %v", asked)
	}
	if string(asked[0].ID) != "0" {
		t.Errorf("first agent request id = %s, want 0", asked[0].ID)
	}
	wantParams := map[string]any{
		"sessionId": sid,
		"toolCall":  map[string]any{"toolCallId": "tc1", "title": "Edit", "kind": "edit"},
		"options": []any{
			map[string]any{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
			map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
		},
	}
	if d := cmp.Diff(wantParams, decode(t, asked[0].Params)); d != "" {
		t.Errorf("permission params (-want +got):\n%s", d)
	}
	if got := updates(t, before); len(got) != 1 || got[0].(map[string]any)["content"].(map[string]any)["text"] != "allow false <nil>" {
		t.Errorf("updates: %v", got)
	}
	if d := cmp.Diff(map[string]any{"stopReason": "end_turn"}, decode(t, res)); d != "" {
		t.Error(d)
	}
}

func TestStringIDs(t *testing.T) {
	a := New(&Options{StringIDs: true, OnPrompt: func(t *Turn) (schema.StopReason, error) {
		_, err := t.Call(t.Context(), "_x/ping", nil)
		return "", err
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	var ids []string
	c.onRequest = func(m wireMsg) (any, *Error) { ids = append(ids, string(m.ID)); return map[string]any{}, nil }
	c.call("session/prompt", prompt(sid, "x"))
	c.call("session/prompt", prompt(sid, "x"))
	if d := cmp.Diff([]string{`"req-0"`, `"req-1"`}, ids); d != "" {
		t.Error(d)
	}
}

func TestCancel(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("started")
		select {
		case <-t.Cancelled():
		case <-t.Context().Done():
			return "", t.Context().Err()
		}
		t.UpdateToolCall(ToolCallSpec{ID: "tc1", Status: "failed"})
		return "", nil // "" after a cancel means "cancelled"
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	if m := c.next(); m.Method != "session/update" {
		t.Fatalf("got %s", m.raw)
	}
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	resp, before := c.await(id)
	if len(before) != 1 {
		t.Errorf("want the tool-call update before the response, got %d messages", len(before))
	}
	if d := cmp.Diff(map[string]any{"stopReason": "cancelled"}, decode(t, resp.Result)); d != "" {
		t.Error(d)
	}
	if got := a.Received("session/cancel"); len(got) != 1 {
		t.Errorf("Received(session/cancel) = %s", got)
	}
}

func TestCancelWithPendingPermission(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		out, err := t.RequestPermission("tc1", []schema.PermissionOption{{OptionID: "ok", Name: "OK", Kind: "allow_always"}})
		if err != nil {
			return "", err
		}
		if _, cancelled, _ := ParseOutcome(out); !cancelled || !t.IsCancelled() {
			return "", errors.New("want a cancelled outcome after session/cancel")
		}
		return "cancelled", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	perm := c.next()
	if perm.Method != "session/request_permission" {
		t.Fatalf("got %s", perm.raw)
	}
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	c.reply(perm.ID, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
	resp, _ := c.await(id)
	if resp.Error != nil || !json.Valid(resp.Result) || decode(t, resp.Result).(map[string]any)["stopReason"] != "cancelled" {
		t.Errorf("got %s", resp.raw)
	}
}

func TestCancelRequestForPrompt(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("started")
		<-t.Cancelled()
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	c.next()
	c.notify("$/cancel_request", map[string]any{"requestId": id})
	resp, _ := c.await(id)
	if decode(t, resp.Result).(map[string]any)["stopReason"] != "cancelled" {
		t.Errorf("got %s", resp.raw)
	}
}

func TestCancelRequestForExtMethod(t *testing.T) {
	a := New(&Options{OnExtMethod: func(ctx context.Context, c *Conn, method string, params json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	c := dial(t, a)
	c.initialize(nil)
	id := c.request("_slow", map[string]any{})
	c.notify("$/cancel_request", map[string]any{"requestId": id})
	resp, _ := c.await(id)
	if resp.Error == nil || resp.Error.Code != CodeRequestCancelled {
		t.Errorf("got %s, want a -32800 error", resp.raw)
	}
}

func TestAgentCancelsItsRequest(t *testing.T) {
	done := make(chan error, 1)
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		r, err := t.Start("terminal/wait_for_exit", map[string]any{"sessionId": t.SessionID(), "terminalId": "t1"})
		if err != nil {
			return "", err
		}
		if err := t.CancelRequest(r.ID()); err != nil {
			return "", err
		}
		_, err = r.Wait(t.Context())
		done <- err
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	req := c.next()
	cancel := c.next()
	if cancel.Method != "$/cancel_request" {
		t.Fatalf("got %s", cancel.raw)
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	mustUnmarshal(t, cancel.Params, &p)
	if string(p.RequestID) != string(req.ID) {
		t.Errorf("cancelled id %s, want %s", p.RequestID, req.ID)
	}
	c.replyError(req.ID, &Error{Code: CodeRequestCancelled, Message: "Request cancelled"})
	c.await(id)
	var e *Error
	if err := <-done; !errors.As(err, &e) || e.Code != CodeRequestCancelled {
		t.Errorf("script got %v, want *Error -32800", err)
	}
}

func TestFSAndTerminalRoundTrip(t *testing.T) {
	got := make(chan string, 8)
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		s, err := t.ReadTextFile("/w/a.txt", 2, 5)
		got <- fmt.Sprintf("%v %v", s, err)
		got <- fmt.Sprint(t.WriteTextFile("/w/b.txt", "hello"))
		_, err = t.ReadTextFile("/w/missing", 0, 0)
		got <- fmt.Sprint(err)
		id, err := t.CreateTerminal(Terminal{Command: "ls", Args: []string{"-l"}, Env: map[string]string{"B": "2", "A": "1"}, Cwd: "/w", OutputByteLimit: 10})
		got <- fmt.Sprintf("%v %v", id, err)
		out, err := t.TerminalOutput(id)
		got <- fmt.Sprintf("%s %v", out, err)
		ex, err := t.WaitForTerminalExit(id)
		got <- fmt.Sprintf("%s %v", ex, err)
		got <- fmt.Sprint(t.KillTerminal(id), t.ReleaseTerminal(id))
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true})
	sid := c.newSession()
	var reqs []any
	c.onRequest = func(m wireMsg) (any, *Error) {
		reqs = append(reqs, map[string]any{"method": m.Method, "params": decode(t, m.Params)})
		switch m.Method {
		case "fs/read_text_file":
			if decode(t, m.Params).(map[string]any)["path"] == "/w/missing" {
				return nil, &Error{Code: CodeResourceNotFound, Message: "Resource not found"}
			}
			return map[string]any{"content": "line2"}, nil
		case "terminal/create":
			return map[string]any{"terminalId": "term-1"}, nil
		case "terminal/output":
			return map[string]any{"output": "x", "truncated": false, "exitStatus": map[string]any{"exitCode": 0}}, nil
		case "terminal/wait_for_exit":
			return map[string]any{"exitCode": 0}, nil
		}
		return map[string]any{}, nil
	}
	c.call("session/prompt", prompt(sid, "x"))
	close(got)
	var results []string
	for s := range got {
		results = append(results, s)
	}
	want := []string{
		"line2 <nil>", "<nil>", "acptest: error -32002: Resource not found", "term-1 <nil>",
		`{"exitStatus":{"exitCode":0},"output":"x","truncated":false} <nil>`, `{"exitCode":0} <nil>`, "<nil> <nil>",
	}
	if d := cmp.Diff(want, results); d != "" {
		t.Errorf("script results (-want +got):\n%s", d)
	}
	sp := func(m map[string]any) map[string]any { m["sessionId"] = sid; return m }
	wantReqs := []any{
		map[string]any{"method": "fs/read_text_file", "params": sp(map[string]any{"path": "/w/a.txt", "line": 2.0, "limit": 5.0})},
		map[string]any{"method": "fs/write_text_file", "params": sp(map[string]any{"path": "/w/b.txt", "content": "hello"})},
		map[string]any{"method": "fs/read_text_file", "params": sp(map[string]any{"path": "/w/missing"})},
		map[string]any{"method": "terminal/create", "params": sp(map[string]any{"command": "ls", "args": []any{"-l"},
			"env": []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}}, "cwd": "/w", "outputByteLimit": 10.0})},
		map[string]any{"method": "terminal/output", "params": sp(map[string]any{"terminalId": "term-1"})},
		map[string]any{"method": "terminal/wait_for_exit", "params": sp(map[string]any{"terminalId": "term-1"})},
		map[string]any{"method": "terminal/kill", "params": sp(map[string]any{"terminalId": "term-1"})},
		map[string]any{"method": "terminal/release", "params": sp(map[string]any{"terminalId": "term-1"})},
	}
	if d := cmp.Diff(wantReqs, reqs); d != "" {
		t.Errorf("agent requests (-want +got):\n%s", d)
	}
}

func TestClientCan(t *testing.T) {
	caps := make(chan []bool, 1)
	a := New(&Options{OnNewSession: func(s *Session) {
		caps <- []bool{s.ClientCan("fs", "writeTextFile"), s.ClientCan("fs", "readTextFile"), s.ClientCan("terminal"), s.ClientCan("elicitation", "form"), s.ClientCan("elicitation", "url")}
	}})
	c := dial(t, a)
	c.initialize(map[string]any{"fs": map[string]any{"writeTextFile": true}, "elicitation": map[string]any{"form": map[string]any{}, "url": nil}})
	c.newSession()
	if d := cmp.Diff([]bool{true, false, false, true, false}, <-caps); d != "" {
		t.Error(d)
	}
}
