package acptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// hostileConn connects a line client and returns the agent's side of the
// connection (through the session a session/new opened).
func hostileConn(t *testing.T) (*lineClient, *Session) {
	t.Helper()
	ss := make(chan *Session, 1)
	a := New(&Options{OnNewSession: func(s *Session) { ss <- s }})
	c := dial(t, a)
	c.initialize(nil)
	c.newSession()
	return c, <-ss
}

func waitDone(t *testing.T, r *Request) (json.RawMessage, error) {
	t.Helper()
	select {
	case <-r.Done():
		return r.Result()
	case <-time.After(timeout):
		t.Fatalf("request %s not resolved", r.ID())
	}
	return nil, nil
}

func TestStartWithIDWritesTheIDAsGiven(t *testing.T) {
	c, s := hostileConn(t)
	for _, id := range []string{`01`, `1.2.3`, `-`, `"` + strings.Repeat("i", 300) + `"`, `true`} {
		if _, err := s.StartWithID(json.RawMessage(id), "fs/read_text_file", map[string]any{"path": "/f"}); err != nil {
			t.Fatal(err)
		}
		line, _ := c.rawLine()
		want := `{"jsonrpc":"2.0","id":` + id + `,"method":"fs/read_text_file","params":{"path":"/f"}}` + "\n"
		if string(line) != want {
			t.Errorf("got  %s\nwant %s", line, want)
		}
	}
	// Frames that are not JSON are notes: the transcript stays writable.
	if err := s.a.WriteTranscript(io.Discard); err != nil {
		t.Errorf("WriteTranscript: %v", err)
	}
}

// Requests sharing an id are resolved in the order sent, by the answers in
// the order they arrive; none is lost.
func TestStartWithIDSharedID(t *testing.T) {
	c, s := hostileConn(t)
	first, err := s.Start("m", nil) // id 0, picked by Start
	if err != nil {
		t.Fatal(err)
	}
	var rs []*Request
	for range 2 {
		r, err := s.StartWithID(first.ID(), "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rs = append([]*Request{first}, rs...)
	for range 3 {
		if m := c.next(); string(m.ID) != string(first.ID()) {
			t.Fatalf("got %s", m.raw)
		}
	}
	for i, r := range rs {
		c.reply(first.ID(), map[string]any{"n": i})
		res, err := waitDone(t, r)
		if err != nil || string(res) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Errorf("request %d: %s, %v", i, res, err)
		}
	}
	for _, f := range s.a.Transcript() {
		if strings.Contains(f.Note, "unknown id") {
			t.Errorf("an answer was lost: %s", f.Note)
		}
	}
}

func TestRequestWithID(t *testing.T) {
	c, s := hostileConn(t)
	go func() {
		m := c.next()
		c.replyError(m.ID, &Error{Code: -32000, Message: "no"})
	}()
	_, err := s.RequestWithID(context.Background(), json.RawMessage(`"x"`), "m", nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != -32000 {
		t.Errorf("got %v", err)
	}
}

// Requests waiting in line for a shared id fail with ErrClosed when the
// connection ends.
func TestStartWithIDSharedIDConnectionEnds(t *testing.T) {
	ss := make(chan *Session, 1)
	a := New(&Options{OnNewSession: func(s *Session) { ss <- s }})
	c := dial(t, a)
	c.initialize(nil)
	c.newSession()
	s := <-ss
	r1, _ := s.StartWithID(json.RawMessage(`7`), "m", nil)
	r2, _ := s.StartWithID(json.RawMessage(`7`), "m", nil)
	a.Close()
	for _, r := range []*Request{r1, r2} {
		if _, err := waitDone(t, r); !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	}
}

func TestBatch(t *testing.T) {
	c, s := hostileConn(t)
	if err := s.Batch(BatchItem(json.RawMessage(`1`), "m", nil), BatchItem(nil, "n", map[string]any{"a": 1}), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	line, _ := c.rawLine()
	want := `[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n","params":{"a":1}},{}]` + "\n"
	if string(line) != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
}

func TestOversizedLine(t *testing.T) {
	c, s := hostileConn(t)
	for _, tc := range []struct{ id, method string }{{`01`, "fs/read_text_file"}, {`"r"`, ""}} {
		if err := s.OversizedLine(json.RawMessage(tc.id), tc.method, 5000); err != nil {
			t.Fatal(err)
		}
		line, _ := c.rawLine()
		if len(line) != 5001 || !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`+tc.id+`,`)) {
			t.Errorf("%d bytes: %.60s", len(line), line)
		}
		if tc.id == `"r"` && !json.Valid(line) {
			t.Errorf("invalid JSON: %.60s", line)
		}
	}
}

func TestFloodUpdates(t *testing.T) {
	c, s := hostileConn(t)
	for _, distinct := range []bool{true, false} {
		if err := s.FloodUpdates("s-x", 3, distinct); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			m := c.next()
			var p struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Kind      string `json:"sessionUpdate"`
					MessageID string `json:"messageId"`
				} `json:"update"`
			}
			json.Unmarshal(m.Params, &p)
			want := ""
			if distinct {
				want = fmt.Sprint("flood-", i)
			}
			if m.Method != "session/update" || p.SessionID != "s-x" || p.Update.Kind != "agent_message_chunk" || p.Update.MessageID != want {
				t.Errorf("got %s", m.raw)
			}
		}
	}
}

func TestOrphanUpdates(t *testing.T) {
	c, s := hostileConn(t)
	if err := s.OrphanUpdates(3, 10); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m := c.next()
		if !strings.Contains(string(m.Params), fmt.Sprintf(`"sessionId":"orphan-%d"`, i)) || !strings.Contains(string(m.raw), `"oooooooooo"`) {
			t.Errorf("got %s", m.raw)
		}
	}
}

func TestFloodRequests(t *testing.T) {
	c, s := hostileConn(t)
	rs, err := s.FloodRequests("m", map[string]any{"k": 1}, 5)
	if err != nil || len(rs) != 5 {
		t.Fatalf("%d requests, %v", len(rs), err)
	}
	for range 5 {
		m := c.next()
		c.reply(m.ID, "ok")
	}
	for _, r := range rs {
		if res, err := waitDone(t, r); err != nil || string(res) != `"ok"` {
			t.Errorf("%s: %s, %v", r.ID(), res, err)
		}
	}
}

func TestStall(t *testing.T) {
	pr, pw := io.Pipe()
	st := NewStall(pw)
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(pr); got <- b }()
	st.Write([]byte("a"))
	waiting := st.Waiting()
	st.Stop()
	done := make(chan error, 1)
	go func() { _, err := st.Write([]byte("bcd")); done <- err }()
	<-waiting
	if n, b := st.Blocked(); n != 1 || b != 3 {
		t.Errorf("Blocked() = %d, %d", n, b)
	}
	select {
	case <-done:
		t.Fatal("a write went through a stopped stall")
	default:
	}
	st.Resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st.Stop()
	go func() { _, err := st.Write([]byte("e")); done <- err }()
	st.Close()
	if err := <-done; !errors.Is(err, ErrStallClosed) {
		t.Errorf("write after Close: %v", err)
	}
	if b := <-got; string(b) != "abcd" {
		t.Errorf("agent read %q", b)
	}
}
