package acp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp/acptest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// v2Schema is the ACP v2 schema the agents of today speak (the TypeScript
// SDK 2.4.0's copy; see schema/sdk-2.4.0/SOURCE.md).
const v2Schema = "schema/sdk-2.4.0/v2/schema.json"

// v2Method is what the schema says of one method: the $defs names of its
// params and result (result "" for a notification) and the side that
// receives it ("agent", "client", or "protocol" for either).
type v2Method struct {
	params, result, side string
}

// v2Methods reads the method table from the schema's x-method / x-side
// annotations, so a method the schema adds is known here without an edit.
func v2Methods(t *testing.T, defs map[string]json.RawMessage) map[string]*v2Method {
	t.Helper()
	out := map[string]*v2Method{}
	for name, raw := range defs {
		var d struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		}
		if err := json.Unmarshal(raw, &d); err != nil || d.Method == "" {
			continue
		}
		m := out[d.Method]
		if m == nil {
			m = &v2Method{side: d.Side}
			out[d.Method] = m
		}
		switch {
		case strings.HasSuffix(name, "Response"):
			m.result = name
		case strings.HasSuffix(name, "Request"), strings.HasSuffix(name, "Notification"):
			m.params = name
		default:
			t.Fatalf("schema def %s has x-method %s but is neither a request, a response nor a notification", name, d.Method)
		}
	}
	return out
}

// TestV2RecordingsValid holds the v2 recordings of testdata/transcripts/v2
// (made by e2e's TestV2* with -record) to the v2 schema: every frame is
// JSON-RPC 2.0, every method is one the schema defines (or an extension,
// "_…"), sent by the side that may send it, and its params, and the result
// or error of its response, validate against the schema's definitions. A
// recording that does not pass is not a fixture the v2 core can be built
// on; what the agents send beyond the schema is listed in docs/V2.md.
func TestV2RecordingsValid(t *testing.T) {
	v2 := newV2Checker(t)
	paths, _ := filepath.Glob("testdata/transcripts/v2/*.jsonl")
	// The recordings TestV2* writes: each agent's offers, text, permission,
	// cancel and resume, and the TS agent's background terminal and extras.
	if len(paths) != 24 {
		t.Fatalf("found %d v2 recordings, want 24", len(paths))
	}
	// And the e2e suite's v2 runs through our client (e2e-v2-*, replayed
	// by TestE2ETranscripts): one for every v1 e2e recording but those of
	// the client fs/terminal scenarios, which v2 does not have.
	e2e, _ := filepath.Glob("testdata/transcripts/e2e-v2-*.jsonl")
	v1, _ := filepath.Glob("testdata/transcripts/e2e-*.jsonl")
	for _, p := range v1 {
		name := strings.TrimPrefix(filepath.Base(p), "e2e-")
		if strings.HasPrefix(name, "v2-") || strings.Contains(name, "client-capabilities") {
			continue
		}
		if !slices.Contains(e2e, filepath.Join("testdata", "transcripts", "e2e-v2-"+name)) {
			t.Errorf("%s has no v2 counterpart e2e-v2-%s (run e2e with -record)", p, name)
		}
	}
	if len(e2e) == 0 {
		t.Fatal("no e2e-v2-* recordings")
	}
	paths = append(paths, e2e...)
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			frames, err := acptest.ReadTranscript(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range v2.check(frames, strings.Contains(name, "offer1")) {
				t.Error(p)
			}
		})
	}
}

// v2Checker checks frames against the v2 schema.
type v2Checker struct {
	methods map[string]*v2Method
	schema  func(def string) (*jsonschema.Schema, error)
}

// newV2Checker compiles the v2 schema's method table and definitions.
func newV2Checker(t *testing.T) *v2Checker {
	t.Helper()
	raw, err := os.ReadFile(v2Schema)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("acp-v2.json", doc); err != nil {
		t.Fatal(err)
	}
	compiled := map[string]*jsonschema.Schema{}
	return &v2Checker{
		methods: v2Methods(t, root.Defs),
		schema: func(def string) (*jsonschema.Schema, error) {
			if s, ok := compiled[def]; ok {
				return s, nil
			}
			s, err := c.Compile("acp-v2.json#/$defs/" + def)
			if err != nil {
				return nil, err
			}
			compiled[def] = s
			return s, nil
		},
	}
}

// check returns what is wrong with a recording's frames, nothing when it is
// well-formed v2. offer1 marks a recording whose initialize offers
// version 1 on purpose.
func (v2 *v2Checker) check(frames []acptest.Frame, offer1 bool) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	methods := v2.methods
	validate := func(i int, what, def string, v json.RawMessage) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
		if err != nil {
			errorf("frame %d: %s: %v", i+1, what, err)
			return
		}
		sch, err := v2.schema(def)
		if err != nil {
			errorf("frame %d: compiling %s: %v", i+1, def, err)
			return
		}
		if err := sch.Validate(inst); err != nil {
			errorf("frame %d: %s does not validate against %s: %v\n%.600s", i+1, what, def, err, v)
		}
	}
	// Requests awaiting a response, by direction of the request and id.
	pending := map[string]string{}
	var sawInit bool
	for i, f := range frames {
		if f.Dir != ">" && f.Dir != "<" {
			errorf("frame %d: direction %q: a recording holds frames only", i+1, f.Dir)
			continue
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(f.Msg, &m); err != nil || m.JSONRPC != "2.0" {
			errorf("frame %d: not a JSON-RPC 2.0 message: %.300s", i+1, f.Msg)
			continue
		}
		// The side that receives the frame: ">" is what the client sent.
		to := map[string]string{">": "agent", "<": "client"}[f.Dir]
		switch {
		case m.Method != "":
			if m.ID != nil {
				pending[f.Dir+string(m.ID)] = m.Method
			}
			if strings.HasPrefix(m.Method, "_") {
				continue // an extension: the schema says nothing of its shape
			}
			def, ok := methods[m.Method]
			if !ok {
				errorf("frame %d: method %q is not in the v2 schema", i+1, m.Method)
				continue
			}
			if def.side != "protocol" && def.side != to {
				errorf("frame %d: %s sent to the %s; the schema has the %s receive it", i+1, m.Method, to, def.side)
			}
			if (m.ID == nil) != (def.result == "") {
				errorf("frame %d: %s sent as a %s", i+1, m.Method, map[bool]string{true: "notification", false: "request"}[m.ID == nil])
			}
			if m.Method == "initialize" {
				sawInit = true
				if offer1 {
					continue // the v1 offer is v1-shaped on purpose
				}
			}
			validate(i, m.Method+" params", def.params, m.Params)
		default:
			// A response goes the other way from its request.
			back := map[string]string{">": "<", "<": ">"}[f.Dir]
			method, ok := pending[back+string(m.ID)]
			if !ok {
				errorf("frame %d: a response to no request (id %s)", i+1, m.ID)
				continue
			}
			delete(pending, back+string(m.ID))
			if m.Error != nil {
				validate(i, method+" error", "Error", m.Error)
				if method == "initialize" && !offer1 {
					errorf("frame %d: initialize offering 2 failed: %s", i+1, m.Error)
				}
				continue
			}
			if strings.HasPrefix(method, "_") {
				continue
			}
			def := methods[method]
			if def == nil || def.result == "" {
				continue // reported at the request
			}
			if method == "initialize" {
				// An agent that also speaks v1 answers an offer of 1 (and
				// a v1-only agent any offer) with version 1 in the v1
				// shape: not a v2 frame.
				var r struct {
					ProtocolVersion int `json:"protocolVersion"`
				}
				json.Unmarshal(m.Result, &r)
				if r.ProtocolVersion == 1 {
					continue
				}
			}
			validate(i, method+" result", def.result, m.Result)
		}
	}
	if !sawInit {
		errorf("no initialize: every recording starts a connection")
	}
	if offer1 {
		return problems
	}
	var left []string
	for k, method := range pending {
		left = append(left, fmt.Sprint(method, " ", k))
	}
	slices.Sort(left)
	if len(left) > 0 {
		errorf("requests never answered: %v", left)
	}
	return problems
}

// The checker rejects what a v2 recording must not hold, each with a
// message naming the frame: without it TestV2RecordingsValid would pass
// anything.
func TestV2CheckerRejects(t *testing.T) {
	v2 := newV2Checker(t)
	init := []string{
		`{"t":0,"dir":">","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"0"}}}}`,
		`{"t":1,"dir":"<","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"info":{"name":"a","version":"0"}}}}`,
	}
	frames := func(lines ...string) []acptest.Frame {
		fs, err := acptest.ReadTranscript(strings.NewReader(strings.Join(append(append([]string{}, init...), lines...), "\n")))
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if p := v2.check(frames(), false); len(p) != 0 {
		t.Fatalf("a valid handshake: %v", p)
	}
	update := func(u string) string {
		return `{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":` + u + `}}}`
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"chunk without messageId", []string{update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`)}, "missing property 'messageId'"},
		{"v1 stop reason on the prompt response", []string{
			`{"t":2,"dir":">","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"x"}]}}}`,
			`{"t":3,"dir":"<","msg":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}}`,
		}, "session/prompt result does not validate against PromptResponse"},
		{"a v1-only method", []string{`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}}`}, "not in the v2 schema"},
		{"a method sent the wrong way", []string{`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/"}}}`}, "the schema has the agent receive it"},
		{"a notification sent as a request", []string{`{"t":2,"dir":">","msg":{"jsonrpc":"2.0","id":7,"method":"session/cancel","params":{"sessionId":"s"}}}`}, "sent as a request"},
		{"state_update without state", []string{update(`{"sessionUpdate":"state_update"}`)}, "missing property 'state'"},
		{"permission request without options", []string{`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","title":"t","options":[]}}}`, `{"t":3,"dir":">","msg":{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}}`}, "at '/options'"},
		{"a response to no request", []string{`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","id":9,"result":{}}}`}, "a response to no request"},
		{"a request never answered", []string{`{"t":2,"dir":">","msg":{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}}`}, "never answered"},
		{"not JSON-RPC 2.0", []string{`{"t":2,"dir":"<","msg":{"method":"session/update","params":{}}}`}, "not a JSON-RPC 2.0 message"},
	} {
		p := v2.check(frames(tc.lines...), false)
		if len(p) == 0 || !strings.Contains(strings.Join(p, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want one mentioning %q", tc.name, p, tc.want)
		}
	}
	// An extension is not checked, whatever its shape.
	if p := v2.check(frames(`{"t":2,"dir":"<","msg":{"jsonrpc":"2.0","method":"_x/anything","params":[1]}}`), false); len(p) != 0 {
		t.Errorf("an extension notification: %v", p)
	}
}

// TestV2RecordingsReplay plays each v2 recording through acptest.Replay
// and drives it with its own recorded client frames over raw lines, each
// sent once the agent frames recorded before it have arrived (answers to
// the agent's requests carry the live ids): every recorded agent frame
// comes back, the same methods and update kinds. The recordings are
// fixtures the v2 core replays; this holds that acptest, which knows
// nothing of versions, plays them whole.
func TestV2RecordingsReplay(t *testing.T) {
	paths, _ := filepath.Glob("testdata/transcripts/v2/*.jsonl")
	if len(paths) == 0 {
		t.Fatal("no v2 recordings")
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			frames, err := acptest.ReadTranscript(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			agent := acptest.Replay(frames)
			defer agent.Close()
			fromAgent, toAgent := agent.Pipe()
			defer toAgent.Close()

			type msg struct {
				ID     json.RawMessage `json:"id,omitempty"`
				Method string          `json:"method,omitempty"`
				Params struct {
					Update struct {
						Kind string `json:"sessionUpdate"`
					} `json:"update"`
				} `json:"params"`
			}
			kind := func(b []byte) string {
				var m msg
				json.Unmarshal(b, &m)
				switch {
				case m.Method == "session/update":
					return "update:" + m.Params.Update.Kind
				case m.Method != "":
					return m.Method
				default:
					return "response"
				}
			}
			got := make(chan []byte, 1<<14)
			go func() {
				defer close(got)
				sc := bufio.NewScanner(fromAgent)
				sc.Buffer(nil, 16<<20)
				for sc.Scan() {
					got <- append([]byte(nil), sc.Bytes()...)
				}
			}()
			var received [][]byte
			// The agent's requests by arrival: the n-th recorded agent
			// request is the n-th live one.
			var liveReqIDs []json.RawMessage
			recReqIndex := map[string]int{}
			waitFor := func(n int) {
				t.Helper()
				timeout := time.After(10 * time.Second)
				for len(received) < n {
					select {
					case b, ok := <-got:
						if !ok {
							t.Fatalf("the replay closed after %d of %d frames", len(received), n)
						}
						received = append(received, b)
						var m msg
						json.Unmarshal(b, &m)
						if m.Method != "" && m.ID != nil {
							liveReqIDs = append(liveReqIDs, m.ID)
						}
					case <-timeout:
						t.Fatalf("only %d of %d agent frames within 10 s", len(received), n)
					}
				}
			}
			var want []string
			agentSeen := 0
			for _, fr := range frames {
				if fr.Dir == "<" {
					want = append(want, kind(fr.Msg))
					var m msg
					json.Unmarshal(fr.Msg, &m)
					if m.Method != "" && m.ID != nil {
						recReqIndex[string(m.ID)] = len(recReqIndex)
					}
					agentSeen++
					continue
				}
				if fr.Dir != ">" {
					continue
				}
				waitFor(agentSeen)
				out := fr.Msg
				var m msg
				json.Unmarshal(fr.Msg, &m)
				if m.Method == "" { // an answer to the agent's request
					i, ok := recReqIndex[string(m.ID)]
					if !ok || i >= len(liveReqIDs) {
						t.Fatalf("recorded answer %s to no agent request", fr.Msg)
					}
					var v map[string]json.RawMessage
					json.Unmarshal(fr.Msg, &v)
					v["id"] = liveReqIDs[i]
					out, _ = json.Marshal(v)
				}
				if _, err := toAgent.Write(append(append([]byte(nil), out...), '\n')); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(agentSeen)
			var have []string
			for _, b := range received {
				have = append(have, kind(b))
			}
			slices.Sort(want)
			slices.Sort(have)
			if !slices.Equal(have, want) {
				t.Errorf("replayed frames differ from the recording's:\n got %v\nwant %v", have, want)
			}
		})
	}
}
