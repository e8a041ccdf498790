package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/acpclient/acp/internal/jsonscan"
	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// diagRecorder collects diagnostics.
type diagRecorder struct {
	mu sync.Mutex
	ds []Diagnostic
	ch chan Diagnostic
}

func newDiagRecorder() *diagRecorder { return &diagRecorder{ch: make(chan Diagnostic, 100)} }

func (r *diagRecorder) record(d Diagnostic) {
	r.mu.Lock()
	r.ds = append(r.ds, d)
	r.mu.Unlock()
	select {
	case r.ch <- d:
	default:
	}
}

func (r *diagRecorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.ds {
		out = append(out, string(d.Kind))
	}
	return out
}

// A prompt turn whose frames are separated by junk, blank lines and CRLF
// endings, and whose last frame has no newline, folds as if the wire were
// clean, and each skipped line is reported.
func TestJunkBlankCRLFAndFinalLineWithoutNewline(t *testing.T) {
	rec := newDiagRecorder()
	c, a := connectRaw(t, &ClientOptions{OnDiagnostic: rec.record}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.write("npm WARN deprecated something\n")
	a.write("\n")
	a.write("   \r\n")
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1", "update": chunk("one ")}})
	a.write(string(b) + "\r\n")
	a.write("{not json at all\n")
	a.write("[1,2\n")
	a.update("s1", chunk("two"))
	b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.ID, "result": map[string]any{"stopReason": "end_turn"}})
	a.write(string(b)) // no newline: the agent then closes its output
	a.out.Close()
	stop, err := turn.Wait()
	if err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("Wait = %q, %v; want end_turn", stop, err)
	}
	if got := turn.State().Messages; len(got) != 1 || got[0].Text != "one two" {
		t.Errorf("messages = %+v", got)
	}
	want := []string{"junk_line", "blank_line", "blank_line", "junk_line", "junk_line"}
	// Diagnostics arrive on the callback goroutine; Close does not wait for
	// one that is being delivered at that moment, so wait for them here.
	for range want {
		waitFor(t, rec.ch, "a diagnostic")
	}
	if diff := cmp.Diff(want, rec.kinds()); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// A line over the cap is skipped to its newline, a pending call whose
// response it was fails with ErrLineTooLong, and the connection lives on.
func TestOversizedResponseFailsOnlyItsCall(t *testing.T) {
	rec := newDiagRecorder()
	c, a := connectRaw(t, &ClientOptions{OnDiagnostic: rec.record, Limits: Limits{MaxLineBytes: 1 << 10}}, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.NewSession(context.Background(), &schema.NewSessionRequest{Cwd: "/tmp"})
		errc <- err
	}()
	m := a.expect("session/new")
	big := strings.Repeat("x", 4<<10)
	a.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"sessionId": "s1", "pad": big}})
	err := <-errc
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("NewSession error = %v, want ErrLineTooLong", err)
	}
	// The connection still works.
	s := newSessionRaw(t, c, a)
	if s.ID() != "s1" {
		t.Fatal("second session/new failed")
	}
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
}

// The id of an oversized line is recovered even when it comes after the
// huge field, and an oversized prompt response fails the turn.
func TestOversizedPromptResponseIDAfterPayload(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxLineBytes: 1 << 10}}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("hi"))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.write(`{"jsonrpc":"2.0","result":{"stopReason":"end_turn","_meta":{"pad":"` + strings.Repeat(`\"y`, 2<<10) + `"}},"id":` + string(p.ID) + "}\n")
	if _, err := turn.Wait(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Wait error = %v, want ErrLineTooLong", err)
	}
	// The next turn works.
	turn2, err := s.Prompt(context.Background(), schema.Text("again"))
	if err != nil {
		t.Fatal(err)
	}
	a.reply(a.expect("session/prompt"), map[string]any{"stopReason": "end_turn"})
	if stop, err := turn2.Wait(); err != nil || stop != schema.StopReasonEndTurn {
		t.Fatalf("second turn: %q, %v", stop, err)
	}
}

// An oversized request from the agent is answered with an error so the
// agent does not wait forever.
func TestOversizedAgentRequestAnswered(t *testing.T) {
	c, a := connectRaw(t, &ClientOptions{Limits: Limits{MaxLineBytes: 1 << 10}}, nil)
	_ = c
	a.write(`{"jsonrpc":"2.0","id":"big-1","method":"fs/read_text_file","params":{"pad":"` + strings.Repeat("z", 4<<10) + `"}}` + "\n")
	m := a.next()
	if string(m.ID) != `"big-1"` || m.Error == nil || m.Error.Code != schema.CodeInvalidRequest {
		t.Fatalf("reply = %s", m.line)
	}
}

func TestIDScanner(t *testing.T) {
	for _, tc := range []struct {
		in, id, method string
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, `7`, ""},
		{`{"result":{"id":99,"x":"}"},"id":"abc"}`, `"abc"`, ""},
		{`{"method":"session/update","params":{"id":1}}`, ``, "session/update"},
		{`{"id" : -12 , "method":"x\"y"}`, `-12`, `x\"y`},
		{`{"id":null,"error":{}}`, ``, ""},
		{`[{"id":1}]`, ``, ""},
		{`{"params":["id",{"id":2}],"id":3}`, `3`, ""},
	} {
		var s jsonscan.IDScanner
		for i := range len(tc.in) { // byte by byte: chunk boundaries anywhere
			s.Feed([]byte{tc.in[i]})
		}
		if string(s.ID) != tc.id || s.Method != tc.method {
			t.Errorf("%s: id %q method %q, want %q %q", tc.in, s.ID, s.Method, tc.id, tc.method)
		}
	}
}

// Extension notification params reach the handler intact even after the
// reader has reused its buffer for later lines: the wire hands over a copy.
func TestExtNotificationParamsDoNotAliasReadBuffer(t *testing.T) {
	got := make(chan json.RawMessage, 1)
	release := make(chan struct{})
	_, a := connectRaw(t, &ClientOptions{ExtNotification: func(method string, params json.RawMessage) {
		if method == "_note" {
			<-release // hold the params while the reader reads on
			got <- params
		}
	}}, nil)
	a.send(map[string]any{"jsonrpc": "2.0", "method": "_note", "params": map[string]any{"text": "original"}})
	for range 50 {
		a.send(map[string]any{"jsonrpc": "2.0", "method": "_other", "params": map[string]any{"text": "XXXXXXXXXXXXXXXXXXXXXXX"}})
	}
	// A request round trip proves the reader has consumed every line above.
	a.send(map[string]any{"jsonrpc": "2.0", "id": "probe", "method": "no/such", "params": map[string]any{}})
	a.next()
	close(release)
	if p := <-got; string(p) != `{"text":"original"}` {
		t.Fatalf("params %s", p)
	}
}
