package acptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/acpclient/acp/internal/jsonscan"
)

// Frame is one line of a transcript, in the format of the real-agent
// recordings: T is milliseconds since the agent was created, Dir is ">" for
// client→agent, "<" for agent→client and "!" for a note (Note set, Msg nil).
// Bytes the agent wrote that are not a JSON message (Junk, Raw) are recorded
// as notes so that a transcript stays one JSON object a line.
type Frame struct {
	T    float64         `json:"t"`
	Dir  string          `json:"dir"`
	Msg  json.RawMessage `json:"msg,omitempty"`
	Note string          `json:"note,omitempty"`
}

// Method returns the frame's "method", or "" for responses and notes.
func (f Frame) Method() string {
	e, _ := jsonscan.Peek(f.Msg) // the reader the client routes by
	return e.Method
}

// ReadTranscript parses a transcript written by [Agent.WriteTranscript] or
// recorded from a real agent: one JSON object a line, blank lines ignored.
func ReadTranscript(r io.Reader) ([]Frame, error) {
	var frames []Frame
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(trimEOL(line)) > 0 {
			var f Frame
			if jerr := json.Unmarshal(line, &f); jerr != nil {
				return frames, fmt.Errorf("acptest: transcript line %d: %w", n, jerr)
			}
			frames = append(frames, f)
		}
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, err
		}
	}
}

// recorder keeps the transcript; it is shared by every connection of an Agent.
type recorder struct {
	start  time.Time
	off    bool
	frames []Frame // guarded by Agent.mu
}

func (r *recorder) now() float64 {
	ms := float64(time.Since(r.start).Microseconds()) / 1000
	return math.Round(ms*10) / 10
}

// Transcript returns a copy of every frame recorded so far, in wire order
// per direction (frames the agent wrote are recorded under the write lock,
// frames it read in the order it read them).
func (a *Agent) Transcript() []Frame {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Frame(nil), a.rec.frames...)
}

// WriteTranscript writes the transcript to w, one JSON object a line.
func (a *Agent) WriteTranscript(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, f := range a.Transcript() {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Received returns the params of every message with the given method that
// the client sent, in arrival order (requests and notifications alike). A
// message without params yields nil. Use it to assert, for example, that a
// session/cancel arrived, or that nothing was sent.
func (a *Agent) Received(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, f := range a.Transcript() {
		if f.Dir != ">" || f.Msg == nil {
			continue
		}
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(f.Msg, &m) == nil && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

func (a *Agent) record(dir string, msg []byte, note string) {
	if a.rec.off {
		return
	}
	f := Frame{T: a.rec.now(), Dir: dir, Note: note}
	if msg != nil {
		f.Msg = append(json.RawMessage(nil), msg...)
	}
	a.mu.Lock()
	a.rec.frames = append(a.rec.frames, f)
	a.mu.Unlock()
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
