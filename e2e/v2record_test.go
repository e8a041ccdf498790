//go:build linux

package e2e

// Recordings of ACP v2 sessions made with a raw JSON-line driver rather
// than the acp client: what the real agents (codex-acp 2.6.0 and
// claude-agent-acp 0.101.0, pinned in package-lock.json) answer to each
// version offered, and the TypeScript SDK's scripted v2 agent
// (../interop/tsagent/agent_v2.mjs) in its scenarios. With -record they
// are written to ../testdata/transcripts/v2/ (sanitized like the v1 ones);
// the root package's TestV2RecordingsValid checks every frame against the
// v2 schema. The real agents' sessions in v2 are the e2e scenarios
// themselves, through our client (eachAgent; e2e-v2-* recordings).

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	tsOnce sync.Once
	tsErr  error
)

// npmCIIn runs `npm ci` in dir unless node_modules already holds exactly
// what dir/package-lock.json pins (the sha256 in node_modules/.acp-lock-hash).
func npmCIIn(npm, dir string) error {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	hashPath := filepath.Join(dir, "node_modules", lockHashFile)
	if got, err := os.ReadFile(hashPath); err == nil && strings.TrimSpace(string(got)) == want {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return os.WriteFile(hashPath, []byte(want+"\n"), 0o644)
}

func installIn(t *testing.T, once *sync.Once, errp *error, dir string) {
	t.Helper()
	needTool(t, "node")
	npm := needTool(t, "npm")
	once.Do(func() { *errp = npmCIIn(npm, dir) })
	if *errp != nil {
		t.Fatalf("installing %s failed: %v", dir, *errp)
	}
}

// v2agent is an agent recorded in v2: a name (the recording's prefix) and
// how to start it against the model.
type v2agent struct {
	name  string
	setup func(t *testing.T, m *Model) (argv, env []string)
}

var (
	codexV2  = v2agent{name: "codex", setup: func(t *testing.T, m *Model) ([]string, []string) { return setupCodexMode(t, m, "") }}
	claudeV2 = v2agent{name: "claude", setup: setupClaude}
	tsV2     = v2agent{name: "tsagent-v2", setup: tsSetup("agent_v2.mjs")}
	tsV1     = v2agent{name: "tsagent-v1", setup: tsSetup("agent.mjs")}
)

func tsSetup(script string) func(t *testing.T, m *Model) ([]string, []string) {
	return func(t *testing.T, m *Model) ([]string, []string) {
		dir := filepath.Join("..", "interop", "tsagent")
		installIn(t, &tsOnce, &tsErr, dir)
		p, err := filepath.Abs(filepath.Join(dir, script))
		if err != nil {
			t.Fatal(err)
		}
		return []string{needTool(t, "node"), p}, baseEnv(t.TempDir())
	}
}

// ---------------------------------------------------------------------------
// The raw driver: JSON lines in and out, every frame kept in the
// transcript format of acptest.ReadTranscript.

type wireErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type wireMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *wireErr        `json:"error,omitempty"`
}

type wireUpdate struct {
	SessionID string         `json:"sessionId"`
	Update    map[string]any `json:"update"`
}

// wire is one agent process driven by hand.
type wire struct {
	t      *testing.T
	name   string
	in     io.WriteCloser
	msgs   chan wireMsg
	nextID int

	mu     sync.Mutex
	start  time.Time
	trace  bytes.Buffer // transcript lines
	stderr bytes.Buffer
}

func (w *wire) Write(p []byte) (int, error) { // stderr
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stderr.Len() < 1<<20 {
		w.stderr.Write(p)
	}
	return len(p), nil
}

func (w *wire) stderrTail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stderr.String()
	if len(s) > 6000 {
		s = s[len(s)-6000:]
	}
	return s
}

func (w *wire) frame(dir string, line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ms := float64(time.Since(w.start).Microseconds()) / 1000
	fmt.Fprintf(&w.trace, `{"t":%s,"dir":%q,"msg":%s}`+"\n", strconv.FormatFloat(ms, 'f', 1, 64), dir, line)
}

// startWire starts argv in its own process group in dir; the test's cleanup
// closes stdin, then ends the group (SIGTERM, SIGKILL after 5 s).
func startWire(t *testing.T, name string, argv, env []string, dir string) *wire {
	t.Helper()
	w := &wire{t: t, name: name, msgs: make(chan wireMsg, 4096), nextID: 1, start: time.Now()}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w.in = in
	done := make(chan struct{})
	go func() {
		defer close(w.msgs)
		br := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if l := bytes.TrimSpace(line); len(l) > 0 {
				var m wireMsg
				if json.Unmarshal(l, &m) != nil {
					w.frame("!", []byte(strconv.Quote("stdout (not JSON): "+string(l))))
					t.Errorf("%s: a line that is not JSON on stdout: %.200s", name, l)
					continue
				}
				w.frame("<", l)
				w.msgs <- m
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		in.Close()
		pgid := cmd.Process.Pid
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
			syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-pgid, syscall.SIGKILL)
				<-done
			}
		}
		// Commands the agent ran may outlive it in the group.
		syscall.Kill(-pgid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, w.stderrTail())
		}
	})
	return w
}

func (w *wire) write(v any) {
	w.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatal(err)
	}
	w.frame(">", b)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		w.t.Fatalf("%s: write: %v", w.name, err)
	}
}

func (w *wire) notify(method string, params any) {
	w.t.Helper()
	w.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (w *wire) reply(req wireMsg, result any) {
	w.t.Helper()
	w.write(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

func (w *wire) next(what string, d time.Duration) (wireMsg, bool) {
	w.t.Helper()
	select {
	case m, ok := <-w.msgs:
		if !ok {
			w.t.Fatalf("%s: %s: the agent closed stdout\nstderr:\n%s", w.name, what, w.stderrTail())
		}
		return m, true
	case <-time.After(d):
		return wireMsg{}, false
	}
}

func (w *wire) send(method string, params any) int {
	w.t.Helper()
	id := w.nextID
	w.nextID++
	w.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id
}

// call sends a request and reads up to its response; every other message
// goes to onMsg (nil: notifications are kept, requests fail the test).
func (w *wire) call(method string, params any, onMsg func(wireMsg)) wireMsg {
	w.t.Helper()
	id := w.send(method, params)
	deadline := time.Now().Add(90 * time.Second)
	for {
		m, ok := w.next(method, time.Until(deadline))
		if !ok {
			w.t.Fatalf("%s: %s: no response within 90 s\nstderr:\n%s", w.name, method, w.stderrTail())
		}
		if m.Method == "" && string(m.ID) == strconv.Itoa(id) {
			return m
		}
		if onMsg != nil {
			onMsg(m)
		} else if m.ID != nil && m.Method != "" {
			w.t.Fatalf("%s: %s: unexpected request %s %s", w.name, method, m.Method, m.Params)
		}
	}
}

func (w *wire) result(method string, params, out any, onMsg func(wireMsg)) {
	w.t.Helper()
	m := w.call(method, params, onMsg)
	if m.Error != nil {
		w.t.Fatalf("%s: %s: error %d %s %s\nstderr:\n%s", w.name, method, m.Error.Code, m.Error.Message, m.Error.Data, w.stderrTail())
	}
	if out != nil {
		if err := json.Unmarshal(m.Result, out); err != nil {
			w.t.Fatalf("%s: %s result %s: %v", w.name, method, m.Result, err)
		}
	}
}

// initV2 offers protocol version 2 and returns the raw result.
func (w *wire) initV2() map[string]any {
	w.t.Helper()
	var res map[string]any
	w.result("initialize", map[string]any{
		"protocolVersion": 2,
		"info":            map[string]any{"name": "acp-go-v2-recorder", "version": "0.1.0"},
		"capabilities":    map[string]any{},
	}, &res, nil)
	if res["protocolVersion"] != 2.0 {
		w.t.Fatalf("%s: initialize offering 2 answered protocolVersion %v", w.name, res["protocolVersion"])
	}
	return res
}

func (w *wire) newSession(cwd string) string {
	w.t.Helper()
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	w.result("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &ns, nil)
	if ns.SessionID == "" {
		w.t.Fatalf("%s: session/new: no sessionId", w.name)
	}
	return ns.SessionID
}

// v2turn is what a prompt produced up to the turn's end.
type v2turn struct {
	response wireMsg
	idle     map[string]any // the idle state_update with a stop reason
	kinds    []string       // update kinds (state_update:<state>), requests and "response", in wire order
	updates  []map[string]any
}

func (tr v2turn) stopReason() string { s, _ := tr.idle["stopReason"].(string); return s }

// prompt sends a text prompt and reads until the response came and (unless
// it failed) an idle state_update with a stop reason. Agent requests and
// $/cancel_request go to onReq.
func (w *wire) prompt(sid, text string, onReq func(wireMsg)) v2turn {
	w.t.Helper()
	id := w.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	var tr v2turn
	answered := false
	deadline := time.Now().Add(120 * time.Second)
	for !answered || (tr.response.Error == nil && tr.idle == nil) {
		m, ok := w.next("prompt", time.Until(deadline))
		if !ok {
			w.t.Fatalf("%s: prompt %q: no end within 120 s (answered %v; saw %v)\nstderr:\n%s", w.name, text, answered, tr.kinds, w.stderrTail())
		}
		switch {
		case m.Method == "" && string(m.ID) == strconv.Itoa(id):
			answered = true
			tr.response = m
			tr.kinds = append(tr.kinds, "response")
		case m.Method == "session/update":
			var u wireUpdate
			if err := json.Unmarshal(m.Params, &u); err != nil {
				w.t.Fatalf("%s: session/update %s: %v", w.name, m.Params, err)
			}
			k := fmt.Sprint(u.Update["sessionUpdate"])
			if k == "state_update" {
				k += ":" + fmt.Sprint(u.Update["state"])
				if u.Update["state"] == "idle" && u.Update["stopReason"] != nil {
					tr.idle = u.Update
				}
			}
			tr.kinds = append(tr.kinds, k)
			tr.updates = append(tr.updates, u.Update)
		case onReq != nil:
			tr.kinds = append(tr.kinds, m.Method)
			onReq(m)
		case m.ID != nil && m.Method != "":
			w.t.Fatalf("%s: unexpected request %s %s", w.name, m.Method, m.Params)
		}
	}
	return tr
}

// save writes the sanitized transcript as ../testdata/transcripts/v2/<name>.jsonl
// when -record is set.
func (w *wire) save(name, dir, home, url string) {
	w.t.Helper()
	if !*record {
		return
	}
	if w.t.Failed() {
		w.t.Logf("not recording %s: the test failed", name)
		return
	}
	w.mu.Lock()
	trace := append([]byte(nil), w.trace.Bytes()...)
	w.mu.Unlock()
	out := sanitize(trace, map[string]string{dir: "/tmp/e2e/work", home: "/tmp/e2e/home", url: "http://127.0.0.1:8000"})
	p := filepath.Join("..", "testdata", "transcripts", "v2", name+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// v2run is one recorded process: the driver, its model and directories.
type v2run struct {
	*wire
	ag    v2agent
	Model *Model
	Dir   string
	home  string
	argv  []string
	env   []string
}

func startV2(t *testing.T, ag v2agent) *v2run {
	t.Helper()
	m := newModel(t)
	r := &v2run{ag: ag, Model: m, Dir: t.TempDir()}
	if d, err := filepath.EvalSymlinks(r.Dir); err == nil {
		r.Dir = d
	}
	r.argv, r.env = ag.setup(t, m)
	for _, kv := range r.env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			r.home = h
		}
	}
	r.wire = startWire(t, ag.name, r.argv, r.env, r.Dir)
	return r
}

func (r *v2run) save(name string) { r.wire.save(r.ag.name+"-"+name, r.Dir, r.home, r.Model.URL) }

// optionOf returns the optionId of the first option of kind in a
// session/request_permission's params.
func optionOf(t *testing.T, params json.RawMessage, kind string) string {
	t.Helper()
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("request_permission params %s: %v", params, err)
	}
	for _, o := range p.Options {
		if o.Kind == kind {
			return o.OptionID
		}
	}
	t.Fatalf("request_permission %s has no %s option", params, kind)
	return ""
}

// ---------------------------------------------------------------------------
// The recordings

// TestV2Versions records what each agent answers to protocolVersion 1 and 2
// (the version table of docs/V2.md): <agent>-offer1 and <agent>-offer2.
func TestV2Versions(t *testing.T) {
	for _, ag := range []v2agent{codexV2, claudeV2, tsV2, tsV1} {
		t.Run(ag.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range []int{1, 2} {
				r := startV2(t, ag)
				params := map[string]any{"protocolVersion": v}
				if v == 1 {
					params["clientCapabilities"] = map[string]any{}
					params["clientInfo"] = map[string]any{"name": "acp-go-v2-recorder", "version": "0.1.0"}
				} else {
					params["capabilities"] = map[string]any{}
					params["info"] = map[string]any{"name": "acp-go-v2-recorder", "version": "0.1.0"}
				}
				m := r.call("initialize", params, nil)
				var res struct {
					ProtocolVersion int             `json:"protocolVersion"`
					Info            json.RawMessage `json:"info"`
					AgentInfo       json.RawMessage `json:"agentInfo"`
				}
				json.Unmarshal(m.Result, &res)
				switch {
				case m.Error != nil:
					t.Logf("offered %d: error %d %s %s", v, m.Error.Code, m.Error.Message, m.Error.Data)
				default:
					t.Logf("offered %d: protocolVersion %d (info %v, agentInfo %v)", v, res.ProtocolVersion, res.Info != nil, res.AgentInfo != nil)
				}
				// The agent answers at most the version offered, in that
				// version's shape, or -32022.
				if m.Error == nil && (res.ProtocolVersion > v || res.ProtocolVersion == 2 && res.Info == nil || res.ProtocolVersion == 1 && res.Info != nil) {
					t.Errorf("offered %d: %s", v, m.Result)
				}
				if m.Error != nil && m.Error.Code != -32022 {
					t.Errorf("offered %d: error %+v, want a version or -32022", v, m.Error)
				}
				r.save(fmt.Sprintf("offer%d", v))
			}
		})
	}
}

// The real agents' text, permission, cancel and resume recordings
// (<agent>-text, -permission, -cancel, -resume-first, -resume) were made
// here by raw tests like the TS agent's below, with codex-acp 2.6.0 and
// claude-agent-acp 0.101.0 as pinned. Those tests are gone: the e2e
// scenarios run in v2 through our client now (TestText, TestPermission*,
// TestLoadSession …, recorded as ../testdata/transcripts/e2e-v2-*), which
// is the same wire and more, at half the cost. The raw recordings stay:
// the root package's TestV2Replay* and TestV2RecordingsValid read them as
// fixtures of what the agents sent to a client that was not ours.

// TestV2Text: the TS agent's text turns: updates, an idle error, a
// rejected prompt.
func TestV2Text(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession("/tmp/acp-interop")
	if tr := r.prompt(sid, "updates", nil); tr.stopReason() != "end_turn" {
		t.Fatalf("updates: %v", tr.idle)
	}
	if tr := r.prompt(sid, "error", nil); tr.stopReason() != "error" {
		t.Fatalf("error: %v", tr.idle)
	}
	if tr := r.prompt(sid, "reject", nil); tr.response.Error == nil {
		t.Fatalf("reject: %s", tr.response.Result)
	}
	r.save("text")
}

// TestV2Permission: a permission round answered allow_once.
func TestV2Permission(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession(r.Dir)
	asked := 0
	tr := r.prompt(sid, "permission", func(m wireMsg) {
		if m.Method != "session/request_permission" {
			t.Logf("agent sent %s %s", m.Method, m.Params)
			return
		}
		asked++
		r.reply(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionOf(t, m.Params, "allow_once")}})
	})
	if asked != 1 || tr.stopReason() != "end_turn" {
		t.Fatalf("asked %d times; idle %v, response %s %+v", asked, tr.idle, tr.response.Result, tr.response.Error)
	}
	r.save("permission")
}

// TestV2Cancel: session/cancel while a permission request is pending. The
// client answers the request "cancelled" when the agent withdraws it
// ($/cancel_request) or, if the agent never does, when the turn ends.
func TestV2Cancel(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession(r.Dir)
	var pending *wireMsg
	withdrawn := false
	tr := r.prompt(sid, "cancel", func(m wireMsg) {
		switch m.Method {
		case "session/request_permission":
			pending = &m
			r.notify("session/cancel", map[string]any{"sessionId": sid})
		case "$/cancel_request":
			withdrawn = true
			if pending != nil {
				r.reply(*pending, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
				pending = nil
			}
		default:
			t.Logf("agent sent %s %s", m.Method, m.Params)
		}
	})
	if pending != nil {
		r.reply(*pending, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
	}
	t.Logf("events %v; withdrawn by $/cancel_request: %v", tr.kinds, withdrawn)
	if tr.stopReason() != "cancelled" {
		t.Errorf("idle %v response %s %+v; want stopReason cancelled", tr.idle, tr.response.Result, tr.response.Error)
	}
	r.save("cancel")
}

// TestV2Resume: a text turn, then session/resume with replayFrom
// {"type":"start"} on the same connection (the TS agent keeps history in
// memory).
func TestV2Resume(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession(r.Dir)
	if tr := r.prompt(sid, "remember this", nil); tr.stopReason() != "end_turn" {
		t.Fatalf("first turn: %v %+v", tr.idle, tr.response.Error)
	}
	var replay []string
	m := r.call("session/resume", map[string]any{
		"sessionId":  sid,
		"cwd":        r.Dir,
		"mcpServers": []any{},
		"replayFrom": map[string]any{"type": "start"},
	}, func(m wireMsg) {
		var u wireUpdate
		json.Unmarshal(m.Params, &u)
		replay = append(replay, fmt.Sprint(m.Method, ":", u.Update["sessionUpdate"]))
	})
	if m.Error != nil {
		t.Fatalf("session/resume: %+v", m.Error)
	}
	t.Logf("resume replay %v", replay)
	if len(replay) == 0 {
		t.Errorf("resume with replayFrom start replayed nothing")
	}
	r.save("resume")
}

// TestV2BackgroundTerminal: the TS agent's terminal outlives its turn and
// stops on terminal/cancel.
func TestV2BackgroundTerminal(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession("/tmp/acp-interop")
	tr := r.prompt(sid, "terminal", nil)
	if tr.stopReason() != "end_turn" {
		t.Fatalf("terminal: %v", tr.idle)
	}
	for i := 0; i < 2; i++ {
		if _, ok := r.next("tick", 10*time.Second); !ok {
			t.Fatal("no output after the turn")
		}
	}
	r.result("terminal/cancel", map[string]any{"sessionId": sid, "terminalId": "t1-term"}, nil, func(wireMsg) {})
	for {
		m, ok := r.next("idle after terminal/cancel", 10*time.Second)
		if !ok {
			t.Fatal("no idle after terminal/cancel")
		}
		var u wireUpdate
		json.Unmarshal(m.Params, &u)
		if u.Update["sessionUpdate"] == "state_update" {
			break
		}
	}
	r.save("terminal")
}

// TestV2Extras: the TS agent's extensions (a notification, a request the
// client answers, the agent's own $/cancel_request) and a background tool
// call stopped by tool_call/cancel.
func TestV2Extras(t *testing.T) {
	r := startV2(t, tsV2)
	r.initV2()
	sid := r.newSession("/tmp/acp-interop")
	var slow *wireMsg
	for _, text := range []string{"ext", "cancel_request"} {
		tr := r.prompt(sid, text, func(m wireMsg) {
			switch m.Method {
			case "_acp/echo":
				r.reply(m, map[string]any{"echoed": true})
			case "_acp/slow":
				slow = &m
			case "$/cancel_request":
				if slow != nil {
					r.write(map[string]any{"jsonrpc": "2.0", "id": slow.ID, "error": map[string]any{"code": -32800, "message": "Request cancelled"}})
				}
			}
		})
		if tr.stopReason() != "end_turn" {
			t.Fatalf("%s: %v", text, tr.idle)
		}
	}
	if tr := r.prompt(sid, "bgtool", nil); tr.stopReason() != "end_turn" {
		t.Fatalf("bgtool: %v", tr.idle)
	}
	r.result("tool_call/cancel", map[string]any{"sessionId": sid, "toolCallId": "t3-bg"}, nil, nil)
	for {
		m, ok := r.next("idle after tool_call/cancel", 10*time.Second)
		if !ok {
			t.Fatal("no idle after tool_call/cancel")
		}
		var u wireUpdate
		json.Unmarshal(m.Params, &u)
		if u.Update["sessionUpdate"] == "state_update" {
			break
		}
	}
	r.save("extras")
}
