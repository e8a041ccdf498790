package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/acpclient/acp/internal/agenttext"
	"github.com/acpclient/acp/internal/jsonscan"
)

// Wire is the channel.Channel that sits between the agent's byte stream and
// jrpc2. It exists because jrpc2's own line channel loses data in ways ACP
// agents trigger every day:
//
//   - jrpc2 dispatches notifications on racing goroutines, so session/update
//     never reaches jrpc2: Recv hands each update to the client (Hooks.Update),
//     which folds it, in wire order, before it reads the next line. Every response
//     and agent request that jrpc2 sees afterwards therefore comes after the
//     updates the agent wrote before it, with no barrier.
//   - one junk line stops a jrpc2 client for good, so Recv hands jrpc2 only
//     lines that parse, and reports the rest.
//   - lines are bounded; an oversized one is skipped to its newline while a
//     tiny scanner recovers its id, so a pending call fails instead of
//     hanging and the connection lives on.
//   - Send never blocks jrpc2 (which calls it under its client lock): frames
//     go to a writer goroutine, with an urgent lane for session/cancel.
//
// Every call goes through jrpc2, session/prompt included, with jrpc2's ids.
// Send records each call in a table before its frame can reach the agent;
// Recv marks there the one answer it passes on for each, and tells the
// client where in the stream it passed (a prompt's turn ends exactly
// there). The rules the wire keeps, and where, are in docs/ENGINE.md.
type Wire struct {
	lines  *LineReader
	limits Limits
	hooks  Hooks

	mu      sync.Mutex
	cond    *sync.Cond
	normal  []outFrame
	urgent  [][]byte
	waiters map[int]chan error // frame sequence → written signal
	seq     int                // sequence number of the last queued frame
	wclosed bool               // no more frames accepted
	wdone   chan struct{}      // writer goroutine exited
	werr    error              // first write error
	// writeBroke: the writer closed the read side after werr (writeLoop);
	// a read that ends because of that close reports werr (readEnd).
	writeBroke bool
	rclosed    bool
	closeRd    func() error
	closeWr    func() error
	w          io.Writer
	inflight   map[string]Request // agent requests not yet answered, by raw id

	// The client's own calls, from the moment jrpc2 hands their frame to
	// Send until the caller has its result (Settle). The reader marks the
	// one response it passes on for each; answered counts those passed and
	// not yet settled, and settledCh is closed when it drops to zero.
	calls     map[string]*callRecord
	answered  int
	settledCh chan struct{}
	closed    chan struct{} // closed by Close: nothing waits for jrpc2 any more

	// The write budget (see Limits.maxQueued). queued counts the bytes
	// of normal frames not yet written plus replies reserved and not yet
	// handed to Send; admitted counts what bulky handlers hold before they
	// know their reply's size. room is closed (and replaced) whenever bytes
	// are released.
	queued   int64
	admitted int64
	reserved map[string][]int64 // reply id → reservations not yet sent
	room     chan struct{}
}

// Limits are the limits the wire enforces itself. The client fills them
// from its own Limits; a zero MaxQueued turns the write budget off.
type Limits struct {
	MaxLine    int   // bytes in one line; longer lines are skipped
	MaxPending int   // agent requests being served at once
	MaxBatch   int   // items in one batch line
	MaxQueued  int64 // bytes queued for writing before replies wait
}

// outFrame is a queued normal frame and the bytes it holds against the
// write budget until it is written.
type outFrame struct {
	b []byte
	n int64
}

// Hooks connect the wire to the client. The functions run on the reader
// goroutine (Trace also on the writer's) and must be quick and never call
// user code. Update, Notification, Response and Request are required.
type Hooks struct {
	Update       func(params []byte, peek jsonscan.Update)                           // a session/update notification, and what the reader's one pass read of it
	Notification func(method string, params []byte)                                  // any other notification
	Response     func(id []byte, method string, line []byte)                         // the response to a call of ours, in wire order, before jrpc2 sees it
	CallSent     func(id []byte, method string, params []byte) (written func(error)) // jrpc2 sent a call; written, if not nil, learns when its frame is on the wire
	Request      func(id []byte, method string, params []byte) Request               // an agent request, before jrpc2 sees it
	EOF          func(err error)                                                     // the agent's output ended; called once, before Recv returns io.EOF
	Oversized    func(id []byte, method string, size int64)                          // a discarded response to a call of ours, in wire order
	Diag         func(kind, msg string, line []byte)                                 // kind is one of the client's diagnostic kinds
	Trace        func(dir byte, line []byte)                                         // '<' read, '>' written
	// Drained, if set, runs once every line read so far is dispatched:
	// before each read of the agent's output (which may wait for the
	// agent) and before Recv hands a line to jrpc2. The client wakes there
	// the readers of what the lines before it logged, once a read's worth
	// of lines, not once a line.
	Drained func()

	// Closed is the error of a frame queued after CloseWrite; a write error
	// wraps it. LimitExceeded is named in the replies and diagnostics of
	// requests refused for a limit. The client passes its public sentinels,
	// so callers can match them with errors.Is.
	Closed        error
	LimitExceeded error
}

// Request is what the client tracks for one agent request from the moment
// Recv sees it until its handler returns, so a $/cancel_request that arrives
// before jrpc2 has started the handler still finds something to cancel.
// The wire knows nothing else about it.
type Request interface {
	// Withdraw cancels the request's handler: the agent withdrew it.
	Withdraw()
}

func NewWire(r io.Reader, w io.Writer, closeRd, closeWr func() error, limits Limits, hooks Hooks) *Wire {
	if hooks.Closed == nil {
		hooks.Closed = ErrClosed
	}
	if hooks.LimitExceeded == nil {
		hooks.LimitExceeded = ErrLimitExceeded
	}
	wr := &Wire{
		lines:    NewLineReader(r, limits.MaxLine),
		limits:   limits,
		reserved: map[string][]int64{},
		hooks:    hooks,
		w:        w,
		closeRd:  closeRd,
		closeWr:  closeWr,
		wdone:    make(chan struct{}),
		waiters:  map[int]chan error{},
		inflight: map[string]Request{},
		calls:    map[string]*callRecord{},
		closed:   make(chan struct{}),
	}
	wr.lines.br.beforeRead = hooks.Drained
	wr.cond = sync.NewCond(&wr.mu)
	go wr.writeLoop()
	return wr
}

// Recv implements channel.Channel. It returns the next line jrpc2 must see:
// a response to one of jrpc2's calls or an agent request. Everything else is
// consumed here.
func (w *Wire) Recv() ([]byte, error) {
	for {
		line, size, err := w.lines.Next()
		if err != nil {
			if w.hooks.EOF != nil {
				w.hooks.EOF(w.readEnd(err))
			}
			// Once Recv reports the end, jrpc2 stops and fails whatever is
			// still pending, racing its own delivery of responses it was
			// already handed. Wait for those deliveries first.
			w.awaitSettled()
			// jrpc2 treats io.EOF as an orderly stop; the real reason is
			// recorded by the eof hook, which callers get instead of the
			// context.Canceled jrpc2 would report.
			return nil, io.EOF
		}
		if size > int64(w.limits.MaxLine) {
			if out := w.oversized(size); out != nil {
				w.drained()
				return out, nil
			}
			continue
		}
		if w.hooks.Trace != nil {
			w.hooks.Trace('<', line)
		}
		if out := w.Dispatch(line); out != nil {
			w.drained()
			return out, nil
		}
	}
}

// drained runs Hooks.Drained: jrpc2 is handed a line, and the reader may
// not come back at once.
func (w *Wire) drained() {
	if w.hooks.Drained != nil {
		w.hooks.Drained()
	}
}

// Dispatch routes one complete, in-bounds line. It returns the bytes to hand
// to jrpc2, or nil when the line was consumed.
func (w *Wire) Dispatch(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		w.diag("blank_line", "skipped a blank line on the agent's stdout", nil)
		return nil
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return w.dispatchBatch(trimmed)
	default:
		w.diag("junk_line", "skipped a non-JSON line on the agent's stdout", trimmed)
		return nil
	}
	// One pass validates the line and reads what routing needs, a
	// session/update's session id and text chunk included (jsonscan.Peek,
	// the reader every part of the module shares). Its fields alias
	// trimmed, valid until the next read.
	env, err := jsonscan.Peek(trimmed)
	if err != nil {
		w.diag("junk_line", "skipped a line that is not "+peekProblem(trimmed, err), trimmed)
		return nil
	}
	if !w.route(&env, trimmed) {
		return nil
	}
	return bytes.Clone(trimmed)
}

// peekProblem says what is wrong with a line Peek refused: encoding/json's
// words for invalid JSON, Peek's for a message it will not guess at.
func peekProblem(line []byte, err error) string {
	if errors.Is(err, jsonscan.ErrSyntax) {
		var v any
		if jerr := json.Unmarshal(line, &v); jerr != nil {
			return "valid JSON: " + jerr.Error()
		}
		return "a JSON object"
	}
	return "a JSON-RPC message the client can route: " + err.Error()
}

// route handles env and reports whether jrpc2 must see the message.
func (w *Wire) route(env *jsonscan.Envelope, raw []byte) bool {
	hasID := len(env.ID) > 0 && string(env.ID) != "null"
	switch {
	case env.Method != "" && !hasID:
		if env.Method == methodSessionUpdate {
			// The update hook decodes params before it returns and keeps
			// no reference to them, nor to what Peek read of them.
			w.hooks.Update(env.Params, env.Update)
			return false
		}
		if env.Method == methodCancelRequest {
			w.cancelInbound(env.Params)
			return false
		}
		w.hooks.Notification(env.Method, bytes.Clone(env.Params))
		return false
	case env.Method != "":
		if !ValidID(env.ID) {
			w.diag("bad_request", "skipped an agent request with an invalid id", raw)
			return false
		}
		// The slot is taken before the request hook runs, so that a second
		// request with the same id can never replace the first in the
		// tables keyed by id (where cancelling a turn finds its permission
		// requests).
		id := string(env.ID)
		w.mu.Lock()
		_, dup := w.inflight[id]
		full := !dup && len(w.inflight) >= w.limits.MaxPending
		if !dup && !full {
			w.inflight[id] = nil
		}
		w.mu.Unlock()
		switch {
		case dup:
			w.diag("duplicate_id", "rejected an agent request whose id is already pending", raw)
			w.reply(env.ID, codeInvalidRequest, "acp: a request with this id is already pending", nil)
			return false
		case full:
			msg := fmt.Sprintf("%s: %d agent requests are already being served (Limits.MaxPendingRequests)", w.limitText(), w.limits.MaxPending)
			w.diag("limit_exceeded", "rejected "+agenttext.Quote(env.Method)+": "+msg, nil)
			w.reply(env.ID, codeInternalError, msg, limitData("MaxPendingRequests", int64(w.limits.MaxPending)))
			return false
		}
		in := w.hooks.Request(bytes.Clone(env.ID), env.Method, bytes.Clone(env.Params))
		w.mu.Lock()
		w.inflight[id] = in
		w.mu.Unlock()
		return true
	case hasID || len(env.Result) > 0 || len(env.Error) > 0:
		if !hasID {
			// A response with a null id answers something the agent could
			// not parse; jrpc2 cannot match it to anything.
			w.diag("orphan_error", "the agent reported an error for an unidentifiable message", raw)
			return false
		}
		rec := w.answer(env.ID, 0)
		if rec == nil {
			// Not a call of ours, or one already answered: jrpc2 would
			// drop it too, and counting it would make the end of input
			// wait for a delivery that never comes.
			w.diag("late_response", "ignored a response to no pending call of the client's (an unknown or repeated id)", raw)
			return false
		}
		w.hooks.Response(env.ID, rec.method, raw)
		return true
	default:
		w.diag("junk_line", "skipped a JSON value that is not a JSON-RPC message", raw)
		return false
	}
}

// dispatchBatch handles a JSON array of messages (JSON-RPC batch). ACP v1
// agents do not send batches, but accepting one costs little: updates are
// applied in array order and the rest goes on to jrpc2 as a smaller batch.
// The items are walked in place, so a batch of many tiny items costs no
// more than its line; items past Limits.MaxBatchItems are not routed: a
// request among them is answered with an error, everything else is counted
// in one diagnostic.
func (w *Wire) dispatchBatch(raw []byte) []byte {
	if jsonscan.ValidValue(raw, 0, 0) != len(raw) {
		var v any
		err := json.Unmarshal(raw, &v) // for its error message
		if err == nil {
			err = errors.New("invalid JSON")
		}
		w.diag("junk_line", "skipped a line that is not valid JSON: "+err.Error(), raw)
		return nil
	}
	var keep [][]byte
	n, skipped := 0, 0
	for i := jsonscan.SkipWS(raw, 1); i < len(raw) && raw[i] != ']'; {
		end := jsonscan.Skip(raw, i)
		it := raw[i:end]
		i = jsonscan.SkipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = jsonscan.SkipWS(raw, i+1)
		}
		n++
		var env jsonscan.Envelope
		ok := false
		if len(it) > 0 && it[0] == '{' {
			var err error
			env, err = jsonscan.Peek(it)
			ok = err == nil
		}
		if n > w.limits.MaxBatch {
			skipped++
			if ok && env.Method != "" && ValidID(env.ID) {
				msg := fmt.Sprintf("%s: a batch may hold %d items (Limits.MaxBatchItems)", w.limitText(), w.limits.MaxBatch)
				w.reply(env.ID, codeInternalError, msg, limitData("MaxBatchItems", int64(w.limits.MaxBatch)))
			}
			continue
		}
		if !ok {
			w.diag("junk_line", "skipped a batch item that is not a JSON-RPC message", it)
			continue
		}
		if w.route(&env, it) {
			keep = append(keep, it)
		}
	}
	if skipped > 0 {
		w.diag("limit_exceeded", fmt.Sprintf("%s: skipped %d of the %d items of a batch (Limits.MaxBatchItems is %d); requests among them were answered with an error", w.limitText(), skipped, n, w.limits.MaxBatch), nil)
	}
	switch len(keep) {
	case 0:
		return nil
	case 1:
		return bytes.Clone(keep[0])
	}
	size := 1
	for _, it := range keep {
		size += len(it) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for k, it := range keep {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']')
}

// maxIDBytes caps the ids the client writes back in frames it makes up
// itself (errors for lines it could not read). Real ids are short; the
// scanner that recovers them from oversized lines keeps no more than this.
const maxIDBytes = jsonscan.ScanCap

// ValidID reports whether id is, exactly as written, a JSON string or a
// JSON number: only then may it be echoed into a frame. A frame built
// around anything else ("01", "1.", a cut-off string) would be invalid
// JSON, and one invalid frame stops jrpc2's reader for good.
func ValidID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		return jsonscan.ValidString(id, 0) == len(id)
	case c == '-' || (c >= '0' && c <= '9'):
		return jsonscan.ValidNumber(id, 0) == len(id)
	}
	return false
}

// reply queues an error response to an agent request the wire answers
// itself. id must have passed ValidID.
// The reader waits first while the write budget is spent: an agent that
// floods requests while it reads nothing must not make the client queue
// refusals without end, and it is not reading what the client would say
// anyway.
func (w *Wire) reply(id []byte, code int64, msg string, data json.RawMessage) {
	w.awaitRoom()
	_ = w.SendRaw(errorFrame(id, code, msg, data), false)
}

// limitData is the error data of a reply for a request over a limit.
func limitData(limit string, value int64) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"limit": limit, "value": value})
	return b
}

// oversized reports a discarded line and, when it was a response to a call of
// ours, returns a synthetic error response for jrpc2 so that call fails with
// ErrLineTooLong instead of waiting forever.
func (w *Wire) oversized(size int64) []byte {
	sc := w.lines.Oversized()
	msg := fmt.Sprintf("discarded a %d-byte line (limit %d)", size, w.limits.MaxLine)
	if sc.Method != "" {
		msg += " carrying " + strconv.Quote(sc.Method)
	}
	id := sc.ID
	if len(id) > 0 && (len(id) > maxIDBytes || sc.IDCut || !ValidID(id)) {
		// Echoing an id we cannot reproduce exactly would make an invalid
		// frame. No call of ours can be owed this line anyway: our ids are
		// short, valid numbers, and a normal-sized line with such an id
		// would be junk too.
		msg += "; its id is not a valid JSON-RPC id, so nothing is answered or failed for it"
		id = nil
	}
	w.diag("line_too_long", msg, nil)
	if len(id) == 0 {
		return nil
	}
	if sc.Method != "" {
		// The agent is waiting for an answer to a request we cannot read.
		_ = w.SendRaw(errorFrame(id, codeInvalidRequest, fmt.Sprintf("acp: request exceeds the client's %d-byte line limit", w.limits.MaxLine), nil), false)
		return nil
	}
	rec := w.answer(id, size)
	if rec == nil {
		return nil
	}
	if w.hooks.Oversized != nil {
		w.hooks.Oversized(id, rec.method, size)
	}
	// jrpc2 must still complete the call: it gets a well-formed error
	// response for the id, and the caller learns the real reason from the
	// call's record (Settle), not from this frame.
	return errorFrame(id, codeParseError, "response exceeds the line limit", nil)
}

// errorFrame builds an error response. Its error object has the shape of
// the client's Error type: code, message, and data when there is any.
func errorFrame(id []byte, code int64, msg string, data json.RawMessage) []byte {
	eb, _ := json.Marshal(struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{code, msg, data})
	out := make([]byte, 0, len(eb)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":`...)
	out = append(out, eb...)
	out = append(out, '}')
	return out
}

func (w *Wire) limitText() string { return w.hooks.LimitExceeded.Error() }

func (w *Wire) diag(kind, msg string, line []byte) {
	if w.hooks.Diag != nil {
		w.hooks.Diag(kind, msg, line)
	}
}

// cancelInbound handles the agent's $/cancel_request for one of its requests.
func (w *Wire) cancelInbound(params []byte) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.RequestID) == 0 {
		w.diag("bad_notification", "ignored a $/cancel_request without a requestId", params)
		return
	}
	w.mu.Lock()
	in := w.inflight[string(bytes.TrimSpace(p.RequestID))]
	w.mu.Unlock()
	if in == nil {
		return // already answered: the spec says to ignore it
	}
	in.Withdraw()
}

// Inbound returns the tracking entry of an agent request, or nil.
func (w *Wire) Inbound(id string) Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inflight[id]
}

// Forget drops the tracking entry of an agent request once its handler
// has returned.
func (w *Wire) Forget(id string) {
	w.mu.Lock()
	delete(w.inflight, id)
	w.mu.Unlock()
}

// Close implements channel.Channel; jrpc2 calls it when it stops. It closes
// the read side so a Recv blocked on a silent agent returns.
func (w *Wire) Close() error {
	w.mu.Lock()
	already := w.rclosed
	if !already {
		w.rclosed = true
		close(w.closed)
	}
	w.mu.Unlock()
	if already || w.closeRd == nil {
		return nil
	}
	return w.closeRd()
}

// callRecord is what the reader learned about one of the client's calls.
type callRecord struct {
	method   string
	answered bool  // the reader passed its response on to jrpc2
	tooLong  int64 // the response was a line of this many bytes, discarded
}

// CallOutcome is what Settle reports about a finished call.
type CallOutcome struct {
	Answered bool  // the agent answered; jrpc2's result is the agent's
	TooLong  int64 // the answer was discarded for its size
}

// answer marks the call id as answered by the line being read (discarded
// for its size, when tooLong is not 0) and returns its record, or nil when
// no call of ours waits for id.
func (w *Wire) answer(id []byte, tooLong int64) *callRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec := w.calls[string(id)]
	if rec == nil || rec.answered {
		return nil
	}
	rec.answered, rec.tooLong = true, tooLong
	w.answered++
	return rec
}

// Settle forgets the call id once its caller has the result from jrpc2, and
// reports whether that result is the agent's answer: jrpc2 fails a call
// itself (context ended, engine stopped) with errors an agent could also
// send, so the record decides which it was.
func (w *Wire) Settle(id string) CallOutcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec := w.calls[id]
	if rec == nil {
		return CallOutcome{}
	}
	delete(w.calls, id)
	if rec.answered {
		w.answered--
		if w.answered == 0 && w.settledCh != nil {
			close(w.settledCh)
			w.settledCh = nil
		}
	}
	return CallOutcome{Answered: rec.answered, TooLong: rec.tooLong}
}

// awaitSettled waits until every response handed to jrpc2 has reached its
// caller, or Close. It never waits for a response that was not handed on:
// unknown and repeated ids are dropped by the reader, so each answered call
// settles exactly once, as soon as jrpc2 delivers it.
func (w *Wire) awaitSettled() {
	w.mu.Lock()
	if w.answered == 0 {
		w.mu.Unlock()
		return
	}
	if w.settledCh == nil {
		w.settledCh = make(chan struct{})
	}
	ch := w.settledCh
	w.mu.Unlock()
	select {
	case <-ch:
	case <-w.closed:
	}
}

// SetEOFHook replaces Hooks.EOF. It must happen before the reader can reach
// the end of the input; tests use it to leave the end to jrpc2 alone.
func (w *Wire) SetEOFHook(f func(err error)) { w.hooks.EOF = f }
