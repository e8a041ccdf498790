package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
	"github.com/google/go-cmp/cmp"
)

// TestRealAgentTranscripts replays the recordings of real agents
// (testdata/transcripts, copied from the team's shared recordings) through
// acptest and drives our client through the same steps the recording's
// client took. It asserts that our client sends the same requests (same
// methods and parameters) and folds what it receives into the state kept in
// <name>.state.json (rewritten with -update).
func TestRealAgentTranscripts(t *testing.T) {
	all, _ := filepath.Glob("testdata/transcripts/*.jsonl")
	var paths []string
	for _, p := range all {
		// The e2e suite's recordings have a test of their own.
		if !strings.HasPrefix(filepath.Base(p), "e2e-") {
			paths = append(paths, p)
		}
	}
	if len(paths) != 6 {
		t.Fatalf("found %d transcripts, want 6", len(paths))
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
			got, driven := driveLikeRecording(t, agent, frames)

			// The requests we sent match the recorded ones.
			for method, recorded := range driven {
				sent := agent.Received(method)
				if len(sent) != len(recorded) {
					t.Errorf("%s: sent %d times, recorded %d", method, len(sent), len(recorded))
					continue
				}
				for i := range sent {
					if method == "initialize" {
						// Our clientInfo and capabilities are our own.
						continue
					}
					if diff := cmp.Diff(decode(t, recorded[i]), decode(t, sent[i])); diff != "" {
						t.Errorf("%s #%d params (-recorded +sent):\n%s", method, i, diff)
					}
				}
			}

			checkStateGolden(t, path, got)
		})
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// step records what one driven request produced.
type step struct {
	Method string          `json:"method"`
	Error  string          `json:"error,omitempty"`
	Code   int64           `json:"code,omitempty"`
	Turn   *acp.TurnState  `json:"turn,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
}

type replayResult struct {
	Agent   *schema.InitializeResponse `json:"initialize"`
	Steps   []step                     `json:"steps"`
	Session *acp.SessionState          `json:"session,omitempty"`
}

// driveLikeRecording performs, with our client, each request the recorded
// client sent (those our API can express). It returns what happened and,
// per method, the recorded params of the requests it drove.
func driveLikeRecording(t *testing.T, agent *acptest.Agent, frames []acptest.Frame) (replayResult, map[string][]json.RawMessage) {
	ctx := context.Background()
	var client []struct {
		method string
		params json.RawMessage
	}
	for _, f := range frames {
		if f.Dir != ">" {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.Unmarshal(f.Msg, &m)
		client = append(client, struct {
			method string
			params json.RawMessage
		}{m.Method, m.Params})
	}

	r, w := agent.Pipe()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: r, Writer: w}, &acp.ClientOptions{
		FS:       (&workspace.FS{}).Handlers(),
		Terminal: (&workspace.Terminals{}).Handlers(),
	})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	res := replayResult{Agent: c.InitializeResponse()}
	driven := map[string][]json.RawMessage{"initialize": {client[0].params}}
	var s *acp.Session
	var turn *acp.Turn
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
	var p struct {
		SessionID string `json:"sessionId"`
		MethodID  string `json:"methodId"`
		Cwd       string `json:"cwd"`
		ModeID    string `json:"modeId"`
		ConfigID  string `json:"configId"`
		Value     string `json:"value"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	for i, m := range client[1:] {
		p = struct {
			SessionID string `json:"sessionId"`
			MethodID  string `json:"methodId"`
			Cwd       string `json:"cwd"`
			ModeID    string `json:"modeId"`
			ConfigID  string `json:"configId"`
			Value     string `json:"value"`
			Prompt    []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}{}
		json.Unmarshal(m.params, &p)
		drove := true
		switch m.method {
		case "authenticate":
			_, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: p.MethodID})
			record(m.method, err)
		case "session/new":
			var err error
			s, err = c.NewSession(ctx, &schema.NewSessionRequest{Cwd: p.Cwd})
			record(m.method, err)
		case "session/load":
			ls, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: p.SessionID, Cwd: p.Cwd})
			if err == nil {
				s = ls
			}
			record(m.method, err)
		case "session/set_mode":
			record(m.method, s.SetMode(ctx, p.ModeID))
		case "session/set_config_option":
			_, err := s.SetConfigOption(ctx, p.ConfigID, p.Value)
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
			if s == nil || s.ID() != p.SessionID {
				drove = false // a prompt to a session our client does not have
				break
			}
			var err error
			turn, err = s.Prompt(ctx, schema.Text(p.Prompt[0].Text))
			if err != nil {
				record(m.method, err)
				turn = nil
				break
			}
			if i+2 < len(client) && client[i+2].method == "session/cancel" {
				break // the recording cancels next
			}
			finishTurn(turn, record(m.method, nil))
			turn = nil
		case "session/cancel":
			if turn == nil {
				drove = false
				break
			}
			turn.Cancel()
			finishTurn(turn, record("session/prompt", nil))
			turn = nil
		case "session/close":
			record(m.method, s.Close(ctx))
		default:
			drove = false // a method our API does not send (no/such_method)
		}
		if drove {
			driven[m.method] = append(driven[m.method], m.params)
		}
	}
	if s != nil {
		st := s.State()
		res.Session = &st
	}
	return res, driven
}

func finishTurn(turn *acp.Turn, st *step) {
	_, err := turn.Wait()
	if err != nil {
		st.Error = err.Error()
	}
	ts := turn.State()
	st.Turn = &ts
}

// checkStateGolden compares the folded state got of the recording at path
// with its .state.json golden file (rewritten with -update).
func checkStateGolden(t *testing.T, path string, got any) {
	t.Helper()
	golden := strings.TrimSuffix(path, ".jsonl") + ".state.json"
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(golden, append(gotJSON, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(decode(t, want), decode(t, gotJSON)); diff != "" {
		t.Errorf("folded state (-want +got):\n%s", diff)
	}
}
