package acptest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

func TestFaultBytes(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Junk("npm WARN deprecated")
		t.Junk("")
		t.Raw([]byte(`{"jsonrpc":"2.0","method":"session/upd`))
		t.Raw([]byte("ate\",\"params\":{}}\n"))
		t.Raw(HugeFrame(t.SessionID(), 1000))
		t.Raw([]byte("\n"))
		t.Update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "never-seen", "status": "exploded"})
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	var got []string
	for {
		line, _ := c.rawLine()
		got = append(got, string(line))
		if strings.Contains(string(line), `"stopReason"`) {
			break
		}
	}
	huge := string(HugeFrame(sid, 1000)) + "\n"
	want := []string{
		"npm WARN deprecated\n",
		"\n",
		`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n",
		huge,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"tool_call_update","status":"exploded","toolCallId":"never-seen"}}}` + "\n",
		`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"stopReason":"end_turn"}}` + "\n",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bytes (-want +got):\n%s", d)
	}
	if len(huge) != 1001 || !json.Valid([]byte(huge)) {
		t.Errorf("HugeFrame: %d bytes, valid %v", len(huge), json.Valid([]byte(huge)))
	}
}

func TestCRLF(t *testing.T) {
	c := dial(t, New(&Options{CRLF: true}))
	c.request("initialize", map[string]any{"protocolVersion": 1})
	line, _ := c.rawLine()
	if !bytes.HasSuffix(line, []byte("}\r\n")) {
		t.Errorf("line ends %q", line[len(line)-5:])
	}
}

func TestExitMidTurnWithUnterminatedFrame(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("partial")
		t.Raw([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}`))
		t.Exit(0)
		panic("unreachable")
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	c.request("session/prompt", prompt(sid, "x"))
	if m := c.next(); m.Method != "session/update" {
		t.Fatalf("got %s", m.raw)
	}
	line, ok := c.rawLine()
	if !ok || string(line) != `{"jsonrpc":"2.0","method":"session/update","params":{}}` {
		t.Errorf("final frame %q (ok %v)", line, ok)
	}
	c.expectEOF()
	if _, err := c.w.Write([]byte("{}\n")); err == nil {
		t.Error("write to a crashed agent succeeded")
	}
	tr := a.Transcript()
	if last := tr[len(tr)-1]; last.Note != "exit 0" {
		t.Errorf("last frame %+v", last)
	}
}

func TestAfterTurn(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.AfterTurn(func() { t.Say("late") })
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "x"))
	if m := c.next(); m.Method != "session/update" {
		t.Errorf("after the response got %s", m.raw)
	}
}

func TestNeverAnswerAndClose(t *testing.T) {
	a := New(&Options{Methods: map[string]MethodFunc{"session/new": NeverAnswer}, OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Hang()
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	c.request("session/new", map[string]any{"cwd": "/w", "mcpServers": []any{}})
	c.request("session/prompt", prompt("sess-0", "x")) // unknown session: answered
	if m := c.next(); m.Error == nil || m.Error.Code != CodeResourceNotFound {
		t.Errorf("got %s", m.raw)
	}
	a.Close() // returns only once the hung handler is gone
	c.expectEOF()
}

func TestStdinEOFEndsConnection(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		<-t.Context().Done() // stdin EOF ends the connection context
		t.Say("bye")         // writing is still allowed while finishing
		return "", nil
	}})
	fromAgent, toAgent := a.Pipe()
	defer a.Close()
	c := newLineClient(t, fromAgent, toAgent)
	c.initialize(nil)
	sid := c.newSession()
	id := c.request("session/prompt", prompt(sid, "x"))
	toAgent.Close()
	resp, before := c.await(id)
	if len(before) != 1 || resp.Error != nil {
		t.Errorf("got %d updates and %s", len(before), resp.raw)
	}
	c.expectEOF()
}

func TestInvalidJSONFromClient(t *testing.T) {
	a := New(nil)
	c := dial(t, a)
	c.sendLine("this is not json")
	c.sendLine("")
	m := c.next()
	if m.Error == nil || m.Error.Code != CodeParseError || string(m.ID) != "null" {
		t.Errorf("got %s", m.raw)
	}
	c.initialize(nil) // the connection survives
}

func TestStderrFlood(t *testing.T) {
	var buf bytes.Buffer
	a := New(&Options{Stderr: &buf, StderrFlood: 5000})
	c := dial(t, a)
	c.initialize(nil)
	if buf.Len() != 5000 {
		t.Errorf("stderr got %d bytes", buf.Len())
	}
}

func TestTranscript(t *testing.T) {
	a := New(&Options{OnPrompt: func(t *Turn) (schema.StopReason, error) {
		t.Say("hi")
		t.Junk("junk")
		return "", nil
	}})
	c := dial(t, a)
	c.initialize(nil)
	sid := c.newSession()
	c.call("session/prompt", prompt(sid, "x"))
	c.notify("session/cancel", map[string]any{"sessionId": sid})
	c.callErr("_sync", nil)

	var buf bytes.Buffer
	if err := a.WriteTranscript(&buf); err != nil {
		t.Fatal(err)
	}
	frames, err := ReadTranscript(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range frames {
		s := f.Dir + " " + f.Method()
		if f.Note != "" {
			s = f.Dir + " " + f.Note
		}
		got = append(got, s)
		if f.T < 0 {
			t.Errorf("negative time %v", f.T)
		}
	}
	want := []string{
		"> initialize", "< ",
		"> session/new", "< ",
		"> session/prompt", "< session/update", `! junk "junk"`, "< ",
		"> session/cancel",
		"> _sync", "< ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}
	if n := len(a.Received("session/prompt")); n != 1 {
		t.Errorf("Received(session/prompt) = %d", n)
	}
	if n := len(a.Received("session/set_mode")); n != 0 {
		t.Errorf("Received(session/set_mode) = %d", n)
	}
}
