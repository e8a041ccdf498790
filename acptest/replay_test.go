package acptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReplayRealTranscripts drives a replaying agent with the client
// frames of each real-agent recording, under different request ids, and
// checks that it answers with the recorded agent frames.
func TestReplayRealTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.jsonl")
	if err != nil || len(files) != 6 {
		t.Fatalf("transcripts: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			frames, err := ReadTranscript(f)
			if err != nil {
				t.Fatal(err)
			}
			a := Replay(frames)
			c := dial(t, a)
			liveID := func(rec json.RawMessage) json.RawMessage {
				n, _ := strconv.Atoi(string(rec))
				return json.RawMessage(strconv.Itoa(n + 100))
			}
			var sentAgentFrames int
			for i, fr := range frames {
				switch fr.Dir {
				case ">":
					var m map[string]json.RawMessage
					mustUnmarshal(t, fr.Msg, &m)
					if id, ok := m["id"]; ok {
						m["id"] = liveID(id)
					}
					c.send(m)
				case "<":
					sentAgentFrames++
					var want map[string]any
					mustUnmarshal(t, fr.Msg, &want)
					got := c.next()
					if _, hasMethod := want["method"]; !hasMethod { // a response: the live id
						want["id"] = decode(t, liveID(mustJSON(want["id"])))
					}
					if d := cmp.Diff(want, decode(t, got.raw)); d != "" {
						t.Errorf("frame %d (-want +got):\n%s", i, d)
					}
				}
			}
			if sentAgentFrames == 0 {
				t.Fatal("no agent frames in the transcript")
			}
		})
	}
}

func TestReplayKeepsBytes(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"authenticate","params":{"methodId":"x"}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":"KEY is not set"},"id":7}`)},
		{Dir: "!", Note: "a note"},
	}
	c := dial(t, Replay(frames))
	c.sendLine(`{"jsonrpc":"2.0","id":"abc","method":"authenticate","params":{"methodId":"x"}}`)
	if got := c.next(); string(got.raw) != `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":"KEY is not set"},"id":"abc"}` {
		t.Errorf("got %s", got.raw)
	}
	// Nothing left for a second authenticate.
	if e := c.callErr("authenticate", map[string]any{"methodId": "x"}); e.Code != CodeInternalError || !strings.Contains(e.Message, "no recorded reply") {
		t.Errorf("got %v", e)
	}
}

// TestReplayAgentRequests checks that the agent's own recorded requests get
// fresh ids and that the client's answer triggers what followed it.
func TestReplayAgentRequests(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":"perm-9","method":"session/request_permission","params":{"sessionId":"s"}}`)},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":"perm-9","result":{"outcome":{"outcome":"cancelled"}}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}`)},
	}
	a := Replay(frames)
	a.opts.StringIDs = true
	c := dial(t, a)
	c.onRequest = func(m wireMsg) (any, *Error) {
		if string(m.ID) != `"req-0"` {
			t.Errorf("agent request id %s", m.ID)
		}
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	res, _ := c.call("session/prompt", map[string]any{"sessionId": "s", "prompt": []any{}})
	if string(res) != `{"stopReason":"cancelled"}` {
		t.Errorf("got %s", res)
	}
}
