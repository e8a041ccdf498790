package acp

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// TraceWriter writes a wire trace: every frame sent and received and every
// line the agent writes to stderr, one JSON object per line, in the shape
// of the recordings acptest replays:
//
//	{"t":12.5,"dir":">","msg":{...}}                    a frame to the agent
//	{"t":13.1,"dir":"<","msg":{...}}                    a frame from the agent
//	{"t":13.2,"dir":"!","note":"stdout (not JSON): ..."} a line from the agent that is not JSON
//	{"t":14.0,"dir":"!","note":"stderr: ..."}           a line of the agent's stderr
//
// t is milliseconds since the trace began. Frames are written from the
// client's reader and writer goroutines as they pass, so a slow writer
// slows the connection: give it a file or a buffer, not a network.
type TraceWriter struct {
	// Redact, if set, may rewrite each frame or stderr line before it is
	// written (for example to remove a token); returning nil drops it.
	// dir is ">", "<" or "!".
	Redact func(dir string, data []byte) []byte

	mu    sync.Mutex
	w     *bufio.Writer
	start time.Time
	err   error
}

// NewTraceWriter returns a TraceWriter writing to w.
func NewTraceWriter(w io.Writer) *TraceWriter {
	return &TraceWriter{w: bufio.NewWriter(w), start: time.Now()}
}

func (c *Client) traceFrame(dir byte, line []byte) {
	if t := c.opts.Trace; t != nil {
		t.frame(string(dir), line)
	}
}

func (c *Client) traceStderr(line []byte) {
	if t := c.opts.Trace; t != nil {
		t.frame("!", line)
	}
}

func (t *TraceWriter) frame(dir string, data []byte) {
	if t.Redact != nil {
		if data = t.Redact(dir, data); data == nil {
			return
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	ms := float64(time.Since(t.start).Microseconds()) / 1000
	b := t.w.AvailableBuffer()
	b = append(b, `{"t":`...)
	b = strconv.AppendFloat(b, ms, 'f', -1, 64)
	b = append(b, `,"dir":"`...)
	b = append(b, dir...)
	switch {
	case dir == "!":
		b = append(b, `","note":`...)
		b = appendJSONString(b, append([]byte("stderr: "), data...))
	case json.Valid(data):
		b = append(b, `","msg":`...)
		b = append(b, data...)
	default:
		// Notes, like the recordings, keep every trace line valid JSON.
		b = append(b[:len(b)-len(dir)], '!')
		b = append(b, `","note":`...)
		b = appendJSONString(b, append([]byte("stdout (not JSON): "), data...))
	}
	b = append(b, "}\n"...)
	if _, err := t.w.Write(b); err != nil {
		t.err = err
		return
	}
	// Flushed per frame: a trace is for bug reports, and the frame a
	// crash was about must not be lost in a buffer.
	t.err = t.w.Flush()
}

func (t *TraceWriter) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
}

func appendJSONString(b, s []byte) []byte {
	q, _ := json.Marshal(string(s))
	return append(b, q...)
}
