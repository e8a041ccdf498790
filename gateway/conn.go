package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

// conn is one ACP connection: one agent process, its routing state and the
// streams that carry its output to the client.
//
// Goroutines: readAgent reads the agent's output and routes each message
// onto a stream; the HTTP handlers (POST) and the WebSocket reader write to
// the agent, one at a time (writeSem); each stream has at most one
// receiver (an SSE response or the WebSocket writer) that takes its
// messages in order.
type conn struct {
	g     *Gateway
	o     *Options
	id    string
	ws    bool
	agent acp.Conn

	ctx    context.Context // done when the connection closes
	cancel context.CancelFunc

	lastSID string // readAgent's: the session the last update named (one string, not one per line)

	writeSem chan struct{} // one writer to the agent at a time
	bodies   budget        // POST bodies held, MaxConnectionBodyBytes
	room     chan struct{} // signalled when buffered output shrinks

	mu         sync.Mutex
	reason     error              // why it closed; nil while open
	ready      bool               // HTTP: initialize answered, the id is usable
	wsInit     bool               // WebSocket: the first message was initialize
	wsInitKey  string             // WebSocket: its id's key, once sent
	wsAnswered bool               // WebSocket: the agent answered it
	streams    map[string]*stream // "" is the connection stream; for WebSocket the only one
	pending    map[string]string  // client request id key → session of its response ("" = connection)
	replies    map[string]string  // agent request id key → its session, until the client answers
	answered   answeredIDs        // HTTP: the last client requests answered, for resends (resend.go)
	initWait   map[string]chan []byte
	buffered   int // bytes queued on streams or being written to the client
	active     int // requests in flight and receivers attached
	idleGen    int
	idle       *time.Timer
	// heldOpen: the agent of this HTTP connection exited; its session
	// streams are held open (holdSessionStream).
	heldOpen bool
	// Drain (drain.go): draining refuses new requests; sessionsEnded ends
	// the session streams once nothing is in flight; sessionReceivers
	// counts the SSE responses of session streams, which the connection
	// outlives.
	draining         bool
	sessionsEnded    bool
	sessionReceivers int
	// acks: the sessions whose streams had a receiver when they ended,
	// until the client asks for each again (its GET, answered 404, says it
	// has read that stream to its end); nil once the wait is over.
	acks map[string]bool
	// known: the sessions the client has named (a stream, a request's
	// Acp-Session-Id), at most MaxSessions: the streams it comes back
	// for after a drain (acks).
	known map[string]bool
	// turnCalls and turns follow the v2 turns for Drain (drain.go).
	turnCalls map[string]string
	turns     map[string]bool
}

// stream is the queue of one SSE stream (or of the WebSocket).
type stream struct {
	queue    [][]byte
	receiver bool
	wake     chan struct{} // cap 1: a message was queued, or the connection closed

	// Pooled run blocks (copyRun) that lines queued here were copied
	// into, oldest first. A block goes back to runPool once every line of
	// it was handed to the stream's writer and the writer is done with
	// them: when it asks for its next batch (nextBatch), or has stopped
	// (detach).
	blocks []heldBlock
	pushed uint64 // lines ever queued here
	handed uint64 // lines ever handed to a writer
}

// heldBlock is a pooled run block and the count of st.pushed after its
// last line.
type heldBlock struct {
	buf  *[]byte
	last uint64
}

// releaseLocked gives back the blocks none of whose lines is queued or
// being written; every line handed out is done with. c.mu is held.
func (st *stream) releaseLocked() {
	n := 0
	for n < len(st.blocks) && st.blocks[n].last <= st.handed {
		putRun(st.blocks[n].buf)
		n++
	}
	if n > 0 {
		m := copy(st.blocks, st.blocks[n:])
		clear(st.blocks[m:])
		st.blocks = st.blocks[:m]
	}
}

func newStream() *stream { return &stream{wake: make(chan struct{}, 1)} }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// readAgent routes the agent's output until it ends, then closes the
// connection.
func (c *conn) readAgent() {
	defer c.g.wg.Done()
	lines := newAgentLines(c.agent, c.o.MaxMessageBytes)
	var line []byte
	for {
		if line == nil {
			var err error
			if line, err = nextLine(lines, !c.ws); err != nil {
				switch {
				case errors.Is(err, errLineTooLong):
					c.close(fmt.Errorf("%w (%d bytes)", ErrAgentMessageTooLarge, c.o.MaxMessageBytes))
				case errors.Is(err, io.EOF):
					c.close(ErrAgentExited)
				default:
					c.close(fmt.Errorf("%w: %v", ErrAgentExited, err))
				}
				return
			}
			if line == nil {
				continue // blank
			}
		}
		if c.waitRoom() != nil {
			return
		}
		line = c.route(line, lines)
	}
}

// nextLine returns the agent's next line as the client is sent it, or nil
// for a blank one. With sse, a line holding a CR is compacted: an SSE
// client would take the CR for the end of the event's line. A WebSocket
// frame carries it as JSON's whitespace, and the scan for it, a pass over
// every line, is not made.
func nextLine(lines *agentLines, sse bool) ([]byte, error) {
	line, err := lines.next()
	if err != nil {
		return nil, err
	}
	line = bytes.TrimRight(line, " \t\r")
	if len(line) == 0 {
		return nil, nil
	}
	// A bare CR between JSON tokens is valid JSON but ends an SSE line.
	if sse && bytes.IndexByte(line, '\r') >= 0 {
		if l, ok := compactInPlace(line); ok {
			line = l
		}
	}
	return line, nil
}

// route puts one agent message on its stream: a response on the stream of
// the request it answers (or hands an initialize response to its POST),
// a message whose params carry a sessionId on that session's stream, the
// rest on the connection stream. A WebSocket has one stream.
//
// An update that the fast path routes takes with it, under the same lock,
// the updates after it that lines has already read, while there is room
// (each checked as waitRoom would): one lock and one wake-up of the
// writer per read of the agent's, not per line. Every line it queues is
// a copy (copyRun; the lines are lent). It returns the first line it read
// and did not route (nil if none, and lent like the others), for
// readAgent to route next.
func (c *conn) route(line []byte, lines *agentLines) []byte {
	if session, ok := c.updateSession(line); ok {
		c.mu.Lock()
		// A followed v2 turn (drain.go) ends with a state_update idle,
		// which only the full read below sees: while one is followed, a
		// line that may be one takes that path.
		if len(c.turns) == 0 || !mayEndTurn(line) {
			var run copyRun
			err := run.add(c, session, line)
			var next []byte
			for err == nil && c.reason == nil && c.buffered+run.bytes < c.o.MaxBufferedBytes && lines.ready() {
				// ready: a whole line within the bound is read, so
				// nextLine neither blocks nor fails, nor reuses the
				// block the run's lines are lent from.
				if next, _ = nextLine(lines, !c.ws); next == nil {
					continue
				}
				s, ok := c.updateSession(next)
				if !ok || (len(c.turns) > 0 && mayEndTurn(next)) {
					break
				}
				err = run.add(c, s, next)
				next = nil
			}
			if err == nil {
				// A run of half a block or more is queued where it was
				// read: the block goes with its lines, and agentLines
				// reads on in a new one. Not when a line is handed
				// back: it is lent from the block, to be routed next.
				blk, adopt := (*[]byte)(nil), next == nil && run.bytes >= runPooled
				if adopt {
					blk, adopt = lines.handOver()
				}
				if adopt {
					err = run.queueIn(c, blk)
				} else {
					err = run.flush(c)
				}
			}
			c.mu.Unlock()
			if err != nil {
				c.close(err)
			}
			return next
		}
		c.mu.Unlock()
	}
	line = bytes.Clone(line) // lent by agentLines
	e, ok := parseEnvelope(line)
	if !ok {
		c.o.Logger.Warn("gateway: dropped agent output that is not a JSON object", "connection", c.id, "bytes", len(line))
		return nil
	}
	c.mu.Lock()
	session := ""
	if e.isResponse() {
		if key, ok := idKey(e.ID); ok {
			if ch, ok := c.initWait[key]; ok {
				delete(c.initWait, key)
				c.mu.Unlock()
				ch <- line // buffered
				return nil
			}
			if s, ok := c.pending[key]; ok {
				session = s
				delete(c.pending, key)
				if !c.ws {
					c.answered.add(key, time.Now())
				}
			}
			if len(c.turnCalls) > 0 {
				c.promptAnsweredLocked(key, &e)
			}
			if c.ws && key == c.wsInitKey {
				c.wsAnswered = true
			}
		}
	} else {
		if s, ok := e.sessionID(); ok && len(s) <= maxIDBytes {
			session = s
		}
		if len(c.turns) > 0 {
			c.turnUpdateLocked(session, &e)
		}
		// Past MaxPendingRequests the agent's requests are not tracked:
		// the client's answers to them pass without the session check,
		// and the gateway keeps nothing for an agent whose requests are
		// never answered.
		if e.isRequest() && !c.ws && len(c.replies) < c.o.MaxPendingRequests {
			if key, ok := idKey(e.ID); ok {
				c.replies[key] = session
			}
		}
	}
	if c.ws {
		session = ""
	}
	err := c.pushLocked(session, line)
	c.mu.Unlock()
	if err != nil {
		c.close(err)
	}
	return nil
}

// updateSession reads the stream of a line that opens as a session/update
// does (most lines of a turn) without the peek: a message with a method
// is no response, and no state is kept for a notification. On a WebSocket
// (one stream) nothing more is read; over HTTP its stream is the session
// named by params' first member, a plain sessionId. ok is false for any
// other line, which route peeks.
//
// What the peek would have dropped or sent elsewhere (a line invalid or
// ambiguous further on, a second sessionId) the client refuses or reads
// the same on whichever stream it comes: it reads every line with the
// same peeker, and the streams of a connection feed its one reader.
func (c *conn) updateSession(line []byte) (string, bool) {
	if !bytes.HasPrefix(line, updateOpening) {
		return "", false
	}
	if c.ws {
		return "", true
	}
	rest, ok := bytes.CutPrefix(line[len(updateOpening):], sessionOpening)
	if !ok {
		return "", false
	}
	for i, b := range rest {
		switch {
		case b == '"' && i > 0 && i <= maxIDBytes:
			if string(rest[:i]) != c.lastSID {
				c.lastSID = string(rest[:i])
			}
			return c.lastSID, true
		case b < 0x20 || b >= 0x7f || b == '\\' || b == '"':
			// An escape, a byte that needs checking, an empty id: peek.
			return "", false
		}
	}
	return "", false
}

// mayEndTurn reports whether an update line may be a state_update (the
// idle that ends a followed v2 turn): it names the kind, or holds a \u
// escape, the only way a JSON string can spell a letter otherwise. A
// text chunk that merely mentions the word takes the full read too,
// which costs time, not correctness.
func mayEndTurn(line []byte) bool {
	return bytes.Contains(line, stateUpdateWord) || bytes.Contains(line, unicodeEscape)
}

var (
	stateUpdateWord = []byte("state_update")
	unicodeEscape   = []byte(`\u`)
)

// sessionOpening is how params open when their first member is the
// sessionId.
var sessionOpening = []byte(`{"sessionId":"`)

// pushLocked queues line on the stream of session, creating it (within
// MaxSessions). c.mu is held.
func (c *conn) pushLocked(session string, line []byte) error {
	_, err := c.pushRunLocked(session, [][]byte{line})
	return err
}

// pushRunLocked queues lines, in order, on the stream of session, creating
// it (within MaxSessions), and returns the stream (nil if nothing was
// queued: the connection is closing). c.mu is held.
func (c *conn) pushRunLocked(session string, lines [][]byte) (*stream, error) {
	if c.reason != nil {
		return nil, nil
	}
	st := c.streams[session]
	if st == nil {
		if len(c.streams)-1 >= c.o.MaxSessions {
			return nil, fmt.Errorf("%w (%d)", ErrTooManySessions, c.o.MaxSessions)
		}
		st = newStream()
		c.streams[session] = st
	}
	for _, line := range lines {
		st.queue = append(st.queue, line)
		c.buffered += len(line)
	}
	st.pushed += uint64(len(lines))
	signal(st.wake)
	return st, nil
}

// push is pushLocked for the gateway's own replies (WebSocket errors),
// after waiting for room like the agent's output.
func (c *conn) push(session string, line []byte) {
	if c.waitRoom() != nil {
		return
	}
	c.mu.Lock()
	err := c.pushLocked(session, line)
	c.mu.Unlock()
	if err != nil {
		c.close(err)
	}
}

// waitRoom waits while the connection holds MaxBufferedBytes for its
// client. A client that takes nothing for StallTimeout meanwhile has its
// connection closed (ErrStalled): it is not coming back for the output,
// and the agent must not wait for it forever.
func (c *conn) waitRoom() error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		reason, full := c.reason, c.buffered >= c.o.MaxBufferedBytes
		c.mu.Unlock()
		if reason != nil {
			return reason
		}
		if !full {
			return nil
		}
		if timer == nil {
			timer = time.NewTimer(c.o.StallTimeout)
		}
		select {
		case <-c.room:
			timer.Reset(c.o.StallTimeout) // progress
		case <-c.ctx.Done():
		case <-timer.C:
			err := fmt.Errorf("%w for %v with %d bytes waiting", ErrStalled, c.o.StallTimeout, c.o.MaxBufferedBytes)
			c.close(err)
			return err
		}
	}
}

// nextBatch waits for messages on st and takes every one queued, in
// order: one lock for a burst instead of one per message. The caller calls
// delivered for their bytes as it writes them; batch is reused for the
// result (its messages are cleared first). ok is false once the
// connection has closed and st is drained, or when ctx is done. With
// keepAlive non-nil, a tick with nothing to send returns (empty, true).
func (c *conn) nextBatch(ctx context.Context, st *stream, keepAlive <-chan time.Time, batch [][]byte) ([][]byte, bool) {
	clear(batch)
	for {
		c.mu.Lock()
		// The caller is done with the batch it had.
		st.releaseLocked()
		if len(st.queue) > 0 {
			// The queue's array goes to the caller and batch's becomes the
			// queue: two arrays alternate, none is allocated per burst.
			out := st.queue
			st.queue = batch[:0]
			st.handed += uint64(len(out))
			c.mu.Unlock()
			return out, true
		}
		closed := c.reason != nil || (c.sessionsEnded && st != c.streams[""])
		c.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-st.wake:
		case <-c.ctx.Done():
		case <-ctx.Done():
			return nil, false
		case <-keepAlive:
			return batch[:0], true
		}
	}
}

// hasQueued reports whether st holds a message.
func (c *conn) hasQueued(st *stream) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(st.queue) > 0
}

// delivered releases n bytes taken by next.
func (c *conn) delivered(n int) {
	c.mu.Lock()
	c.buffered -= n
	closeNow := c.drainStepLocked()
	c.mu.Unlock()
	signal(c.room)
	if closeNow {
		c.close(errDrained)
	}
}

// attach makes the caller the receiver of the stream of session. It fails
// with an HTTP status: 404 closed, 409 the stream has a receiver, 429 a new
// session past MaxSessions.
func (c *conn) attach(session string) (*stream, int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason != nil {
		return nil, 404, "Unknown Acp-Connection-Id (closed: " + c.reason.Error() + ")"
	}
	if session != "" && c.sessionsEnded {
		delete(c.acks, session)
		c.ackedLocked()
		return nil, 404, "Unknown Acp-Connection-Id (closed: " + errDrained.Error() + ")"
	}
	st := c.streams[session]
	if st == nil {
		if len(c.streams)-1 >= c.o.MaxSessions {
			return nil, 429, fmt.Sprintf("Too many sessions on this connection (%d)", c.o.MaxSessions)
		}
		st = newStream()
		c.streams[session] = st
	}
	if st.receiver {
		return nil, 409, "Outbound stream already has an active receiver"
	}
	st.receiver = true
	if session != "" {
		c.sessionReceivers++
		c.knowLocked(session)
	}
	c.beginLocked()
	return st, 0, ""
}

// detach ends the caller's receipt of st. A session stream left with
// nothing queued is forgotten, so that MaxSessions counts only streams that
// hold something.
func (c *conn) detach(session string, st *stream) {
	c.mu.Lock()
	st.receiver = false
	st.releaseLocked() // the receiver has stopped writing
	if session != "" {
		c.sessionReceivers--
	}
	if session != "" && len(st.queue) == 0 && c.streams[session] == st {
		delete(c.streams, session)
	}
	c.endLocked()
	closeNow := c.drainStepLocked()
	c.mu.Unlock()
	if closeNow {
		c.close(errDrained)
	}
}

// begin marks a request in flight, which keeps the connection from being
// reaped; false if it has closed.
func (c *conn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reason != nil {
		return false
	}
	c.beginLocked()
	return true
}

func (c *conn) end() {
	c.mu.Lock()
	c.endLocked()
	c.mu.Unlock()
}

func (c *conn) beginLocked() {
	c.active++
	c.idleGen++
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

func (c *conn) endLocked() {
	c.active--
	if c.active > 0 || c.ws || c.reason != nil {
		return
	}
	c.idleGen++
	gen := c.idleGen
	c.idle = time.AfterFunc(c.o.IdleTimeout, func() {
		c.mu.Lock()
		reap := c.active == 0 && c.idleGen == gen
		c.mu.Unlock()
		if reap {
			c.close(fmt.Errorf("%w for %v", ErrIdle, c.o.IdleTimeout))
		}
	})
}

// newline ends each message written to the agent.
var newline = []byte{'\n'}

// send writes one message (a single line of JSON) to the agent. If it is
// not written within AgentWriteTimeout (the agent does not read its stdin,
// and this message or the one ahead of it is stuck), the connection closes
// with ErrAgentStalled: a message half written cannot be taken back, and
// the bodies waiting behind it must not be held forever.
func (c *conn) send(ctx context.Context, line []byte) error {
	stuck := time.AfterFunc(c.o.AgentWriteTimeout, func() {
		c.close(fmt.Errorf("%w within %v", ErrAgentStalled, c.o.AgentWriteTimeout))
	})
	defer stuck.Stop()
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return c.closeReason()
	}
	defer func() { <-c.writeSem }()
	if err := c.closeReason(); err != nil {
		return err
	}
	// A write blocked on an agent that does not read its stdin returns when
	// the connection closes (acp.Conn's Close unblocks it).
	// The newline goes in a write of its own rather than by append, which
	// would copy a body whose buffer has no room for it.
	_, err := c.agent.Write(line)
	if err == nil {
		_, err = c.agent.Write(newline)
	}
	if err != nil {
		if r := c.closeReason(); r != nil {
			return r // the write was abandoned because the connection closed
		}
		err = fmt.Errorf("%w: writing to it: %v", ErrAgentExited, err)
		c.close(err)
		return err
	}
	return nil
}

func (c *conn) closeReason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

// close closes the connection once, for reason: its streams end (after
// what they hold is written), it is forgotten by the gateway, and its agent
// is shut down in the background (the gateway's Shutdown waits for it).
func (c *conn) close(reason error) {
	c.mu.Lock()
	if c.reason != nil {
		c.mu.Unlock()
		return
	}
	c.reason = reason
	c.heldOpen = !c.ws && errors.Is(reason, ErrAgentExited)
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	for _, st := range c.streams {
		signal(st.wake)
	}
	c.pending, c.replies = map[string]string{}, map[string]string{}
	c.mu.Unlock()
	c.cancel()
	c.g.forget(c, reason)
	if c.o.OnClose != nil {
		c.o.OnClose(c.id, reason)
	}
	if !errors.Is(reason, ErrClientClosed) {
		c.o.Logger.Info("gateway: connection closed", "connection", c.id, "reason", reason.Error())
	}
	go func() {
		defer c.g.wg.Done()
		_ = c.agent.Close()
		c.g.release()
	}()
}

// sessionStreamHold bounds how long a session's SSE stream stays open,
// silent, after its connection closed because the agent exited
// (holdSessionStream). A variable for the tests: New reads it.
var sessionStreamHold = 5 * time.Second

// holdSessionStream keeps a session's SSE stream open, once it is drained,
// after the agent exited, until the client drops it or sessionStreamHold
// has passed; it returns at once in every other case.
//
// Why: a Streamable HTTP client learns that the connection is gone from
// the end of the connection stream (or the 404 of one it opens after
// the end); a session stream that ends first is taken for that session's
// alone, and its pending calls (a prompt in flight) fail with a stream
// error instead of the connection's end — a supervised acp.Client would
// then not see the agent's death in them. The connection stream ends at
// once; a client that learns of the end drops the session streams itself
// (package remote does), so nothing waits for the bound with it. (Over
// WebSocket there is one stream: nothing to hold.)
func (c *conn) holdSessionStream(ctx context.Context) {
	c.mu.Lock()
	held := c.heldOpen
	c.mu.Unlock()
	if !held {
		return
	}
	t := time.NewTimer(c.g.hold)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-c.g.stopping:
	}
}
