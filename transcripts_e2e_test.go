package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// TestE2ETranscripts replays the wire traces the end-to-end suite (e2e/,
// run with -record) took of codex-acp and claude-agent-acp against a
// scripted model, so what those agents send stays pinned without Node. Our
// client performs the recorded client's steps — the requests it sent, the
// answers it gave to permission requests, the cancels — and must send the
// same requests and fold what it receives into <name>.state.json
// (rewritten with -update).
func TestE2ETranscripts(t *testing.T) {
	paths, _ := filepath.Glob("testdata/transcripts/e2e-*.jsonl")
	if len(paths) == 0 {
		t.Fatal("no e2e transcripts")
	}
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
			agent := acptest.Replay(frames)
			defer agent.Close()
			rec := parseRecording(t, frames)
			got := driveE2E(t, agent, rec)

			for method, recorded := range rec.sent {
				if method == "initialize" || method == "session/cancel" {
					continue // our clientInfo and capabilities are our own
				}
				sent := agent.Received(method)
				if len(sent) != len(recorded) {
					t.Errorf("%s: sent %d times, recorded %d", method, len(sent), len(recorded))
					continue
				}
				for i := range sent {
					if diff := cmp.Diff(decode(t, recorded[i]), decode(t, sent[i])); diff != "" {
						t.Errorf("%s #%d params (-recorded +sent):\n%s", method, i, diff)
					}
				}
			}
			if n, want := len(agent.Received("session/cancel")), len(rec.sent["session/cancel"]); n != want {
				t.Errorf("session/cancel sent %d times, recorded %d", n, want)
			}

			checkStateGolden(t, path, got)
		})
	}
}

// recStep is one request or notification the recorded client sent, with
// the number of session/update notifications it had received before.
type recStep struct {
	method  string
	params  json.RawMessage
	updates int
}

// recording is what the recorded client did.
type recording struct {
	steps []recStep
	sent  map[string][]json.RawMessage
	// answers holds, per agent request method, the recorded results in order.
	answers map[string][]json.RawMessage
	// updates counts the session/update notifications recorded.
	updates int
}

func parseRecording(t *testing.T, frames []acptest.Frame) *recording {
	rec := &recording{sent: map[string][]json.RawMessage{}, answers: map[string][]json.RawMessage{}}
	agentReqs := map[string]string{} // recorded id -> method
	updates := 0
	for _, f := range frames {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if f.Msg == nil || json.Unmarshal(f.Msg, &m) != nil {
			continue
		}
		switch {
		case f.Dir == "<" && m.Method == "session/update":
			updates++
		case f.Dir == "<" && m.Method != "" && m.ID != nil:
			agentReqs[string(m.ID)] = m.Method
		case f.Dir == ">" && m.Method != "":
			rec.steps = append(rec.steps, recStep{m.Method, m.Params, updates})
			rec.sent[m.Method] = append(rec.sent[m.Method], m.Params)
		case f.Dir == ">" && m.ID != nil:
			if method, ok := agentReqs[string(m.ID)]; ok {
				rec.answers[method] = append(rec.answers[method], m.Result)
			}
		}
	}
	rec.updates = updates
	if len(rec.steps) == 0 || rec.steps[0].method != "initialize" {
		t.Fatal("the transcript does not start with initialize")
	}
	return rec
}

// driveE2E performs the recorded client's steps with our client.
func driveE2E(t *testing.T, agent *acptest.Agent, rec *recording) replayResult {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	answers := rec.answers["session/request_permission"]
	permission := func(pctx context.Context, req *acp.PermissionRequest) (schema.PermissionOutcome, error) {
		mu.Lock()
		var res json.RawMessage
		if len(answers) > 0 {
			res, answers = answers[0], answers[1:]
		}
		mu.Unlock()
		var r struct {
			Outcome schema.PermissionOutcome `json:"outcome"`
		}
		if res == nil || json.Unmarshal(res, &r) != nil {
			t.Errorf("a permission request the recording did not answer: %+v", req.ToolCall)
			return acp.CancelledOutcome(), nil
		}
		if r.Outcome.Kind == schema.OutcomeCancelled {
			// The recorded client cancelled the turn while this was open.
			<-pctx.Done()
		}
		return r.Outcome, nil
	}

	// The recorded client offered a version: offer the same (a v2
	// recording's initialize answer is v2-shaped).
	var offer struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	json.Unmarshal(rec.steps[0].params, &offer)

	r, w := agent.Pipe()
	// Every turn keeps its update log: the driver counts the updates it saw.
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{
		Permission:      permission,
		Limits:          acp.Limits{TurnLogs: 1 << 20},
		ProtocolVersion: offer.ProtocolVersion,
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	res := replayResult{Agent: c.InitializeResponse()}
	record := func(method string, err error) *step {
		st := step{Method: method}
		if err != nil {
			st.Error = err.Error()
			var e *schema.Error
			if errors.As(err, &e) {
				st.Code = e.Code
			}
		}
		res.Steps = append(res.Steps, st)
		return &res.Steps[len(res.Steps)-1]
	}
	var s *acp.Session
	steps := rec.steps[1:]
	for i, m := range steps {
		var p struct {
			SessionID  string          `json:"sessionId"`
			Cwd        string          `json:"cwd"`
			ReplayFrom json.RawMessage `json:"replayFrom"`
			Prompt     []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		json.Unmarshal(m.params, &p)
		switch m.method {
		case "session/new":
			var err error
			s, err = c.NewSession(ctx, &schema.NewSessionRequest{Cwd: p.Cwd})
			record(m.method, err)
		case "session/resume":
			var err error
			if len(p.ReplayFrom) > 0 {
				// v2 has no session/load: LoadSession resumes from the start.
				s, err = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: p.SessionID, Cwd: p.Cwd})
			} else {
				s, err = c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: p.SessionID, Cwd: p.Cwd})
			}
			record(m.method, err)
		case "session/load":
			var err error
			s, err = c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: p.SessionID, Cwd: p.Cwd})
			record(m.method, err)
		case "session/list":
			for page, err := range c.ListSessions(ctx, nil) {
				st := record(m.method, err)
				if page != nil {
					st.Result, _ = json.Marshal(page)
				}
				break
			}
		case "session/prompt":
			if s == nil {
				t.Fatal("a prompt before any session")
			}
			turn, err := s.Prompt(ctx, schema.Text(p.Prompt[0].Text))
			if err != nil {
				record(m.method, err)
				break
			}
			// Cancel when the recorded client did: after as many updates.
			if i+1 < len(steps) && steps[i+1].method == "session/cancel" {
				want := steps[i+1].updates - m.updates
				n := 0
				for range turn.Updates() {
					if n++; n >= want {
						break
					}
				}
				if n < want {
					t.Errorf("the turn saw %d updates, the recorded client cancelled after %d", n, want)
				}
				turn.Cancel()
			}
			finishTurn(turn, record(m.method, nil))
		case "session/set_config_option":
			var o struct {
				ConfigID string `json:"configId"`
				Value    string `json:"value"`
			}
			json.Unmarshal(m.params, &o)
			_, err := s.SetConfigOption(ctx, o.ConfigID, o.Value)
			record(m.method, err)
		case "session/close":
			record(m.method, s.Close(ctx))
		case "session/cancel":
			// Done with its prompt.
		default:
			t.Errorf("the recorded client sent %s, which this driver does not perform", m.method)
		}
	}
	if s != nil {
		// Agents keep talking after their answer (codex sends its
		// commands late): take the snapshot once every recorded update is in.
		seen := func() int {
			st := s.State()
			n := len(st.Outside)
			for _, turn := range s.Turns() {
				for range turn.Updates() {
					n++
				}
			}
			return n
		}
		for range s.Changes(ctx) {
			if seen() >= rec.updates {
				break
			}
		}
		if n := seen(); n != rec.updates {
			t.Errorf("the session saw %d updates, %d were recorded", n, rec.updates)
		}
		st := s.State()
		res.Session = &st
	}
	return res
}
