// Package interop tests against agents built on other ACP SDKs. This file
// starts the TypeScript-SDK agent in tsagent/ and drives it with a minimal raw
// JSON-lines client; these tests are the wire reference the Go-client interop
// suite is written from.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tsagentDir is the npm project of the TypeScript agent, relative to this
// package's directory (go test runs tests there).
const tsagentDir = "tsagent"

// lockHashFile, inside node_modules, records the sha256 of package-lock.json
// that the last successful `npm ci` installed.
const lockHashFile = ".acp-lock-hash"

var (
	npmOnce sync.Once
	npmErr  error
)

// needTool returns the path of a program, skipping the test when it is missing
// (failing it under CI=true, where the toolchain must be present).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not found in PATH: the TypeScript interop agent needs Node.js (v20+) and npm", name)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: a missing toolchain is a failure)")
		}
		t.Skip(msg)
	}
	return p
}

// installTSAgent runs `npm ci` in tsagent/ unless node_modules already holds
// exactly what package-lock.json pins.
func installTSAgent(npm string) error {
	lock, err := os.ReadFile(filepath.Join(tsagentDir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	hashPath := filepath.Join(tsagentDir, "node_modules", lockHashFile)
	if got, err := os.ReadFile(hashPath); err == nil && strings.TrimSpace(string(got)) == want {
		if _, err := os.Stat(filepath.Join(tsagentDir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err == nil {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tsagentDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", tsagentDir, err, out)
	}
	return os.WriteFile(hashPath, []byte(want+"\n"), 0o644)
}

// lockedBuffer collects the agent's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTSAgentScript installs the agent's npm dependencies (once per test
// binary) and starts `node <script>` in tsagent/ (agent.mjs, the v1 agent, or
// agent_v2.mjs), with env added to the environment. The process is stopped
// when the test ends (stdin closed, then killed after 5 s); its stderr is
// logged if the test failed.
func startTSAgentScript(t *testing.T, script string, env ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	node := needTool(t, "node")
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript agent's dependencies failed: %v", npmErr)
	}

	cmd := exec.Command(node, script)
	cmd.Dir = tsagentDir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node %s: %v", script, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s exited with %v", script, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("tsagent did not exit within 5 s of stdin closing; killing it")
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("tsagent stderr:\n%s", stderr.String())
		}
	})
	return cmd, stdin, bufio.NewReaderSize(stdout, 1<<16)
}

// ---------------------------------------------------------------------------
// A minimal raw JSON-lines client.

type rawError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type rawMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rawError       `json:"error,omitempty"`
}

// update is the part of a session/update notification the tests look at.
type update struct {
	SessionID string         `json:"sessionId"`
	Update    map[string]any `json:"update"`
}

type rawClient struct {
	t      *testing.T
	in     io.Writer
	msgs   chan rawMsg
	nextID int
}

func newRawClient(t *testing.T) *rawClient {
	return newRawClientScript(t, "agent.mjs")
}

// newRawClientScript is newRawClient for a script in tsagent/, with env
// added to its environment.
func newRawClientScript(t *testing.T, script string, env ...string) *rawClient {
	_, stdin, stdout := startTSAgentScript(t, script, env...)
	c := &rawClient{t: t, in: stdin, msgs: make(chan rawMsg, 1024), nextID: 1}
	go func() {
		defer close(c.msgs)
		for {
			line, err := stdout.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				var m rawMsg
				if jerr := json.Unmarshal(line, &m); jerr != nil || m.JSONRPC != "2.0" {
					m = rawMsg{Method: "!junk", Params: json.RawMessage(fmt.Sprintf("%q", line))}
				}
				c.msgs <- m
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *rawClient) write(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to tsagent: %v", err)
	}
}

func (c *rawClient) notify(method string, params any) {
	c.t.Helper()
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// reply answers an agent request with a result (or with an error if result is a *rawError).
func (c *rawClient) reply(req rawMsg, result any) {
	c.t.Helper()
	if e, ok := result.(*rawError); ok {
		c.write(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": e})
		return
	}
	c.write(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// call sends a request and reads until its response, passing every other
// message (agent requests and notifications, in wire order) to onMsg, which
// may reply. Messages for which onMsg is nil are dropped; an agent request
// with no handler fails the test.
func (c *rawClient) call(method string, params any, onMsg func(rawMsg)) rawMsg {
	c.t.Helper()
	id := c.nextID
	c.nextID++
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("%s: tsagent closed stdout before answering", method)
			}
			if m.Method == "" && string(m.ID) == fmt.Sprint(id) {
				return m
			}
			if onMsg != nil {
				onMsg(m)
			} else if m.Method != "" && m.ID != nil {
				c.t.Fatalf("%s: unexpected agent request %s %s", method, m.Method, m.Params)
			}
		case <-timeout:
			c.t.Fatalf("%s: no response within 10 s", method)
		}
	}
}

// result calls and decodes a successful result into out (if non-nil).
func (c *rawClient) result(method string, params, out any, onMsg func(rawMsg)) {
	c.t.Helper()
	m := c.call(method, params, onMsg)
	if m.Error != nil {
		c.t.Fatalf("%s: error %d %s %s", method, m.Error.Code, m.Error.Message, m.Error.Data)
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			c.t.Fatalf("%s: decoding result %s: %v", method, m.Result, err)
		}
	}
}

type initResult struct {
	ProtocolVersion   int `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession         bool                       `json:"loadSession"`
		PromptCapabilities  map[string]bool            `json:"promptCapabilities"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
	} `json:"agentCapabilities"`
	AuthMethods []struct {
		ID   string  `json:"id"`
		Type *string `json:"type"`
	} `json:"authMethods"`
}

// session initializes (advertising fs and terminal) and creates a session.
func (c *rawClient) session() string {
	c.t.Helper()
	var ir initResult
	c.result("initialize", map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": true, "writeTextFile": true},
			"terminal": true,
		},
		"clientInfo": map[string]string{"name": "acp-raw-test", "version": "0"},
	}, &ir, nil)
	if ir.ProtocolVersion != 1 || !ir.AgentCapabilities.LoadSession {
		c.t.Fatalf("initialize: protocolVersion %d, loadSession %v", ir.ProtocolVersion, ir.AgentCapabilities.LoadSession)
	}
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	c.result("session/new", map[string]any{"cwd": os.TempDir(), "mcpServers": []any{}}, &ns, nil)
	if ns.SessionID == "" {
		c.t.Fatal("session/new: empty sessionId")
	}
	return ns.SessionID
}

// turn is what one session/prompt produced.
type turn struct {
	stopReason string
	err        *rawError
	updates    []map[string]any // update objects, in wire order
	reports    []string         // texts of agent_message_chunks whose messageId is "t<turn>-r<N>"
	events     []string         // "update:<kind>" and "<method>" of everything else, in wire order
}

// prompt sends a text prompt and collects the session/update notifications;
// every other message (agent requests, extension notifications) goes to onReq,
// which may be nil when the agent is not expected to send any.
func (c *rawClient) prompt(sessionID, text string, onReq func(rawMsg)) turn {
	c.t.Helper()
	var tr turn
	m := c.call("session/prompt", map[string]any{
		"sessionId": sessionID,
		"prompt":    []any{map[string]string{"type": "text", "text": text}},
	}, func(m rawMsg) {
		switch {
		case m.Method == "session/update":
			var u update
			if err := json.Unmarshal(m.Params, &u); err != nil {
				c.t.Fatalf("bad session/update %s: %v", m.Params, err)
			}
			if u.SessionID != sessionID {
				c.t.Errorf("session/update for %q, want %q", u.SessionID, sessionID)
			}
			tr.updates = append(tr.updates, u.Update)
			tr.events = append(tr.events, fmt.Sprint("update:", u.Update["sessionUpdate"]))
			if u.Update["sessionUpdate"] == "agent_message_chunk" {
				if id, _ := u.Update["messageId"].(string); strings.Contains(id, "-r") {
					content, _ := u.Update["content"].(map[string]any)
					text, _ := content["text"].(string)
					tr.reports = append(tr.reports, text)
				}
			}
		case onReq != nil:
			tr.events = append(tr.events, m.Method)
			onReq(m)
		case m.ID != nil:
			c.t.Fatalf("unexpected agent request %s %s", m.Method, m.Params)
		default:
			c.t.Logf("ignored %s %s", m.Method, m.Params)
		}
	})
	if m.Error != nil {
		tr.err = m.Error
		return tr
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		c.t.Fatalf("session/prompt result %s: %v", m.Result, err)
	}
	tr.stopReason = res.StopReason
	return tr
}

func kinds(us []map[string]any) []string {
	var ks []string
	for _, u := range us {
		ks = append(ks, fmt.Sprint(u["sessionUpdate"]))
	}
	return ks
}

// ---------------------------------------------------------------------------
// Tests

func TestTSAgentUpdates(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	sid := c.session()
	tr := c.prompt(sid, "updates", nil)
	if tr.err != nil || tr.stopReason != "end_turn" {
		t.Fatalf("prompt: stopReason %q, error %+v; want end_turn", tr.stopReason, tr.err)
	}
	want := []string{
		"user_message_chunk", "agent_message_chunk", "agent_message_chunk", "agent_thought_chunk",
		"tool_call", "tool_call_update", "plan", "available_commands_update", "current_mode_update",
		"config_option_update", "session_info_update", "usage_update", "agent_message_chunk",
	}
	if got := kinds(tr.updates); !slices.Equal(got, want) {
		t.Fatalf("update kinds before the response:\n got %v\nwant %v", got, want)
	}
	if id := tr.updates[1]["messageId"]; id != "t1-m1" || tr.updates[2]["messageId"] != "t1-m1" {
		t.Errorf("agent_message_chunk messageIds %v, %v; want t1-m1 twice", id, tr.updates[2]["messageId"])
	}
	var contentTypes []string
	for _, item := range tr.updates[5]["content"].([]any) {
		contentTypes = append(contentTypes, fmt.Sprint(item.(map[string]any)["type"]))
	}
	if want := []string{"diff", "terminal", "content"}; !slices.Equal(contentTypes, want) {
		t.Errorf("tool_call_update content types %v, want %v", contentTypes, want)
	}
	if got := tr.updates[8]["currentModeId"]; got != "code" {
		t.Errorf("current_mode_update currentModeId %v, want code", got)
	}
	if got := tr.updates[11]; got["used"] != 1234.0 || got["size"] != 200000.0 {
		t.Errorf("usage_update %v", got)
	}
}

func TestTSAgentPermission(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	sid := c.session()
	for _, opt := range []string{"allow-once", "allow-always", "reject-once", "reject-always"} {
		tr := c.prompt(sid, "permission", func(m rawMsg) {
			if m.Method != "session/request_permission" {
				t.Fatalf("unexpected agent request %s", m.Method)
			}
			var p struct {
				SessionID string `json:"sessionId"`
				ToolCall  struct {
					ToolCallID string `json:"toolCallId"`
				} `json:"toolCall"`
				Options []struct {
					OptionID string `json:"optionId"`
					Kind     string `json:"kind"`
				} `json:"options"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range p.Options {
				kinds = append(kinds, o.Kind)
			}
			if p.SessionID != sid || p.ToolCall.ToolCallID != "perm-1" ||
				!slices.Equal(kinds, []string{"allow_once", "allow_always", "reject_once", "reject_always"}) {
				t.Errorf("request_permission params %s", m.Params)
			}
			c.reply(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": opt}})
		})
		// The tool_call precedes the permission request on the wire (the Go
		// client's request barrier relies on that order being kept).
		if want := []string{"update:tool_call", "session/request_permission", "update:tool_call_update", "update:agent_message_chunk"}; !slices.Equal(tr.events, want) {
			t.Errorf("%s: events %v, want %v", opt, tr.events, want)
		}
		if tr.stopReason != "end_turn" || !slices.Equal(tr.reports, []string{"outcome:selected:" + opt}) {
			t.Errorf("%s: stopReason %q reports %q error %+v", opt, tr.stopReason, tr.reports, tr.err)
		}
	}
}

func TestTSAgentCancel(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	sid := c.session()
	tr := c.prompt(sid, "cancel", func(m rawMsg) {
		if m.Method != "session/request_permission" {
			t.Fatalf("unexpected agent request %s", m.Method)
		}
		// What the spec demands of a client that cancels a turn: session/cancel
		// (a notification), then every pending permission answered "cancelled".
		c.notify("session/cancel", map[string]string{"sessionId": sid})
		c.reply(m, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}})
	})
	if tr.err != nil || tr.stopReason != "cancelled" {
		t.Fatalf("prompt: stopReason %q, error %+v; want cancelled", tr.stopReason, tr.err)
	}
	if want := []string{"permission:cancelled", "session/cancel:received"}; !slices.Equal(tr.reports, want) {
		t.Errorf("reports %q, want %q", tr.reports, want)
	}
	if len(tr.updates) == 0 || tr.updates[0]["sessionUpdate"] != "agent_message_chunk" {
		t.Errorf("first update %v, want the agent_message_chunk streamed before the permission request", tr.updates)
	}
}

// TestTSAgentClientMethods smoke-tests the other prompt scenarios and session
// methods, answering the agent's requests by hand.
func TestTSAgentClientMethods(t *testing.T) {
	t.Parallel()
	c := newRawClient(t)
	sid := c.session()

	check := func(name string, tr turn, stop string, reports ...string) {
		t.Helper()
		if tr.err != nil || tr.stopReason != stop || !slices.Equal(tr.reports, reports) {
			t.Errorf("%s: stopReason %q error %+v reports %q; want %q %q", name, tr.stopReason, tr.err, tr.reports, stop, reports)
		}
	}
	paramsOf := func(m rawMsg) map[string]any {
		var p map[string]any
		json.Unmarshal(m.Params, &p)
		return p
	}

	// fs: a read with line/limit, then a write to <path>.out.
	var wrote map[string]any
	check("fs", c.prompt(sid, "fs /work/x.txt", func(m rawMsg) {
		p := paramsOf(m)
		switch m.Method {
		case "fs/read_text_file":
			if p["path"] != "/work/x.txt" || p["line"] != 2.0 || p["limit"] != 2.0 {
				t.Errorf("read params %v", p)
			}
			c.reply(m, map[string]string{"content": "two\nthree\n"})
		case "fs/write_text_file":
			wrote = p
			c.reply(m, nil) // the "result": null of the doc example
		}
	}), "end_turn", `read:ok:"two\nthree\n"`, "write:ok")
	if wrote["path"] != "/work/x.txt.out" || wrote["content"] != "copied:two\nthree\n" {
		t.Errorf("write params %v", wrote)
	}
	check("fs missing", c.prompt(sid, "fs /work/missing.txt", func(m rawMsg) {
		if m.Method == "fs/read_text_file" {
			c.reply(m, &rawError{Code: -32002, Message: "Resource not found"})
		} else {
			c.reply(m, &rawError{Code: -32603, Message: "disk full"})
		}
	}), "end_turn", "read:error:-32002", "write:error:-32603")

	// terminal: create, wait_for_exit, output, release.
	var calls []string
	check("terminal", c.prompt(sid, "terminal", func(m rawMsg) {
		calls = append(calls, m.Method)
		switch m.Method {
		case "terminal/create":
			p := paramsOf(m)
			if p["command"] != "sh" || fmt.Sprint(p["args"]) != "[-c echo hi; exit 3]" {
				t.Errorf("terminal/create params %v", p)
			}
			c.reply(m, map[string]string{"terminalId": "t1"})
		case "terminal/wait_for_exit":
			c.reply(m, map[string]any{"exitCode": 3})
		case "terminal/output":
			c.reply(m, map[string]any{"output": "hi\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 3}})
		default:
			c.reply(m, map[string]any{})
		}
	}), "end_turn", "exit:3", `output:"hi\n"`, "truncated:false", "released")
	if want := []string{"terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"}; !slices.Equal(calls, want) {
		t.Errorf("terminal calls %v, want %v", calls, want)
	}

	// ext: the _acp/note notification arrives before the _acp/echo request.
	var order []string
	tr := c.prompt(sid, "ext", func(m rawMsg) {
		order = append(order, m.Method)
		if m.ID != nil {
			c.reply(m, paramsOf(m))
		}
	})
	check("ext", tr, "end_turn", fmt.Sprintf(`echo:{"sessionId":%q,"text":"ping"}`, sid))
	if !slices.Equal(order, []string{"_acp/note", "_acp/echo"}) {
		t.Errorf("ext requests %v", order)
	}

	// cancel_request: the agent sends _acp/slow then $/cancel_request for it;
	// we answer -32800 only after seeing the cancel.
	var slow *rawMsg
	var cancelled bool
	check("cancel_request", c.prompt(sid, "cancel_request", func(m rawMsg) {
		switch m.Method {
		case "_acp/slow":
			slow = &m
		case "$/cancel_request":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			json.Unmarshal(m.Params, &p)
			if slow == nil || string(p.RequestID) != string(slow.ID) {
				t.Fatalf("$/cancel_request %s for request %v", m.Params, slow)
			}
			cancelled = true
			c.reply(*slow, &rawError{Code: -32800, Message: "Request cancelled"})
		}
	}), "end_turn", "cancel_request:error:-32800")
	if !cancelled {
		t.Errorf("cancel_request: no $/cancel_request seen")
	}

	// error: the prompt fails with -32603 and data.
	if tr := c.prompt(sid, "error", nil); tr.err == nil || tr.err.Code != -32603 || !strings.Contains(string(tr.err.Data), `"scenario":"error"`) {
		t.Errorf("error prompt: %+v", tr.err)
	}

	// Session methods.
	if m := c.call("authenticate", map[string]string{"methodId": "nope"}, nil); m.Error == nil {
		t.Errorf("authenticate with an unknown method succeeded")
	}
	c.result("authenticate", map[string]string{"methodId": "token"}, nil, nil)
	var ids []string
	cursor := ""
	for page := 0; page < 3; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var lr struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		c.result("session/list", params, &lr, nil)
		for _, s := range lr.Sessions {
			ids = append(ids, s.SessionID)
		}
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(ids, []string{"sess-1", "sess-2", "sess-3"}) {
		t.Errorf("listed %v", ids)
	}
	var replay []string
	c.result("session/load", map[string]any{"sessionId": "sess-2", "cwd": "/tmp/acp-interop", "mcpServers": []any{}}, nil, func(m rawMsg) {
		var u update
		json.Unmarshal(m.Params, &u)
		replay = append(replay, fmt.Sprint(u.SessionID, " ", u.Update["sessionUpdate"]))
	})
	if want := []string{"sess-2 user_message_chunk", "sess-2 agent_message_chunk"}; !slices.Equal(replay, want) {
		t.Errorf("load replay %v, want %v", replay, want)
	}
	var modeUpdates []string
	c.result("session/set_mode", map[string]string{"sessionId": sid, "modeId": "code"}, nil, func(m rawMsg) {
		var u update
		json.Unmarshal(m.Params, &u)
		modeUpdates = append(modeUpdates, fmt.Sprint(u.Update["sessionUpdate"], ":", u.Update["currentModeId"]))
	})
	if !slices.Equal(modeUpdates, []string{"current_mode_update:code"}) {
		t.Errorf("set_mode updates %v", modeUpdates)
	}
	var co struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.result("session/set_config_option", map[string]string{"sessionId": sid, "configId": "model", "value": "b"}, &co, nil)
	if len(co.ConfigOptions) != 1 || co.ConfigOptions[0].CurrentValue != "b" {
		t.Errorf("set_config_option result %+v", co)
	}
	var pong struct {
		Pong bool `json:"pong"`
	}
	c.result("_acp/ping", map[string]int{"n": 1}, &pong, nil)
	if !pong.Pong {
		t.Errorf("_acp/ping: no pong")
	}
	c.result("session/resume", map[string]any{"sessionId": "sess-3", "cwd": "/tmp/acp-interop", "mcpServers": []any{}}, nil, nil)
	c.result("session/close", map[string]string{"sessionId": "sess-3"}, nil, nil)
	c.result("session/delete", map[string]string{"sessionId": "sess-1"}, nil, nil)
	if m := c.call("session/prompt", map[string]any{"sessionId": "sess-3", "prompt": []any{}}, nil); m.Error == nil || m.Error.Code != -32002 {
		t.Errorf("prompt to a closed session: %s %+v", m.Result, m.Error)
	}
}
