// This file holds the broken agents: each breaks exactly one rule of the
// compliant agent, and the test that each is caught by that rule.

package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/acptest/conformance"
	"github.com/acpclient/acp/schema"
)

// initializeAnswering answers initialize with the version answer(offer)
// and the acptest defaults otherwise.
func initializeAnswering(answer func(offer int) int) acptest.MethodFunc {
	return func(ctx context.Context, c *acptest.Conn, params json.RawMessage) (any, error) {
		var p struct {
			ProtocolVersion int `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		return map[string]any{"protocolVersion": answer(p.ProtocolVersion), "authMethods": []any{},
			"agentInfo": map[string]any{"name": "broken", "version": "1"},
			"agentCapabilities": map[string]any{"loadSession": true,
				"sessionCapabilities": map[string]any{"list": map[string]any{}, "resume": map[string]any{}, "close": map[string]any{}}}}, nil
	}
}

func result(v any) acptest.MethodFunc {
	return func(context.Context, *acptest.Conn, json.RawMessage) (any, error) { return v, nil }
}

// brokenAgents each break exactly one rule of a compliant agent.
type brokenAgent struct {
	rule   string
	breaks func(o *acptest.Options)
}

var brokenAgents = []brokenAgent{
	{"init.version", func(o *acptest.Options) {
		// 1 to 1 and to 99 (its latest), but 3 to 2: neither the offer nor its latest.
		o.Methods = map[string]acptest.MethodFunc{"initialize": initializeAnswering(func(offer int) int {
			if offer == 2 {
				return 3
			}
			return 1
		})}
	}},
	{"init.agent-info", func(o *acptest.Options) { o.AgentInfo = map[string]any{"name": "nameless-version"} }},
	{"jsonrpc.lines", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.Junk("DEBUG: thinking about it")
			return goodTurn(t)
		}
	}},
	{"jsonrpc.method-not-found", func(o *acptest.Options) {
		o.OnExtMethod = func(context.Context, *acptest.Conn, string, json.RawMessage) (any, error) {
			return map[string]any{}, nil
		}
	}},
	{"session.new", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/new": result(map[string]any{"sessionId": "always-the-same"})}
	}},
	{"session.updates-known", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.UpdateAs("a-session-nobody-opened", acptest.AgentMessage("", "stray"))
			return goodTurn(t)
		}
	}},
	{"session.load", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/load": result(map[string]any{})}
	}},
	{"session.resume", func(o *acptest.Options) {
		o.OnLoadSession = func(s *acptest.Session) { s.Say("history, replayed on resume") }
	}},
	{"prompt.stop-reason", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) { goodTurn(t); return "done", nil }
	}},
	{"tools.shape", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "t", Title: "Look", Kind: "read", Status: "finished"})
			return goodTurn(t)
		}
	}},
	{"permission.request", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.ToolCall(acptest.ToolCallSpec{ID: "p", Title: "Ask", Kind: "edit", Status: "pending"})
			t.RequestPermission(acptest.ToolCallSpec{ID: "p"}, []schema.PermissionOption{{OptionID: "m", Name: "Maybe", Kind: "maybe"}})
			return goodTurn(t)
		}
	}},
	{"cancel.stop-reason", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.HasPrefix(t.PromptText(), "slow") {
				<-t.Cancelled()
				return "", errors.New("aborted")
			}
			return goodTurn(t)
		}
	}},
	{"cancel.no-late-updates", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.HasPrefix(t.PromptText(), "slow") {
				<-t.Cancelled()
				t.AfterTurn(func() { t.Say("one more thing") })
				return schema.StopReasonCancelled, nil
			}
			return goodTurn(t)
		}
	}},
	{"modes.unknown", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/set_mode": result(map[string]any{})}
	}},
	{"config.set", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/set_config_option": result(map[string]any{"configOptions": o.ConfigOptions})}
	}},
	{"caps.fs", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.ReadTextFile(t.Cwd()+"/secret.txt", 0, 0) // whether offered or not
			return goodTurn(t)
		}
	}},
	{"init.shape", func(o *acptest.Options) {
		o.Capabilities = map[string]any{"loadSession": "yes"}
	}},
	{"jsonrpc.responses", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.Raw([]byte(`{"jsonrpc":"2.0","id":9999,"result":{}}` + "\n")) // answers nothing the client asked
			return goodTurn(t)
		}
	}},
	{"auth.methods", func(o *acptest.Options) {
		o.RequireAuth = true // and initialize offers no method
		o.Methods = map[string]acptest.MethodFunc{"initialize": initializeAnswering(func(int) int { return 1 })}
	}},
	{"session.list", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/list": result(map[string]any{})}
	}},
	{"session.close", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/close": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
			return nil, &acptest.Error{Code: -32603, Message: "cannot close"}
		}}
	}},
	{"prompt.text", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.HasPrefix(t.PromptText(), "slow") {
				return goodTurn(t)
			}
			return "", &acptest.Error{Code: -32603, Message: "text is not for me"}
		}
	}},
	{"prompt.resource-link", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.Contains(string(t.Prompt()), `"resource_link"`) {
				return "", &acptest.Error{Code: -32602, Message: "no links"}
			}
			return goodTurn(t)
		}
	}},
	{"prompt.capabilities", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.Contains(string(t.Prompt()), `"image"`) { // advertised, yet refused
				return "", &acptest.Error{Code: -32602, Message: "no images"}
			}
			return goodTurn(t)
		}
	}},
	{"prompt.updates-in-turn", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if !strings.HasPrefix(t.PromptText(), "slow") { // the cancelled turn is cancel.no-late-updates'
				t.AfterTurn(func() { t.Say("an afterthought") })
			}
			return goodTurn(t)
		}
	}},
	{"prompt.updates-valid", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.Update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": "not a content block"})
			return goodTurn(t)
		}
	}},
	{"tools.known-ids", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.UpdateToolCall(acptest.ToolCallSpec{ID: "never-announced", Status: "completed"})
			return goodTurn(t)
		}
	}},
	{"modes.set", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/set_mode": func(context.Context, *acptest.Conn, json.RawMessage) (any, error) {
			return nil, &acptest.Error{Code: -32603, Message: "modes are decorative"}
		}}
	}},
	{"config.defaults", func(o *acptest.Options) {
		o.ConfigOptions = []any{map[string]any{"id": "model", "name": "Model", "type": "select",
			"options": []any{map[string]any{"value": "a", "name": "A"}}}}
	}},
	{"fs.absolute-paths", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if t.ClientCan("fs", "readTextFile") {
				t.ReadTextFile("conformance-notes.txt", 0, 0)
			}
			return goodTurn(t)
		}
	}},
	{"caps.terminal", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			t.CreateTerminal(acptest.Terminal{Command: "true"})
			return goodTurn(t)
		}
	}},
}

// TestCheckBrokenAgentsCaught: each agent that breaks one rule fails that
// rule, and the report does not pass.
func TestCheckBrokenAgentsCaught(t *testing.T) {
	for _, b := range brokenAgents {
		t.Run(b.rule, func(t *testing.T) {
			t.Parallel() // each waits out the cancel scenario's late window
			o := goodOptions()
			b.breaks(o)
			opts := goodPrompts
			opts.ScenarioTimeout = 10 * time.Second
			rep := gradeAgent(t, acptest.New(o), &opts)
			res, ok := rep.Result(b.rule, 1)
			if !ok || res.Status != conformance.Fail {
				t.Fatalf("%s: %s (%s), want fail", b.rule, res.Status, res.Message)
			}
			if len(res.Evidence) == 0 && b.rule != "session.load" {
				t.Errorf("%s failed without evidence: %s", b.rule, res.Message)
			}
			if res.Level == conformance.Must && rep.Passed(false) {
				t.Error("a MUST rule failed but the report passed")
			}
			if !rep.Passed(false) && res.Level != conformance.Must {
				for _, r := range rep.Results {
					if r.Status == conformance.Fail && r.Level == conformance.Must {
						t.Errorf("breaking %s also failed the MUST rule %s: %s", b.rule, r.ID, r.Message)
					}
				}
			}
			t.Logf("%s: %s", b.rule, res.Message)
		})
	}
}

// breaksTurn returns the turn script the broken agent installs.
func (b brokenAgent) breaksTurn() func(*acptest.Turn) (schema.StopReason, error) {
	o := goodOptions()
	b.breaks(o)
	return o.OnPrompt
}

func brokenFor(t *testing.T, rule string) brokenAgent {
	for _, b := range brokenAgents {
		if b.rule == rule {
			return b
		}
	}
	t.Fatalf("no broken agent for %s", rule)
	return brokenAgent{}
}

// brokenV2 each break one v2 rule of the compliant agent in v2.
var brokenV2 = []brokenAgent{
	{"v2.message-ids", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			// Raw: acptest would give a chunk without one the turn's id.
			t.Raw([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + t.SessionID() +
				`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"anonymous"}}}}` + "\n"))
			return goodTurn(t)
		}
	}},
	{"v2.prompt-accepted", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/prompt": result(map[string]any{})}
	}},
	{"prompt.stop-reason", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) { goodTurn(t); return "finished", nil }
	}},
	// These two accept a prompt and then do nothing: no user message, no
	// state_update (the turn never ends, so the scenarios run out).
	{"v2.user-message", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/prompt": result(map[string]any{"messageId": "m-accepted"})}
	}},
	{"v2.state-lifecycle", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/prompt": result(map[string]any{"messageId": "m-accepted"})}
	}},
	{"v2.resume-replay", func(o *acptest.Options) {
		replayingResume(o, func([]json.RawMessage) []json.RawMessage { return nil }, false) // the snapshot only
	}},
	{"v2.resume-ids", func(o *acptest.Options) {
		replayingResume(o, func(hist []json.RawMessage) []json.RawMessage {
			var out []json.RawMessage
			for _, u := range hist {
				out = append(out, bytes.ReplaceAll(u, []byte(`"messageId":"`), []byte(`"messageId":"other-`)))
			}
			return out
		}, false)
	}},
	{"v2.resume-state", func(o *acptest.Options) {
		replayingResume(o, func(hist []json.RawMessage) []json.RawMessage { return hist }, true) // the snapshot first
	}},
	{"v2.close", func(o *acptest.Options) {
		o.Methods = map[string]acptest.MethodFunc{"session/close": result(map[string]any{})} // and the session stays open
	}},
	{"v2.background", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if strings.HasPrefix(t.PromptText(), "background") {
				t.AfterTurn(func() { // lists a terminal it never announced
					t.UpdateAs(t.SessionID(), map[string]any{"sessionUpdate": "state_update", "state": "idle",
						"background": []any{map[string]any{"type": "terminal", "terminalId": "ghost"}}})
				})
				return schema.StopReasonEndTurn, nil
			}
			return goodTurn(t)
		}
	}},
	{"v2.background-ends", func(o *acptest.Options) { withBackground(o, false) }},
	{"v2.close", func(o *acptest.Options) {
		o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
			if !strings.HasPrefix(t.PromptText(), "background") {
				return goodTurn(t)
			}
			// A terminal that streams until its connection ends, through
			// session/close: closing does not stop it.
			term := fmt.Sprintf("tick-%d", t.Number())
			t.AfterTurn(func() {
				sid := t.SessionID()
				t.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_update", "terminalId": term, "command": "tick", "cwd": t.Cwd()})
				t.UpdateAs(sid, map[string]any{"sessionUpdate": "state_update", "state": "idle",
					"background": []any{map[string]any{"type": "terminal", "terminalId": term}}})
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-t.Context().Done():
						return
					case <-tick.C:
						t.UpdateAs(sid, map[string]any{"sessionUpdate": "terminal_output_chunk", "terminalId": term, "data": "dGljawo="})
					}
				}
			})
			return schema.StopReasonEndTurn, nil
		}
	}},
}

// replayingResume replaces o's session/resume with one that replays
// replay(the session's history) when asked to, and sends the
// current-state snapshot after it (before it with stateFirst).
func replayingResume(o *acptest.Options, replay func([]json.RawMessage) []json.RawMessage, stateFirst bool) {
	var mu sync.Mutex
	hist := map[string][]json.RawMessage{}
	turn := o.OnPrompt
	o.OnPrompt = func(t *acptest.Turn) (schema.StopReason, error) {
		stop, err := turn(t)
		mu.Lock()
		hist[t.SessionID()] = t.History()
		mu.Unlock()
		return stop, err
	}
	if o.Methods == nil {
		o.Methods = map[string]acptest.MethodFunc{}
	}
	o.Methods["session/resume"] = func(_ context.Context, c *acptest.Conn, params json.RawMessage) (any, error) {
		var p struct {
			SessionID  string          `json:"sessionId"`
			ReplayFrom json.RawMessage `json:"replayFrom"`
		}
		json.Unmarshal(params, &p)
		send := func(u any) error {
			return c.Notify("session/update", map[string]any{"sessionId": p.SessionID, "update": u})
		}
		state := map[string]any{"sessionUpdate": "state_update", "state": "idle", "background": []any{}}
		if stateFirst {
			send(state)
		}
		if len(p.ReplayFrom) > 0 && string(p.ReplayFrom) != "null" {
			mu.Lock()
			updates := replay(hist[p.SessionID])
			mu.Unlock()
			for _, u := range updates {
				send(u)
			}
		}
		if !stateFirst {
			send(state)
		}
		return map[string]any{}, nil
	}
}

// TestCheckBrokenV2AgentsCaught: each v2 agent that breaks one rule fails
// that rule in v2.
func TestCheckBrokenV2AgentsCaught(t *testing.T) {
	for _, b := range brokenV2 {
		t.Run(b.rule, func(t *testing.T) {
			t.Parallel()
			o := goodOptions()
			o.Version, o.Modes, o.ConfigOptions = 2, nil, nil
			withBackground(o, true)
			b.breaks(o)
			opts := goodPrompts
			opts.Prompts.Background = "background please"
			opts.ScenarioTimeout = 2 * time.Second
			rep := gradeAgent(t, acptest.New(o), &opts)
			res, ok := rep.Result(b.rule, 2)
			if !ok || res.Status != conformance.Fail {
				t.Fatalf("%s: %s (%s), want fail", b.rule, res.Status, res.Message)
			}
			if rep.Passed(false) {
				t.Error("a MUST rule failed but the report passed")
			}
			t.Logf("%s: %s", b.rule, res.Message)
		})
	}
}

// TestCheckInvalidParamsCaught: an agent that accepts session/new with
// ill-typed params (a number for cwd, a string for mcpServers) instead of
// answering -32602 fails jsonrpc.invalid-params. acptest itself decodes
// params strictly, so the agent is the compliant one behind a stdin that
// mends exactly those params before it reads them: what it answers is
// what an agent that ignores its params' types would.
func TestCheckInvalidParamsCaught(t *testing.T) {
	a := acptest.New(goodOptions())
	t.Cleanup(func() { a.Close() })
	target := conformance.Target{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		r, w := a.Pipe()
		return &mendingConn{ReadCloser: r, w: w}, nil
	}}
	opts := goodPrompts
	opts.ScenarioTimeout = 10 * time.Second
	rep, err := conformance.Run(context.Background(), target, &opts)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := rep.Result("jsonrpc.invalid-params", 1)
	if !ok || res.Status != conformance.Fail || len(res.Evidence) == 0 {
		t.Fatalf("jsonrpc.invalid-params: %s (%s), evidence %d, want a failure shown by its frames", res.Status, res.Message, len(res.Evidence))
	}
	if rep.Passed(false) {
		t.Error("a MUST rule failed but the report passed")
	}
}

// mendingConn is the client's side of a pipe to an agent, rewriting the
// probe's ill-typed session/new params into valid ones, line by line.
type mendingConn struct {
	io.ReadCloser
	w   io.WriteCloser
	buf []byte
}

var (
	illTyped = []byte(`"params":{"cwd":42,"mcpServers":"none"}`)
	mended   = []byte(`"params":{"cwd":"/","mcpServers":[]}`)
)

func (m *mendingConn) Write(b []byte) (int, error) {
	m.buf = append(m.buf, b...)
	for {
		i := bytes.IndexByte(m.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := bytes.Replace(m.buf[:i+1], illTyped, mended, 1)
		if _, err := m.w.Write(line); err != nil {
			return 0, err
		}
		m.buf = m.buf[i+1:]
	}
}

func (m *mendingConn) Close() error {
	werr := m.w.Close()
	if err := m.ReadCloser.Close(); err != nil {
		return err
	}
	return werr
}
