package acptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// TestReplayRealTranscripts drives a replaying agent with the client
// frames of each real-agent recording, under different request ids, and
// checks that it answers with the recorded agent frames.
func TestReplayRealTranscripts(t *testing.T) {
	// The recordings live once, in the module's testdata; the e2e-* ones
	// (made by the e2e package) are replayed by the root package's tests.
	all, err := filepath.Glob("../testdata/transcripts/*.jsonl")
	var files []string
	for _, f := range all {
		if !strings.HasPrefix(filepath.Base(f), "e2e-") {
			files = append(files, f)
		}
	}
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

func readTranscriptFile(t *testing.T, name string) []Frame {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frames, err := ReadTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// recordedResponse returns the recorded agent response with the given id
// as a decoded value whose id is replaced by live.
func recordedResponse(t *testing.T, frames []Frame, id string, live any) any {
	t.Helper()
	for _, f := range frames {
		var m map[string]any
		if f.Dir != "<" || json.Unmarshal(f.Msg, &m) != nil || m["method"] != nil {
			continue
		}
		if string(mustJSON(m["id"])) == id {
			m["id"] = live
			return m
		}
	}
	t.Fatalf("no recorded response %s", id)
	return nil
}

// TestReplayLateResponse replays a recording whose agent answered
// initialize only after the client had sent session/new (as cursor does:
// its reply came 21 s late). The reply plays when initialize arrives, so a
// client that waits for it before sending session/new is answered.
func TestReplayLateResponse(t *testing.T) {
	frames := readTranscriptFile(t, "testdata/late-initialize.jsonl")
	initParams := map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}
	newParams := map[string]any{"cwd": "/home/user/project", "mcpServers": []any{}}

	t.Run("recorded order", func(t *testing.T) {
		// The recorded client's order: session/new sent before the
		// initialize reply is read.
		c := dial(t, Replay(frames))
		c.send(map[string]any{"jsonrpc": "2.0", "id": 100, "method": "initialize", "params": initParams})
		c.send(map[string]any{"jsonrpc": "2.0", "id": 101, "method": "session/new", "params": newParams})
		if d := cmp.Diff(recordedResponse(t, frames, "0", 100.0), decode(t, c.next().raw)); d != "" {
			t.Errorf("initialize reply (-want +got):\n%s", d)
		}
		if d := cmp.Diff(recordedResponse(t, frames, "1", 101.0), decode(t, c.next().raw)); d != "" {
			t.Errorf("session/new reply (-want +got):\n%s", d)
		}
	})

	t.Run("waiting client", func(t *testing.T) {
		// A client that sends session/new only once initialize is
		// answered. The probe has no recorded reply, so its -32603 comes
		// after everything its arrival did not unlock: the initialize reply
		// must come first.
		c := dial(t, Replay(frames))
		c.send(map[string]any{"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": initParams})
		c.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "_probe"})
		if d := cmp.Diff(recordedResponse(t, frames, "0", "i"), decode(t, c.next().raw)); d != "" {
			t.Fatalf("first frame after initialize (-want +got):\n%s", d)
		}
		if m := c.next(); string(m.ID) != `"probe"` || m.Error == nil || m.Error.Code != CodeInternalError {
			t.Fatalf("got %s, want the probe's -32603", m.raw)
		}
		c.send(map[string]any{"jsonrpc": "2.0", "id": "n", "method": "session/new", "params": newParams})
		if d := cmp.Diff(recordedResponse(t, frames, "1", "n"), decode(t, c.next().raw)); d != "" {
			t.Errorf("session/new reply (-want +got):\n%s", d)
		}
	})
}

// TestReplayLateResponseSDKClient drives the same recording with our
// client, which never sends session/new before initialize is answered.
func TestReplayLateResponseSDKClient(t *testing.T) {
	a := Replay(readTranscriptFile(t, "testdata/late-initialize.jsonl"))
	defer a.Close()
	fromAgent, toAgent := a.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), timeout) // bounds a hang; not synchronisation
	defer cancel()
	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: toAgent}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: "/home/user/project"})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if s.ID() != "c3f1a2b4-5d6e-4f70-8a9b-0c1d2e3f4a5b" {
		t.Errorf("session id %q", s.ID())
	}
	turn, err := s.Prompt(ctx, schema.Text("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := turn.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait: %v %v", stop, err)
	}
	if st := turn.State(); len(st.Messages) != 1 || st.Messages[0].Text != "Hello!" {
		t.Errorf("messages %+v", st.Messages)
	}
}

func updateFrame(text string) json.RawMessage {
	return json.RawMessage(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`)
}

func updateText(m wireMsg) string {
	var p struct {
		Update struct {
			Content struct{ Text string }
		}
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Update.Content.Text
}

// expectProbe sends a request the recording has no reply for and checks
// that its -32603 is the next frame: nothing else was playable.
func expectProbe(t *testing.T, c *lineClient, why string) {
	t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "_probe"})
	if m := c.next(); string(m.ID) != `"probe"` {
		t.Fatalf("got %s %s, want the probe's -32603", m.raw, why)
	}
}

// TestReplayResponseWaitsForCancel: a prompt result recorded after a
// session/cancel follows from the cancel, so it waits for it (the shape
// of gemini-cancel).
func TestReplayResponseWaitsForCancel(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)},
		{Dir: "<", Msg: updateFrame("a")},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}`)},
	}
	c := dial(t, Replay(frames))
	c.send(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": map[string]any{"sessionId": "s", "prompt": []any{}}})
	if m := c.next(); updateText(m) != "a" {
		t.Fatalf("got %s, want update a", m.raw)
	}
	expectProbe(t, c, "before the cancel")
	c.notify("session/cancel", map[string]any{"sessionId": "s"})
	if m := c.next(); string(m.raw) != `{"jsonrpc":"2.0","id":9,"result":{"stopReason":"cancelled"}}` {
		t.Fatalf("got %s, want the prompt result", m.raw)
	}
}

// TestReplayResponseWaitsForAnswer: a prompt result recorded after the
// client answered the agent's permission request waits for that answer.
func TestReplayResponseWaitsForAnswer(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s"}}`)},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`)},
	}
	c := dial(t, Replay(frames))
	c.send(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": map[string]any{"sessionId": "s", "prompt": []any{}}})
	req := c.next()
	if req.Method != "session/request_permission" {
		t.Fatalf("got %s, want the permission request", req.raw)
	}
	expectProbe(t, c, "before the permission answer")
	c.reply(req.ID, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
	if m := c.next(); string(m.raw) != `{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}` {
		t.Fatalf("got %s, want the prompt result", m.raw)
	}
}

// TestReplayLateResponseKeepsUpdatesBefore checks that a late response does
// not overtake the agent frames recorded before it after the same client
// frame: the prompt result recorded after an extension request and an
// update waits for that request, because the update does.
func TestReplayLateResponseKeepsUpdatesBefore(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)},
		{Dir: "<", Msg: updateFrame("a")},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":4,"method":"_x/status","params":{}}`)},
		{Dir: "<", Msg: updateFrame("b")},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":4,"result":{}}`)},
	}
	c := dial(t, Replay(frames))
	c.send(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": map[string]any{"sessionId": "s", "prompt": []any{}}})
	if m := c.next(); updateText(m) != "a" {
		t.Fatalf("got %s, want update a", m.raw)
	}
	expectProbe(t, c, "before _x/status")
	c.send(map[string]any{"jsonrpc": "2.0", "id": 10, "method": "_x/status", "params": map[string]any{}})
	var got []string
	for range 3 {
		got = append(got, string(c.next().raw))
	}
	want := []string{
		string(updateFrame("b")),
		`{"jsonrpc":"2.0","id":9,"result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","id":10,"result":{}}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestReplayNotificationBeforeLateResponse pins the rule for an agent
// notification recorded between a later request and a late response: it
// keeps its place before the response, so both wait for the later request.
func TestReplayNotificationBeforeLateResponse(t *testing.T) {
	frames := []Frame{
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)},
		{Dir: ">", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","method":"_note","params":{}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`)},
		{Dir: "<", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`)},
	}
	c := dial(t, Replay(frames))
	c.send(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	expectProbe(t, c, "before session/new")
	c.send(map[string]any{"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": map[string]any{"cwd": "/", "mcpServers": []any{}}})
	var got []string
	for range 3 {
		got = append(got, string(c.next().raw))
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"_note","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"sessionId":"s"}}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
