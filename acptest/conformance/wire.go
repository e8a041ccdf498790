// This file holds the wire tap: every line between the grader and the
// agent is recorded as a frame (the evidence the rules are graded on) and
// copied to the trace, and a raw JSON-RPC peer for the probes the acp
// client would never send.

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

// message is a JSON-RPC 2.0 object as it came, fields kept raw. ID is nil
// when absent and "null" when null.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }
func (m *message) isResponse() bool     { return m.Method == "" && m.ID != nil }

// frame is one line on the wire.
type frame struct {
	dir  byte // '>' to the agent, '<' from it
	line []byte
	msg  message
	ok   bool // line is one JSON object
}

// evidence renders the frame as a Result evidence entry, without
// HTML escaping ("<" stays "<").
func (f *frame) evidence() json.RawMessage {
	var v any
	if json.Valid(f.line) {
		v = struct {
			Dir string          `json:"dir"`
			Msg json.RawMessage `json:"msg"`
		}{string(f.dir), f.line}
	} else {
		v = struct {
			Dir  string `json:"dir"`
			Line string `json:"line"`
		}{string(f.dir), string(f.line)}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// idKey is a JSON-RPC id in a comparable form: its JSON text, with
// whitespace removed.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// wireLog is the frames of one connection, in wire order per direction.
// It is written by the connection's reader and writer and read by the
// scenario; waiters are woken by closing changed.
type wireLog struct {
	mu      sync.Mutex
	frames  []frame
	bytes   int64 // recorded so far
	full    bool  // MaxRecordedBytes reached: later frames are not kept
	changed chan struct{}
	closed  bool
	trace   *traceOut
}

// MaxRecordedBytes bounds what is kept of one connection's frames (and of
// a line still without its newline). Beyond it, frames still pass between
// the client and the agent but are not kept nor graded, and jsonrpc.lines
// warns that the rest of the connection went ungraded.
const MaxRecordedBytes = 64 << 20

// maxRecorded is MaxRecordedBytes, lowered by tests.
var maxRecorded int64 = MaxRecordedBytes

func newWireLog(trace *traceOut) *wireLog {
	return &wireLog{changed: make(chan struct{}), trace: trace}
}

func (l *wireLog) add(dir byte, line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	f := frame{dir: dir, line: bytes.Clone(line)}
	f.ok = len(bytes.TrimSpace(line)) > 0 && bytes.TrimSpace(line)[0] == '{' && json.Unmarshal(line, &f.msg) == nil
	l.mu.Lock()
	if l.full || l.bytes+int64(len(f.line)) > maxRecorded {
		first := !l.full
		l.full = true
		if first { // wake the waiters: what they wait for will not come
			close(l.changed)
			l.changed = make(chan struct{})
		}
		l.mu.Unlock()
		if first && l.trace != nil {
			l.trace.note(fmt.Sprintf("conformance: more than %d bytes on this connection; the rest is not recorded", maxRecorded))
		}
		return
	}
	l.bytes += int64(len(f.line))
	l.frames = append(l.frames, f)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	if l.trace != nil {
		l.trace.frame(dir, f.line)
	}
}

// errTruncated is returned by waits on a log that stopped recording: what
// they wait for would never be seen.
var errTruncated = errors.New("the connection outgrew what the grader records")

// truncated reports whether frames were dropped for MaxRecordedBytes.
func (l *wireLog) truncated() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.full
}

func (l *wireLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// snapshot returns the frames so far and a channel closed at the next one.
func (l *wireLog) snapshot() ([]frame, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.frames[:len(l.frames):len(l.frames)], l.changed, l.closed
}

func (l *wireLog) all() []frame {
	fs, _, _ := l.snapshot()
	return fs
}

// waitFor waits until some frame from index from on satisfies match, and
// returns its index; -1 with an error when ctx ends or the connection
// closes first.
func (l *wireLog) waitFor(ctx context.Context, from int, match func(*frame) bool) (int, error) {
	for {
		fs, changed, closed := l.snapshot()
		for i := from; i < len(fs); i++ {
			if match(&fs[i]) {
				return i, nil
			}
		}
		from = len(fs)
		if closed {
			return -1, errors.New("the connection closed")
		}
		if l.truncated() {
			return -1, errTruncated
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
}

// response finds the agent's response to request id, from index from on.
func (l *wireLog) response(ctx context.Context, from int, id json.RawMessage) (int, error) {
	key := idKey(id)
	return l.waitFor(ctx, from, func(f *frame) bool {
		return f.dir == '<' && f.ok && f.msg.isResponse() && idKey(f.msg.ID) == key
	})
}

// tap wraps a connection to the agent, recording every line.
type tap struct {
	rwc  io.ReadWriteCloser
	log  *wireLog
	rbuf []byte // a partial line read
	wbuf []byte // a partial line written
	wmu  sync.Mutex
	once sync.Once
}

func (t *tap) Read(p []byte) (int, error) {
	n, err := t.rwc.Read(p)
	// Read is called from one goroutine at a time (the client's reader,
	// or rawPeer's); rbuf needs no lock.
	t.rbuf = splitLines(append(t.rbuf, p[:n]...), func(line []byte) { t.log.add('<', line) })
	if int64(len(t.rbuf)) > maxRecorded { // a line without end: not kept
		t.log.add('<', t.rbuf)
		t.rbuf = nil
	}
	if err != nil && len(t.rbuf) > 0 {
		t.log.add('<', t.rbuf)
		t.rbuf = nil
	}
	return n, err
}

// Write records and forwards p; the lock also keeps concurrent writers'
// frames (rawPeer's replies, its calls) from interleaving.
func (t *tap) Write(p []byte) (int, error) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.wbuf = splitLines(append(t.wbuf, p...), func(line []byte) { t.log.add('>', line) })
	return t.rwc.Write(p)
}

func (t *tap) Close() error {
	var err error
	t.once.Do(func() {
		err = t.rwc.Close()
		t.log.close()
	})
	return err
}

// splitLines calls fn for each complete line of buf and returns the rest.
func splitLines(buf []byte, fn func([]byte)) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		fn(buf[:i])
		buf = buf[i+1:]
	}
}

// tapTransport gives the acp client an already open, tapped connection.
type tapTransport struct{ conn *tap }

func (t tapTransport) Connect(context.Context) (acp.Conn, error) { return t.conn, nil }

// traceOut writes the trace in acp.TraceWriter's format. Scenarios run one
// at a time, but a connection's reader and writer write concurrently.
type traceOut struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newTraceOut(w io.Writer) *traceOut { return &traceOut{w: w, start: time.Now()} }

func (t *traceOut) frame(dir byte, line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := []byte(`{"t":`)
	b = strconv.AppendFloat(b, float64(time.Since(t.start).Microseconds())/1000, 'f', -1, 64)
	if json.Valid(line) {
		b = append(b, `,"dir":"`...)
		b = append(b, dir)
		b = append(b, `","msg":`...)
		var c bytes.Buffer
		if json.Compact(&c, line) == nil {
			line = c.Bytes()
		}
		b = append(b, line...)
	} else {
		note, _ := json.Marshal("stdout (not JSON): " + string(line))
		if dir == '>' {
			note, _ = json.Marshal("stdin (not JSON): " + string(line))
		}
		b = append(b, `,"dir":"!","note":`...)
		b = append(b, note...)
	}
	b = append(b, "}\n"...)
	t.w.Write(b)
}

func (t *traceOut) note(text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	note, _ := json.Marshal(text)
	fmt.Fprintf(t.w, `{"t":%s,"dir":"!","note":%s}`+"\n",
		strconv.FormatFloat(float64(time.Since(t.start).Microseconds())/1000, 'f', -1, 64), note)
}

// rawPeer speaks JSON-RPC to the agent directly, for what the acp client
// never sends (an unknown method, invalid params, several initialize
// offers). It answers every request of the agent's with -32601.
type rawPeer struct {
	conn *tap
	next int
	done chan struct{}
}

func newRawPeer(conn *tap) *rawPeer {
	p := &rawPeer{conn: conn, done: make(chan struct{})}
	go p.read()
	return p
}

func (p *rawPeer) read() {
	defer close(p.done)
	buf := make([]byte, 64<<10)
	seen := 0
	for {
		_, err := p.conn.Read(buf)
		for _, f := range p.conn.log.all()[seen:] {
			seen++
			if f.dir == '<' && f.ok && f.msg.isRequest() {
				reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.msg.ID,
					"error": map[string]any{"code": -32601, "message": "the conformance grader serves no such method"}})
				p.conn.Write(append(reply, '\n'))
			}
		}
		if err != nil {
			p.conn.log.close()
			return
		}
	}
}

// call sends a request and waits for its response; it returns the
// response's frame index.
func (p *rawPeer) call(ctx context.Context, method string, params any) (int, *frame, error) {
	id := p.next
	p.next++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return -1, nil, err
	}
	from := len(p.conn.log.all())
	if _, err := p.conn.Write(append(b, '\n')); err != nil {
		return -1, nil, err
	}
	i, err := p.conn.log.response(ctx, from, json.RawMessage(strconv.Itoa(id)))
	if err != nil {
		return -1, nil, err
	}
	fs := p.conn.log.all()
	return i, &fs[i], nil
}

// close ends the connection and waits for the reader.
func (p *rawPeer) close() {
	p.conn.Close()
	<-p.done
}

// rpcError is the error member of a response.
type rpcError struct {
	Code    *int    `json:"code"`
	Message *string `json:"message"`
}

func errorOf(f *frame) (*rpcError, bool) {
	if f.msg.Error == nil {
		return nil, false
	}
	var e rpcError
	if json.Unmarshal(f.msg.Error, &e) != nil {
		return &rpcError{}, true
	}
	return &e, true
}
