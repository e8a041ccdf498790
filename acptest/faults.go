package acptest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// This file holds the fault injections a script can use. Each writes in
// call order with the other frames. Exit, Crash and Hang end the calling
// goroutine (runtime.Goexit) so that no reply follows; call them only from
// a script or handler goroutine, never from a test's own goroutine.

// Junk writes line followed by the line ending: a non-JSON line, or a
// blank one for line == "", as agents and their npx/uvx wrappers print.
// It is recorded as a note.
func (c *Conn) Junk(line string) error {
	return c.writeFrame([]byte(line), true, "junk "+strconv.Quote(clip(line, 200)))
}

// Raw writes b exactly as given, with no line ending: use it for a frame
// split across writes, a final frame without newline, or an oversized
// frame (see [HugeFrame]). It is recorded as a note giving its size.
func (c *Conn) Raw(b []byte) error {
	return c.writeFrame(b, false, fmt.Sprintf("raw %d bytes", len(b)))
}

// HugeFrame returns a valid session/update line (agent_message_chunk) of
// exactly n bytes, without line ending, or the smallest such line if n is
// smaller. Write it with Raw, followed by "\n" or not.
func HugeFrame(sessionID string, n int) []byte {
	head, _ := marshal(sessionID)
	pre := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(head) +
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	const post = `"}}}}`
	pad := max(n-len(pre)-len(post), 0)
	var b bytes.Buffer
	b.Grow(len(pre) + pad + len(post))
	b.WriteString(pre)
	b.Write(bytes.Repeat([]byte{'x'}, pad))
	b.WriteString(post)
	return b.Bytes()
}

// Exit ends the connection as if the agent process exited with code: in
// a subprocess it calls os.Exit(code); in-process it closes both streams
// at once (the client reads EOF, its writes fail) and ends the calling
// goroutine without replying.
func (c *Conn) Exit(code int) {
	c.a.record("!", nil, fmt.Sprintf("exit %d", code))
	if c.a.subprocess {
		os.Exit(code)
	}
	c.abort()
	runtime.Goexit()
}

// Crash writes a panic-like message to stderr and then does Exit(3): the
// agent dies mid-whatever it was doing.
func (c *Conn) Crash() {
	c.Logf("acptest: simulated crash\ngoroutine 1 [running]:\nmain.main()")
	c.Exit(3)
}

// Hang never answers: it blocks until the connection ends and then ends
// the calling goroutine, so the request being served gets no reply.
func (c *Conn) Hang() {
	<-c.ctx.Done()
	runtime.Goexit()
}

// Stderr returns the agent's log stream: the process's stderr in
// subprocess mode, else Options.Stderr (or a discarding writer). Writes
// are serialised.
func (c *Conn) Stderr() io.Writer { return stderrWriter{c.a} }

// Logf writes one line to the agent's stderr.
func (c *Conn) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	_, _ = io.WriteString(c.Stderr(), msg)
}

// FloodStderr writes n bytes of log lines to stderr. It blocks while the
// client does not drain stderr, as a real chatty agent would.
func (c *Conn) FloodStderr(n int) error {
	line := []byte(strings.Repeat("acptest: stderr flood ", 3) + "\n")
	w := c.Stderr()
	for n > 0 {
		b := line[:min(n, len(line))]
		if _, err := w.Write(b); err != nil {
			return err
		}
		n -= len(b)
	}
	return nil
}

type stderrWriter struct{ a *Agent }

func (w stderrWriter) Write(b []byte) (int, error) {
	w.a.errMu.Lock()
	defer w.a.errMu.Unlock()
	switch {
	case w.a.subprocess:
		return os.Stderr.Write(b)
	case w.a.opts.Stderr != nil:
		return w.a.opts.Stderr.Write(b)
	}
	return len(b), nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
