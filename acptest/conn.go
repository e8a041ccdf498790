package acptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/acpclient/acp/schema"
)

// Conn is one client connection of an [Agent]. Scripts reach it through
// [Session] and [Turn], which embed it, to send raw messages, make their own
// requests to the client, and inject faults.
//
// Frames are written in the order of the calls that write them; a call
// returns once its frame is written to the stream (over [Agent.Pipe], once
// the client has read it). All methods are safe for concurrent use.
type Conn struct {
	a *Agent
	r io.Reader
	w io.Writer

	ctx    context.Context // done when the connection ends
	cancel context.CancelFunc
	wg     sync.WaitGroup // request handlers and scripts

	wmu    sync.Mutex
	broken bool // a write failed or the streams were closed

	mu          sync.Mutex
	nextID      int64
	pending     map[string]*Request
	inflight    map[string]*inflight // client requests being answered
	initialized bool
	clientCaps  json.RawMessage
	version     int // the version initialize chose with Options.AnyVersion, else 0
	closeOnce   sync.Once
	// closedIDs are the sessions session/close closed on this
	// connection: prompts for them are refused (-32002) until a load or
	// resume opens them again.
	closedIDs map[string]bool

	rp        *replayer // non-nil in replay mode
	replayPre *segment
}

type inflight struct {
	cancel context.CancelFunc
	turn   *Turn
}

// message is any JSON-RPC 2.0 message. ID is nil when absent and "null"
// when null.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func newConn(a *Agent, r io.Reader, w io.Writer) *Conn {
	c := &Conn{
		a:        a,
		r:        r,
		w:        w,
		pending:  make(map[string]*Request),
		inflight: make(map[string]*inflight),
	}
	c.ctx, c.cancel = context.WithCancel(a.ctx)
	if a.replay != nil {
		c.rp, c.replayPre = newReplayer(c, a.replay)
	}
	return c
}

// Context is done when the connection ends: stdin EOF, a read error,
// [Agent.Close], or a simulated crash. It is not cancelled by session/cancel
// (see [Turn.Cancelled]), so a script can still wait for the client's
// answer to a pending permission request after a cancel.
func (c *Conn) Context() context.Context { return c.ctx }

// ProtocolVersion returns the ACP version the connection speaks, 1 or 2
// (see Options.Version and Options.AnyVersion). With AnyVersion it is 1
// until initialize.
func (c *Conn) ProtocolVersion() int {
	if c.isV2() {
		return 2
	}
	return 1
}

// isV2 says whether the connection speaks ACP v2: Options.Version 2, or
// with Options.AnyVersion a client that offered 2 or more.
func (c *Conn) isV2() bool {
	if !c.a.opts.AnyVersion {
		return c.a.opts.Version == 2
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version == 2
}

// Agent returns the agent serving this connection.
func (c *Conn) Agent() *Agent { return c.a }

// ClientCapabilities returns the clientCapabilities the client sent in
// initialize (nil before that).
func (c *Conn) ClientCapabilities() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clientCaps
}

// ClientCan reports whether the client advertised the capability at path,
// e.g. ClientCan("fs", "writeTextFile") or ClientCan("terminal"): the value
// there is true or a non-null object, as the spec's markers are.
func (c *Conn) ClientCan(path ...string) bool {
	var v any
	if json.Unmarshal(c.ClientCapabilities(), &v) != nil {
		return false
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[p]
	}
	switch v := v.(type) {
	case bool:
		return v
	case map[string]any:
		return true
	}
	return false
}

func (c *Conn) serve() error {
	if n := c.a.opts.StderrFlood; n > 0 {
		_ = c.FloodStderr(n)
	}
	c.startSubprocessExtras()
	if c.rp != nil && len(c.replayPre.out) > 0 {
		c.rp.enqueue(func() { c.rp.play(c.replayPre) })
	}
	err := c.readLoop()
	c.cancel()
	c.failPending()
	c.wg.Wait()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || c.a.ctx.Err() != nil {
		return nil
	}
	return err
}

func (c *Conn) readLoop() error {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			c.handleLine(line)
		}
		if err != nil {
			return err
		}
	}
}

// abort closes the streams where possible, so that blocked reads and writes
// return, and ends the connection.
func (c *Conn) abort() {
	c.closeOnce.Do(func() {
		c.wmu.Lock()
		c.broken = true
		c.wmu.Unlock()
		c.cancel()
		if cl, ok := c.r.(io.Closer); ok {
			cl.Close()
		}
		if cl, ok := c.w.(io.Closer); ok {
			cl.Close()
		}
	})
}

func (c *Conn) failPending() {
	c.mu.Lock()
	p := c.pending
	c.pending = make(map[string]*Request)
	c.mu.Unlock()
	for _, r := range p {
		r.resolve(nil, ErrClosed)
	}
}

// handleLine runs on the read goroutine. It never writes: replies are
// written by handler goroutines, so a client blocked writing to us while not
// reading cannot deadlock the agent.
func (c *Conn) handleLine(raw []byte) {
	line := bytes.TrimSpace(raw)
	if len(line) == 0 {
		return
	}
	m, err := parseMessage(line)
	if err != nil || (m.Method == "" && m.ID == nil) {
		if json.Valid(line) {
			c.a.record(">", line, "")
		} else {
			c.a.record("!", nil, fmt.Sprintf("> invalid JSON (%d bytes)", len(line)))
		}
		c.spawn(func() {
			_ = c.writeMsg(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
				Error: &Error{Code: CodeParseError, Message: "Parse error"}})
		})
		return
	}
	c.a.record(">", line, "")
	if c.rp != nil {
		c.rp.trigger(m)
		return
	}
	switch {
	case m.Method == "":
		c.handleResponse(m)
	case m.ID == nil:
		c.handleNotification(m)
	default:
		c.handleRequest(m)
	}
}

func (c *Conn) handleResponse(m message) {
	key := idKey(m.ID)
	c.mu.Lock()
	r := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if r == nil {
		c.a.record("!", nil, "response to unknown id "+string(m.ID))
		return
	}
	if m.Error != nil {
		r.resolve(nil, m.Error)
		return
	}
	if m.Result == nil {
		m.Result = json.RawMessage("null")
	}
	r.resolve(m.Result, nil)
}

func (c *Conn) handleNotification(m message) {
	switch m.Method {
	case schema.MethodSessionCancel:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.a.cancelTurns(p.SessionID)
		if c.isV2() {
			c.a.withdrawPermissions(p.SessionID)
		}
		if f := c.a.opts.OnCancel; f != nil {
			f(c, p.SessionID)
		}
	case "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		in := c.inflight[idKey(p.RequestID)]
		c.mu.Unlock()
		if in != nil {
			// A cancelled prompt ends like session/cancel: the script decides
			// and answers stopReason "cancelled".
			if in.turn != nil {
				in.turn.cancel()
			} else {
				in.cancel()
			}
		}
	default:
		if f := c.a.opts.OnNotification; f != nil {
			f(c, m.Method, m.Params)
		}
	}
}

func (c *Conn) handleRequest(m message) {
	if m.Method == "initialize" {
		c.mu.Lock()
		c.initialized = true
		c.mu.Unlock()
	}
	c.mu.Lock()
	ready := c.initialized || c.a.opts.NoInitializeCheck
	c.mu.Unlock()

	var h func(ctx context.Context) (any, error)
	var turn *Turn
	switch f := c.a.opts.Methods[m.Method]; {
	case f != nil:
		h = func(ctx context.Context) (any, error) { return f(ctx, c, m.Params) }
	case !ready:
		h = func(context.Context) (any, error) {
			return nil, &Error{Code: CodeInvalidRequest, Message: "acptest: initialize first"}
		}
	case m.Method == schema.MethodSessionPrompt:
		// The turn is registered here, on the read goroutine, so that a
		// session/cancel read right after the prompt always finds it.
		turn, h = c.startTurn(m)
	case m.Method == schema.MethodSessionNew:
		// Likewise the session exists before the next line is read, so a
		// client that pipelines session/prompt after it is not refused.
		h = c.newSession(m.Params)
	default:
		h = c.builtin(m.Method, m.Params)
	}
	c.serveRequest(m.ID, turn, h)
}

// serveRequest answers one client request on its own goroutine. A handler
// that exits with runtime.Goexit (Crash, Hang) sends nothing.
func (c *Conn) serveRequest(id json.RawMessage, turn *Turn, h func(ctx context.Context) (any, error)) {
	ctx, cancel := context.WithCancel(c.ctx)
	key := idKey(id)
	c.mu.Lock()
	c.inflight[key] = &inflight{cancel: cancel, turn: turn}
	c.mu.Unlock()
	c.spawn(func() {
		responded := false
		defer func() {
			c.mu.Lock()
			delete(c.inflight, key)
			c.mu.Unlock()
			cancel()
			if turn != nil && !responded {
				turn.finish(false)
			}
		}()
		res, err := callSafely(ctx, h)
		var resp response
		resp.JSONRPC, resp.ID = "2.0", id
		switch {
		case err == nil:
			if res == nil {
				res = struct{}{}
			}
			resp.Result = res
		case errors.Is(err, context.Canceled) && ctx.Err() != nil && c.ctx.Err() == nil:
			resp.Error = &Error{Code: CodeRequestCancelled, Message: "Request cancelled"}
		default:
			resp.Error = errorObject(err)
		}
		_ = c.writeMsg(resp)
		responded = true
		if turn != nil {
			if turn.v2 && err == nil {
				// v2: the answer only accepted the prompt; the script
				// runs now and the turn ends at its idle.
				turn.runV2()
				return
			}
			turn.finish(true)
		}
	})
}

func callSafely(ctx context.Context, h func(context.Context) (any, error)) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &Error{Code: CodeInternalError, Message: fmt.Sprintf("acptest: script panicked: %v", p)}
		}
	}()
	return h(ctx)
}

func (c *Conn) spawn(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  any             `json:"params,omitempty"`
}

// Notify sends a notification with the given method and params (any value
// that encodes to JSON; nil omits params).
func (c *Conn) Notify(method string, params any) error {
	return c.writeMsg(request{JSONRPC: "2.0", Method: method, Params: params})
}

// Call sends a request to the client and waits for its reply. An error
// reply is returned as *Error. If ctx is done first, Call stops waiting and
// returns ctx.Err() without telling the client; use [Conn.Start] and
// [Request.Cancel] to send $/cancel_request.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	r, err := c.Start(method, params)
	if err != nil {
		return nil, err
	}
	res, err := r.Wait(ctx)
	if ctx.Err() != nil && err == ctx.Err() {
		r.forget()
	}
	return res, err
}

// Start sends a request to the client and returns at once with a handle
// to wait for, inspect or cancel it.
func (c *Conn) Start(method string, params any) (*Request, error) {
	c.mu.Lock()
	n := c.nextID
	c.nextID++
	c.mu.Unlock()
	id := json.RawMessage(strconv.FormatInt(n, 10))
	if c.a.opts.StringIDs {
		id = json.RawMessage(strconv.Quote("req-" + strconv.FormatInt(n, 10)))
	}
	r := &Request{c: c, id: id, method: method, done: make(chan struct{})}
	c.mu.Lock()
	c.pending[idKey(id)] = r
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		r.forget()
		return nil, ErrClosed
	}
	if err := c.writeMsg(request{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		r.forget()
		return nil, err
	}
	return r, nil
}

// CancelRequest sends $/cancel_request for one of the agent's own pending
// requests (see [Request.ID]). The request stays pending until the client
// answers it.
func (c *Conn) CancelRequest(id json.RawMessage) error {
	return c.Notify("$/cancel_request", map[string]any{"requestId": id})
}

// Request is a request the agent sent to the client.
type Request struct {
	c      *Conn
	id     json.RawMessage
	method string
	done   chan struct{}
	once   sync.Once
	result json.RawMessage
	err    error
}

// ID returns the request's JSON-RPC id as sent.
func (r *Request) ID() json.RawMessage { return r.id }

// Method returns the request's method.
func (r *Request) Method() string { return r.method }

// Done is closed when the client replied or the connection ended.
func (r *Request) Done() <-chan struct{} { return r.done }

// Result returns the reply once Done is closed: the raw result, or an
// *Error for an error reply, or ErrClosed.
func (r *Request) Result() (json.RawMessage, error) {
	<-r.done
	return r.result, r.err
}

// Wait waits for the reply or for ctx to be done.
func (r *Request) Wait(ctx context.Context) (json.RawMessage, error) {
	select {
	case <-r.done:
		return r.result, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cancel sends $/cancel_request for this request.
func (r *Request) Cancel() error { return r.c.CancelRequest(r.id) }

func (r *Request) resolve(res json.RawMessage, err error) {
	r.once.Do(func() {
		r.result, r.err = res, err
		close(r.done)
	})
}

func (r *Request) forget() {
	r.c.mu.Lock()
	delete(r.c.pending, idKey(r.id))
	r.c.mu.Unlock()
	r.resolve(nil, ErrClosed)
}

// idKey canonicalises a request id for map lookups: the client must echo it
// exactly, so compact JSON text is enough.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// marshal encodes v compactly without HTML escaping, so text reaches the
// client as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (c *Conn) writeMsg(v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("acptest: encoding message: %w", err)
	}
	return c.writeFrame(b, true, "")
}

// writeFrame writes one frame under the write lock, so frames never
// interleave and the transcript records them in wire order. If eol, the
// configured line ending is appended. A non-empty note records the frame as
// a note instead of a message.
func (c *Conn) writeFrame(b []byte, eol bool, note string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken {
		return ErrClosed
	}
	if note != "" {
		c.a.record("!", nil, note)
	} else {
		c.a.record("<", b, "")
	}
	buf := b
	if eol {
		end := "\n"
		if c.a.opts.CRLF {
			end = "\r\n"
		}
		buf = append(b[:len(b):len(b)], end...)
	}
	if _, err := c.w.Write(buf); err != nil {
		c.broken = true
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}
