package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the trace's writer goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The trace has every frame both ways and junk as notes, one JSON object a
// line; the redaction hook removes a secret from frames in both directions.
func TestTraceAndRedaction(t *testing.T) {
	const secret = "sk-live-123456"
	var buf syncBuffer
	tw := NewTraceWriter(&buf)
	tw.Redact = func(dir string, data []byte) []byte {
		return bytes.ReplaceAll(data, []byte(secret), []byte("[redacted]"))
	}
	c, a := connectRaw(t, &ClientOptions{Trace: tw}, nil)
	s := newSessionRaw(t, c, a)
	turn, err := s.Prompt(context.Background(), schema.Text("my key is "+secret))
	if err != nil {
		t.Fatal(err)
	}
	p := a.expect("session/prompt")
	a.write("not json " + secret + "\n")
	a.update("s1", chunk("echo "+secret))
	a.reply(p, map[string]any{"stopReason": "end_turn"})
	turn.Wait()
	c.Close()

	trace := buf.String()
	if strings.Contains(trace, secret) {
		t.Fatalf("the secret is in the trace:\n%s", trace)
	}
	var dirs []string
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		var f struct {
			T    float64         `json:"t"`
			Dir  string          `json:"dir"`
			Msg  json.RawMessage `json:"msg"`
			Note string          `json:"note"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("trace line is not JSON: %s", sc.Text())
		}
		if (f.Msg == nil) == (f.Note == "") {
			t.Errorf("line with neither or both msg and note: %s", sc.Text())
		}
		dirs = append(dirs, f.Dir)
	}
	got := strings.Join(dirs, "")
	// initialize, session/new, prompt, junk, update, answer.
	if got != "><><>!<<" {
		t.Errorf("directions %q\n%s", got, trace)
	}
	if !strings.Contains(trace, `"note":"stdout (not JSON): not json [redacted]"`) {
		t.Errorf("junk note missing:\n%s", trace)
	}
}
