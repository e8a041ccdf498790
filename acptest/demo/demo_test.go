package demo

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/google/go-cmp/cmp"
)

// client is a minimal raw-JSON ACP client for these tests.
type client struct {
	t     *testing.T
	w     io.WriteCloser
	lines chan []byte
	id    int
	// answer replies to agent requests; nil fails the test.
	answer func(method string, params map[string]any) any
	// requests records the methods of agent requests met.
	requests []string
}

type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func start(t *testing.T, caps any) *client { return dial(t, New(nil), caps) }

// dial connects a raw client to a and initializes (v1) with caps. The
// cleanup closes the client's end and then a.
func dial(t *testing.T, a *acptest.Agent, caps any) *client { return dialVersion(t, a, 1, caps) }

// dialVersion is dial initializing with protocol version v (v2: caps are
// the capabilities member).
func dialVersion(t *testing.T, a *acptest.Agent, v int, caps any) *client {
	fromAgent, toAgent := a.Pipe()
	c := &client{t: t, w: toAgent, lines: make(chan []byte, 256)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReader(fromAgent)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		toAgent.Close()
		a.Close()
		for range c.lines {
		}
	})
	if v >= 2 {
		if caps == nil {
			caps = map[string]any{}
		}
		c.call("initialize", map[string]any{"protocolVersion": v, "capabilities": caps, "info": map[string]any{"name": "test", "version": "0"}})
	} else {
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
	}
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) next() msg {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("agent closed stdout")
		}
		var m msg
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("bad line %q", line)
		}
		return m
	case <-time.After(10 * time.Second): // a failsafe, not synchronisation
		c.t.Fatal("timeout")
	}
	return msg{}
}

func (c *client) request(method string, params any) string {
	c.id++
	id := strconv.Itoa(c.id)
	c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	return id
}

// await reads until the response to id, answering agent requests and
// returning the update objects seen before it.
func (c *client) await(id string) (msg, []map[string]any) {
	c.t.Helper()
	var ups []map[string]any
	for {
		m := c.next()
		switch {
		case m.Method == "" && string(m.ID) == id:
			return m, ups
		case m.Method == "session/update":
			var p struct {
				Update map[string]any `json:"update"`
			}
			json.Unmarshal(m.Params, &p)
			ups = append(ups, p.Update)
		case m.Method != "" && m.ID != nil:
			c.requests = append(c.requests, m.Method)
			if c.answer == nil {
				c.t.Fatalf("unexpected agent request %s", m.Method)
			}
			var p map[string]any
			json.Unmarshal(m.Params, &p)
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": c.answer(m.Method, p)})
		}
	}
}

func (c *client) call(method string, params any) (json.RawMessage, []map[string]any) {
	c.t.Helper()
	m, ups := c.await(c.request(method, params))
	if m.Error != nil {
		c.t.Fatalf("%s: %s", method, m.Error)
	}
	return m.Result, ups
}

func (c *client) newSession() string {
	res, ups := c.call("session/new", map[string]any{"cwd": "/proj", "mcpServers": []any{}})
	if len(ups) != 1 || ups[0]["sessionUpdate"] != "available_commands_update" {
		c.t.Errorf("updates before session/new result: %v", ups)
	}
	var r struct{ SessionID string }
	json.Unmarshal(res, &r)
	return r.SessionID
}

func prompt(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func stopReason(t *testing.T, m msg) string {
	var r struct{ StopReason string }
	if err := json.Unmarshal(m.Result, &r); err != nil || m.Error != nil {
		t.Fatalf("prompt reply: %s %s", m.Result, m.Error)
	}
	return r.StopReason
}

// kinds summarises updates as kind[/status].
func kinds(ups []map[string]any) []string {
	var out []string
	for _, u := range ups {
		k := u["sessionUpdate"].(string)
		if s, ok := u["status"].(string); ok {
			k += "/" + s
		}
		out = append(out, k)
	}
	return out
}

// said joins the agent_message_chunk texts with the given messageId.
func said(ups []map[string]any, messageID string) string {
	var b strings.Builder
	for _, u := range ups {
		if u["sessionUpdate"] == "agent_message_chunk" && u["messageId"] == messageID {
			b.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

var fsCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}

func allow(option string) func(string, map[string]any) any {
	return func(method string, p map[string]any) any {
		if method == "session/request_permission" {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}
		}
		return map[string]any{}
	}
}

func TestTurnAllowedWritesFile(t *testing.T) {
	c := start(t, fsCaps)
	sid := c.newSession()
	var wrote map[string]any
	c.answer = func(method string, p map[string]any) any {
		if method == "fs/write_text_file" {
			wrote = p
		}
		return allow("allow")(method, p)
	}
	m, ups := c.await(c.request("session/prompt", prompt(sid, "hello demo")))
	if got := stopReason(t, m); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	want := []string{
		"agent_thought_chunk", "agent_thought_chunk", "plan",
		"tool_call/in_progress", "tool_call_update/completed", "plan",
		"tool_call/pending", "tool_call_update/in_progress", "tool_call_update/completed", "plan",
		"agent_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
		"plan", "usage_update", "session_info_update",
	}
	if d := cmp.Diff(want, kinds(ups)); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"session/request_permission", "fs/write_text_file"}, c.requests); d != "" {
		t.Errorf("agent requests (-want +got):\n%s", d)
	}
	if wrote["path"] != "/proj/acp-demo.txt" || !strings.Contains(wrote["content"].(string), "hello demo") {
		t.Errorf("wrote %v", wrote)
	}
	if got := said(ups, "msg-1"); got != `You said: "hello demo".` {
		t.Errorf("answer %q", got)
	}
	if title := ups[len(ups)-1]["title"]; title != "hello demo" {
		t.Errorf("title %v", title)
	}
}

func TestTurnRejected(t *testing.T) {
	c := start(t, fsCaps)
	sid := c.newSession()
	c.answer = allow("reject")
	m, ups := c.await(c.request("session/prompt", prompt(sid, "x")))
	if stopReason(t, m) != "end_turn" || len(c.requests) != 1 {
		t.Errorf("requests %v", c.requests)
	}
	if got := said(ups, "msg-1-rejected"); !strings.Contains(got, "did not write") {
		t.Errorf("rejection message %q", got)
	}
}

func TestTurnWithoutFSSkipsWrite(t *testing.T) {
	c := start(t, map[string]any{})
	sid := c.newSession()
	c.answer = allow("allow")
	m, ups := c.await(c.request("session/prompt", prompt(sid, "x")))
	if stopReason(t, m) != "end_turn" {
		t.Fatal()
	}
	if d := cmp.Diff([]string{"session/request_permission"}, c.requests); d != "" {
		t.Error(d)
	}
	if k := kinds(ups); !strings.Contains(strings.Join(k, " "), "tool_call_update/failed") {
		t.Errorf("want the edit marked failed (skipped): %v", k)
	}
	// The plan does not tick the write that did not happen, and the
	// answer says why.
	var last []any
	for _, u := range ups {
		if u["sessionUpdate"] == "plan" {
			last = u["entries"].([]any)
		}
	}
	var status []string
	for _, e := range last {
		status = append(status, e.(map[string]any)["status"].(string))
	}
	if d := cmp.Diff([]string{"completed", "pending", "completed"}, status); d != "" {
		t.Errorf("the last plan's statuses (-want +got):\n%s", d)
	}
	if got := said(ups, "msg-1-skipped"); !strings.Contains(got, "does not let me write files") || !strings.Contains(got, "--fs") {
		t.Errorf("the answer does not say why the file was not written: %q", got)
	}
}

func TestCodeModeDoesNotAsk(t *testing.T) {
	c := start(t, fsCaps)
	sid := c.newSession()
	c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "code"})
	res, _ := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "demo-smart"})
	if !strings.Contains(string(res), `"currentValue":"demo-smart"`) {
		t.Errorf("set_config_option: %s", res)
	}
	c.answer = allow("allow")
	m, ups := c.await(c.request("session/prompt", prompt(sid, "hi")))
	stopReason(t, m)
	if d := cmp.Diff([]string{"fs/write_text_file"}, c.requests); d != "" {
		t.Error(d)
	}
	if got := said(ups, "msg-1"); got != `You said: "hi". That is 2 characters, in code mode.` {
		t.Errorf("answer %q", got)
	}
}

func TestCancelDuringPermission(t *testing.T) {
	c := start(t, fsCaps)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	var perm msg
	for perm = c.next(); perm.Method != "session/request_permission"; perm = c.next() {
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	c.send(map[string]any{"jsonrpc": "2.0", "id": perm.ID, "result": map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}})
	m, ups := c.await(id)
	if got := stopReason(t, m); got != "cancelled" {
		t.Errorf("stopReason %q", got)
	}
	if d := cmp.Diff([]string{"tool_call_update/failed"}, kinds(ups)); d != "" {
		t.Errorf("updates after cancel (-want +got):\n%s", d)
	}
}

func TestSlowCancel(t *testing.T) {
	c := start(t, nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "/slow"))
	if m := c.next(); m.Method != "session/update" {
		t.Fatalf("got %+v", m)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	m, ups := c.await(id)
	if got := stopReason(t, m); got != "cancelled" {
		t.Errorf("stopReason %q", got)
	}
	if len(ups) >= 49 {
		t.Errorf("%d more chunks after cancel", len(ups))
	}
}

func TestCommands(t *testing.T) {
	c := start(t, nil)
	sid := c.newSession()
	_, ups := c.call("session/prompt", prompt(sid, "/echo  hi there"))
	if got := said(ups, "msg-1"); got != "hi there" {
		t.Errorf("echo %q", got)
	}
	_, ups = c.call("session/prompt", prompt(sid, "/help"))
	if got := said(ups, "msg-2"); !strings.Contains(got, "/slow") {
		t.Errorf("help %q", got)
	}
}

func TestLoadReplaysConversation(t *testing.T) {
	c := start(t, nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "/echo one"))
	_, ups := c.call("session/load", map[string]any{"sessionId": sid, "cwd": "/proj", "mcpServers": []any{}})
	if d := cmp.Diff([]string{"user_message_chunk", "agent_message_chunk", "available_commands_update"}, kinds(ups)); d != "" {
		t.Errorf("load (-want +got):\n%s", d)
	}
}
