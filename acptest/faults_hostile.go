package acptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// This file holds the faults of a hostile agent: the attacks an untrusted
// agent can make on a client's resources (ids it should not reuse, lines
// and floods past any sensible size, an input it stops reading). They are
// for tests that a client stays usable and bounded under attack.

// StartWithID sends a request with exactly the given id — any text,
// including what is not a valid JSON-RPC id (01, 1., a 300-byte string,
// true) or the id of a request still pending; empty means null — and
// returns at once with a handle, like [Conn.Start]. A frame that is not
// JSON is recorded as a note.
//
// Answers are matched to requests by their id, compacted. While several
// requests of the connection share an id, the answers with that id resolve
// them in the order they were sent: the first answer the oldest request.
// (The client cannot say which of them it answers.) The next request in
// line is waiting for its answer before the previous one's Done is closed,
// so an answer caused by anything a script does after it sees one resolved
// is never lost; two answers that arrive back to back with nothing in
// between may find the second not yet waiting, and it is then recorded in
// the transcript as a response to an unknown id.
//
// Ids chosen here may collide with those [Conn.Start] picks (0, 1, … or
// "req-0", …); they are then shared the same way. Do not stop waiting on
// such a request with [Conn.Call]'s context: use [Conn.RequestWithID].
func (c *Conn) StartWithID(id json.RawMessage, method string, params any) (*Request, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := marshal(request{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("acptest: encoding message: %w", err)
	}
	id = append(json.RawMessage(nil), id...)
	r := &Request{c: c, id: id, method: method, done: make(chan struct{})}
	key := idKey(id)
	c.mu.Lock()
	shared.mu.Lock()
	q := shared.q[c][key]
	switch {
	case q != nil:
		q.waiting = append(q.waiting, r)
	case c.pending[key] != nil:
		// A request holds the id already: the two go through a queue from
		// now on, served by one goroutine that hands the id on.
		first := c.pending[key]
		q = &idQueue{waiting: []*Request{r}}
		if shared.q[c] == nil {
			shared.q[c] = make(map[string]*idQueue)
		}
		shared.q[c][key] = q
		proxy := q.register(c, key, first)
		// Not c.spawn: the connection may be ending; serve returns when
		// it has.
		go q.serve(c, key, first, proxy)
	default:
		c.pending[key] = r
		q = nil
	}
	shared.mu.Unlock()
	c.mu.Unlock()

	// Splice the id in as written: encoding/json would reject or rewrite
	// an invalid one.
	frame := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	frame = append(frame, ',')
	frame = append(frame, b[len(`{"jsonrpc":"2.0",`):]...)
	note := ""
	if !json.Valid(frame) {
		// The transcript holds JSON messages; this one is not.
		note = fmt.Sprintf("request %s with id %s (not JSON)", strconv.Quote(method), clip(string(id), 40))
	}
	if err := c.writeFrame(frame, true, note); err != nil {
		if q == nil {
			r.forget()
		}
		return nil, err
	}
	return r, nil
}

// RequestWithID sends a request with exactly the given id (see
// [Conn.StartWithID]) and waits for its answer. An error reply is
// returned as *Error. If ctx is done first, it returns ctx.Err(); the
// request stays in line for its id.
func (c *Conn) RequestWithID(ctx context.Context, id json.RawMessage, method string, params any) (json.RawMessage, error) {
	r, err := c.StartWithID(id, method, params)
	if err != nil {
		return nil, err
	}
	return r.Wait(ctx)
}

// shared holds the requests waiting for an id that another pending request
// of their connection holds. Guarded by its mutex, taken after Conn.mu.
var shared = struct {
	mu sync.Mutex
	q  map[*Conn]map[string]*idQueue
}{q: make(map[*Conn]map[string]*idQueue)}

type idQueue struct {
	waiting []*Request
}

// register puts a stand-in for r in c.pending (under c.mu), through which
// the reader resolves it.
func (q *idQueue) register(c *Conn, key string, r *Request) *Request {
	proxy := &Request{c: c, id: r.id, method: r.method, done: make(chan struct{})}
	c.pending[key] = proxy
	return proxy
}

// serve hands the id from one request to the next: once cur's stand-in is
// answered, the next request is registered and only then is cur resolved.
func (q *idQueue) serve(c *Conn, key string, cur, proxy *Request) {
	for {
		select {
		case <-proxy.done:
		case <-c.ctx.Done():
			proxy.resolve(nil, ErrClosed) // unless answered already
		}
		c.mu.Lock()
		shared.mu.Lock()
		var next, nextProxy *Request
		closed := c.ctx.Err() != nil
		if len(q.waiting) > 0 && !closed {
			next, q.waiting = q.waiting[0], q.waiting[1:]
			nextProxy = q.register(c, key, next)
		}
		var rest []*Request
		if next == nil {
			rest, q.waiting = q.waiting, nil
			delete(shared.q[c], key)
			if len(shared.q[c]) == 0 {
				delete(shared.q, c)
			}
		}
		shared.mu.Unlock()
		c.mu.Unlock()
		cur.resolve(proxy.result, proxy.err)
		for _, r := range rest {
			r.resolve(nil, ErrClosed)
		}
		if next == nil {
			return
		}
		cur, proxy = next, nextProxy
	}
}

// BatchItem returns a JSON-RPC message for [Conn.Batch]: a request when id
// is non-nil, else a notification. id is sent exactly as given.
func BatchItem(id json.RawMessage, method string, params any) json.RawMessage {
	b, err := marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		panic("acptest: encoding message: " + err.Error())
	}
	return b
}

// Batch writes items (see [BatchItem]; any value that encodes to JSON goes)
// as one JSON-RPC batch line: a JSON array. ACP agents do not send
// batches; a client must bound what one costs. Answers to the requests
// among the items are not matched to anything: the agent records them in
// its transcript (answering an array with a parse error, as to any line
// that is not a single message).
func (c *Conn) Batch(items ...any) error {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		m, err := marshal(it)
		if err != nil {
			return fmt.Errorf("acptest: encoding batch item %d: %w", i, err)
		}
		b.Write(m)
	}
	b.WriteByte(']')
	return c.writeFrame(b.Bytes(), true, fmt.Sprintf("batch of %d items (%d bytes)", len(items), b.Len()))
}

// OversizedLine writes one line of exactly n bytes (or the smallest such
// line) carrying id exactly as given: a request for method, or a response
// (a result padded to size) when method is "". Use it to send a line past
// the client's line cap whose id may be anything — a valid id the client
// must answer or fail, or one it cannot echo (01, -, 1., 1.2.3, 0000000, a
// string over 256 bytes). It is recorded as a note giving its size.
func (c *Conn) OversizedLine(id json.RawMessage, method string, n int) error {
	var pre string
	if method != "" {
		m, _ := marshal(method)
		pre = `{"jsonrpc":"2.0","id":` + string(id) + `,"method":` + string(m) + `,"params":{"pad":"`
	} else {
		pre = `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"pad":"`
	}
	const post = `"}}`
	pad := max(n-len(pre)-len(post), 0)
	var b bytes.Buffer
	b.Grow(len(pre) + pad + len(post) + 2)
	b.WriteString(pre)
	b.Write(bytes.Repeat([]byte{'x'}, pad))
	b.WriteString(post)
	return c.writeFrame(b.Bytes(), true, fmt.Sprintf("oversized line of %d bytes, id %s", b.Len(), clip(string(id), 40)))
}

// FloodUpdates sends n agent_message_chunk updates for sessionID, each
// one character of text. With distinctMessageIDs every chunk has a new
// messageId ("flood-0", "flood-1", …), so each starts a message of its
// own: a client must fold them in linear work. The frames are not
// remembered for session/load replay.
func (c *Conn) FloodUpdates(sessionID string, n int, distinctMessageIDs bool) error {
	sid, err := marshal(sessionID)
	if err != nil {
		return err
	}
	same := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`)
	for i := range n {
		frame := same
		if distinctMessageIDs {
			frame = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
				`,"update":{"sessionUpdate":"agent_message_chunk","messageId":"flood-` + strconv.Itoa(i) +
				`","content":{"type":"text","text":"x"}}}}`)
		}
		if err := c.writeFrame(frame, true, ""); err != nil {
			return err
		}
	}
	return nil
}

// OrphanUpdates sends one agent_message_chunk of size bytes of text to
// each of n session ids that no session/new returned ("orphan-0",
// "orphan-1", …): updates a client may keep for a session that is about
// to be announced, and must bound.
func (c *Conn) OrphanUpdates(n, size int) error {
	text := bytes.Repeat([]byte{'o'}, size)
	for i := range n {
		frame := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"orphan-` + strconv.Itoa(i) +
			`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + string(text) + `"}}}}`)
		if err := c.writeFrame(frame, true, ""); err != nil {
			return err
		}
	}
	return nil
}

// FloodRequests starts n requests of method with params to the client
// without waiting between them, and never cancels them: the client must
// bound the requests it serves at once. It returns their handles, in the
// order sent, once all are written (or the first write error).
func (c *Conn) FloodRequests(method string, params any, n int) ([]*Request, error) {
	rs := make([]*Request, 0, n)
	for range n {
		r, err := c.Start(method, params)
		if err != nil {
			return rs, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Stall stands between a client and the agent's input (stdin): while
// stopped, the agent reads nothing, and the client's writes block as they
// do on a real pipe whose reader has stopped. Wrap the client's writer in
// it (toAgent from [Agent.Pipe], or the agent process's stdin):
//
//	fromAgent, toAgent := agent.Pipe()
//	stall := acptest.NewStall(toAgent)
//	c, err := acp.Connect(ctx, &acp.StreamTransport{Reader: fromAgent, Writer: stall}, opts)
//	stall.Stop() // the agent stops reading: the client's replies back up
//
// The agent goes on writing while stopped (requests, updates); it just
// does not read. All methods are safe for concurrent use.
type Stall struct {
	w io.Writer

	mu      sync.Mutex
	cond    *sync.Cond
	stopped bool
	closed  bool
	blocked int           // writes waiting now
	held    int64         // bytes of those writes
	wait    chan struct{} // closed when a write starts waiting
}

// NewStall returns a Stall passing writes to w, not stopped.
func NewStall(w io.Writer) *Stall {
	s := &Stall{w: w, wait: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// ErrStallClosed is returned by writes to a closed [Stall].
var ErrStallClosed = errors.New("acptest: stall closed")

// Write passes b on, first waiting while the stall is stopped.
func (s *Stall) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.stopped && !s.closed {
		s.blocked++
		s.held += int64(len(b))
		close(s.wait)
		s.wait = make(chan struct{})
		for s.stopped && !s.closed {
			s.cond.Wait()
		}
		s.blocked--
		s.held -= int64(len(b))
	}
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return 0, ErrStallClosed
	}
	return s.w.Write(b)
}

// Stop makes the agent stop reading: writes block until Resume or Close.
func (s *Stall) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// Resume lets blocked and later writes through.
func (s *Stall) Resume() {
	s.mu.Lock()
	s.stopped = false
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Blocked returns how many writes are waiting now, and their bytes.
func (s *Stall) Blocked() (writes int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked, s.held
}

// Waiting returns a channel closed the next time a write starts waiting:
// a test can wait on it, instead of sleeping, to know the client is
// writing into the stopped stall.
func (s *Stall) Waiting() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wait
}

// Close fails blocked and later writes with ErrStallClosed and closes the
// wrapped writer if it is an io.Closer (for a pipe: stdin EOF).
func (s *Stall) Close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	if cl, ok := s.w.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
