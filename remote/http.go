package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
)

// The RFD's headers.
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
)

// HTTPTransport speaks ACP over the RFD's Streamable HTTP profile: every
// message the client sends is a POST to URL; initialize is answered 200
// with the agent's answer and the connection's Acp-Connection-Id, every
// later POST 202 with no body; the agent's messages arrive on long-lived
// SSE streams (GET): the connection's own, opened once initialize is
// answered, and one per session (Acp-Session-Id), opened when the session
// is first known: when the answer to the client's own session/new,
// session/fork, session/load or session/resume names it, or before the
// first message the client sends for it (session/load of a session from
// an earlier connection opens its stream before the POST, as the RFD's
// resume flow shows). An answer to anything else opens nothing, whatever
// session it names: it reaches the client, which reports an answer to no
// call of its own (acp.DiagLateResponse) and drops it. At most
// Options.MaxSessions session streams are open at once; a session the
// agent closed (a result to the client's session/close) gives its stream
// back. Close sends DELETE.
//
// The client's messages are posted one at a time, in the order the client
// wrote them (as the TypeScript client does), each with Acp-Connection-Id,
// and with Acp-Session-Id when it is for a session: a request or
// notification whose params name a sessionId, or an answer to a request
// that arrived on that session's stream.
//
// # Ordering
//
// Each stream is read in order, and messages of several streams never
// interleave, but nothing orders one stream against another: the server
// writes them on separate HTTP streams. What holds with the TypeScript
// SDK's server (and what the RFD's routing implies): a session's updates,
// its agent requests (permission, fs, terminal) and the answers to its
// session/prompt, session/cancel, session/set_* all travel on the session's
// stream, so every update of a turn is folded before the turn ends and an
// agent request after the updates written before it — the README's
// guarantees hold for turns. The answers to session/new, session/fork and
// session/load travel on the connection's stream instead; the session's
// stream opens only after session/new's answer names it, and the server
// keeps what it writes for the session until then, so the session is known
// before its first update or request arrives. A session/load replay,
// though, is written on the session's stream before the answer on the
// connection's, and may be read after it: then LoadSession can return
// before the whole replay is folded, and the rest of it is folded into the
// session's History as updates between turns (SessionState.Outside keeps
// them raw). Use WebSocket, where one stream carries everything, when the
// replay must be complete when LoadSession returns.
//
// # Failures
//
// A POST of a request answered with an error status fails only that call,
// with a JSON-RPC error (-32603) naming the status and the server's text —
// except 401, 403, 404 and 410, which mean the connection is refused or
// gone and end it. A session's stream refused with 409 (it has a reader
// already) or 404 (an unknown session) fails that session's calls; a
// session stream that ends fails the calls waiting on it; either way the
// next message for the session opens it again. Everything else
// that goes wrong — the connection's stream refused or ended, a POST of a
// notification or an answer refused, the network — ends the connection:
// the client's pending calls fail with an error wrapping acp.ErrConnClosed
// and a *StatusError (or the network error).
//
// # Where the RFD's prose and the TypeScript SDK differ
//
// The wire follows the SDK 2.4.0 (the real peer): any 2xx answers a POST
// (the RFD says 202); the connection id is taken from the
// Acp-Connection-Id header (the RFD also names a connectionId in the
// initialize result, which the SDK's server does not send); the first
// message must be initialize, and is refused locally otherwise; no
// Acp-Protocol-Version header is sent (the RFD: SHOULD, "not yet
// implemented"; the SDK sends none). HTTP/2, which the RFD requires, is
// negotiated over TLS; plain http:// (loopback, tests) is HTTP/1.1, all
// the SDK's node:http server speaks. A 404 on a session's stream fails
// that session only (the SDK's client ends the connection; see above).
type HTTPTransport struct {
	// URL is the endpoint, e.g. https://agents.example.com/acp.
	URL string
	Options
}

// Connect checks the URL and returns a Conn; the first request is the
// initialize POST, when the client writes initialize.
func (t *HTTPTransport) Connect(ctx context.Context) (acp.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := checkURL(t.URL, "https", "http", t.AllowInsecure)
	if err != nil {
		return nil, err
	}
	client, err := t.httpClient(false, nil)
	if err != nil {
		return nil, err
	}
	c := &httpConn{
		opts:     t.Options,
		url:      u,
		client:   client,
		owned:    t.HTTPClient == nil,
		in:       newInbox(),
		sessions: map[string]*sessionStream{},
		replyTo:  map[string]string{},
		calls:    map[string]string{},
		opens:    map[string]bool{},
		closes:   map[string]string{},
		budget:   &budget{max: t.maxBuffered()},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

type httpConn struct {
	opts   Options
	url    *url.URL
	client *http.Client
	owned  bool // client is ours: close its idle connections on Close
	in     *inbox
	budget *budget // shared by the unfinished messages of all the streams

	ctx    context.Context // ends on Close: every request and stream
	cancel context.CancelFunc
	wg     sync.WaitGroup // stream readers, late error replies

	partial []byte // the writer's unfinished line (writer goroutine only)
	connID  string // set by the writer goroutine after initialize, then read-only

	mu       sync.Mutex
	closing  bool
	drained  bool                      // the server drained the connection (drained.go)
	sessions map[string]*sessionStream // open or opening, by session id
	replyTo  map[string]string         // agent request id → the session whose stream carried it
	calls    map[string]string         // our pending session request id → its session
	opens    map[string]bool           // our pending session/new, load, resume, fork ids
	closes   map[string]string         // our pending session/close id → its session

	closeOnce sync.Once
}

// sessionStream is a session's SSE stream.
type sessionStream struct {
	ready chan struct{} // closed once it is open, or failed
	err   error         // why it failed to open (set before ready closes)

	ctx      context.Context // ends with the connection, or when the session is closed
	cancel   context.CancelFunc
	released bool // the session was closed: its stream's end is no failure (c.mu)
}

func (c *httpConn) Read(p []byte) (int, error) { return c.in.Read(p) }

// Write posts each complete line the client wrote, in order.
func (c *httpConn) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(c.partial[:i])
		var err error
		if len(line) > 0 {
			err = c.send(line)
		}
		first := len(c.partial) == len(p) // no earlier line of p was sent, nor part of this one before p
		c.partial = c.partial[i+1:]
		if err != nil {
			var nd notDelivered
			if errors.As(err, &nd) {
				if first {
					return 0, err // nothing of p reached the agent
				}
				err = nd.err
			}
			return len(p), err
		}
	}
	if len(c.partial) == 0 {
		c.partial = nil
	}
	return len(p), nil
}

func (c *httpConn) send(msg []byte) error {
	env := peek(msg)
	if c.connID == "" {
		return c.initialize(msg, env)
	}
	session := ""
	switch {
	case env.method != "":
		session = env.sessionID
	case env.id != nil:
		c.mu.Lock()
		session = c.replyTo[idKey(env.id)]
		delete(c.replyTo, idKey(env.id))
		c.mu.Unlock()
	}
	if env.isRequest() && opensSession(env.method) {
		// Recorded before the POST: the answer may arrive before it returns.
		c.mu.Lock()
		c.opens[idKey(env.id)] = true
		c.mu.Unlock()
	}
	if session != "" {
		if err := c.openSession(session); err != nil {
			if sessionRefused(err) {
				// That session is refused, not the connection.
				c.failRequest(env, err)
				return nil
			}
			return err
		}
		if env.isRequest() {
			c.mu.Lock()
			c.calls[idKey(env.id)] = session
			if env.method == schema.MethodSessionClose {
				c.closes[idKey(env.id)] = session
			}
			c.mu.Unlock()
		}
	}
	hdr := map[string]string{"Content-Type": "application/json", HeaderConnectionID: c.connID}
	if session != "" {
		hdr[HeaderSessionID] = session
	}
	resp, err := c.do(c.ctx, http.MethodPost, msg, hdr, "a POST")
	if err != nil {
		c.forget(env)
		if c.wasDrained() {
			return nil
		}
		return c.fatal(err)
	}
	defer drain(resp)
	if resp.StatusCode/100 == 2 {
		return nil
	}
	what := "the POST"
	if env.method != "" {
		what = "the POST of " + env.method
	}
	se := statusError(what, resp)
	if isDrained(se) {
		// Not delivered. The session streams, which the server has ended,
		// are still to be read to their ends (the server waits for this
		// client to come back for each, and each then ends the
		// connection as drained); without one, the connection ends now.
		c.forget(env)
		c.mu.Lock()
		streams := len(c.sessions)
		c.mu.Unlock()
		if streams == 0 {
			c.drainedEnd(se)
		}
		return nil
	}
	switch {
	case env.isRequest() && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusGone):
		// The connection is gone and the request reached no agent: a 404
		// names a connection the server that answered does not have
		// (behind a proxy, maybe one it sent to the wrong backend), so it
		// forwarded nothing. The write error says so (Write), so that a
		// supervised client sends a prompt again on its next connection.
		c.forget(env)
		_ = c.fatal(se)
		return notDelivered{se}
	case env.isRequest() && session != "" && se.StatusCode == http.StatusConflict:
		c.failSession(session, se)
		c.failRequest(env, se)
		return nil
	case env.isRequest() && !connectionGone(se.StatusCode):
		c.forget(env)
		c.failRequest(env, se)
		return nil
	}
	return c.fatal(se)
}

// connectionGone: the statuses after which no request of the connection
// can succeed (as the TypeScript client reads them).
func connectionGone(code int) bool {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}

// initialize posts the first message, which must be initialize, and opens
// the connection's stream.
func (c *httpConn) initialize(msg []byte, env envelope) error {
	if env.method != schema.MethodInitialize || env.id == nil {
		return c.fatal(fmt.Errorf("acp/remote: the first message must be the initialize request, not %q", env.method))
	}
	resp, err := c.do(c.ctx, http.MethodPost, msg, map[string]string{"Content-Type": "application/json"}, "initialize")
	if err != nil {
		return c.fatal(err)
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		// The TypeScript server answers a failed initialize 500 with a
		// JSON-RPC error in the body: the error shows it.
		return c.fatal(statusError("initialize", resp))
	}
	id := resp.Header.Get(HeaderConnectionID)
	if id == "" {
		return c.fatal(fmt.Errorf("acp/remote: the initialize response (%s %s) has no %s header", resp.Status, c.url.Redacted(), HeaderConnectionID))
	}
	if err := headerID(id); err != nil {
		return c.fatal(fmt.Errorf("acp/remote: the initialize response's %s cannot be sent back: %v", HeaderConnectionID, err))
	}
	// Read as a stream's message is, within the same budget: a buffer
	// that never grows past MaxMessageBytes, handed to the inbox in parts.
	m := newMessage(c.in, c.opts.maxMessage(), c.budget)
	defer m.reset()
	if err := m.readBody(resp.Body); err != nil {
		if errors.Is(err, errTooLarge) {
			return c.fatal(fmt.Errorf("acp/remote: the initialize response exceeds Options.MaxMessageBytes (%d)", c.opts.maxMessage()))
		}
		return c.fatal(fmt.Errorf("acp/remote: reading the initialize response: %w", err))
	}
	body := bytes.TrimSpace(m.buf)
	if renv := peek(body); !renv.isResponse() || idKey(renv.id) != idKey(env.id) {
		return c.fatal(fmt.Errorf("acp/remote: the initialize response is not the answer to initialize: %s", serverText(string(body))))
	}
	c.connID = id
	if err := m.finish(nil); err != nil {
		return err
	}
	c.wg.Add(1)
	go c.readStream("", nil)
	return nil
}

// openSession opens session's stream unless it is open (or opening: then
// it waits), and returns why it could not.
func (c *httpConn) openSession(session string) error {
	s := c.startSession(session)
	if s == nil {
		return errClosed
	}
	select {
	case <-s.ready:
		return s.err
	case <-c.ctx.Done():
		return errClosed
	}
}

// startSession starts opening session's stream unless it is open or
// opening; nil once the connection is closing. A session whose id cannot
// travel in a header, or one past Options.MaxSessions, gets a stream that
// failed to open and is not kept: the session's messages fail, and a later
// one tries again (a failed session may have made room).
func (c *httpConn) startSession(session string) *sessionStream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return nil
	}
	s := c.sessions[session]
	if s == nil {
		var err error
		if herr := headerID(session); herr != nil {
			err = fmt.Errorf("%w: %.64q: %v", errBadSessionID, session, herr)
		} else if len(c.sessions) >= c.opts.maxSessions() {
			err = fmt.Errorf("%w: session %q would make %d streams open (Options.MaxSessions is %d)", ErrTooManySessions, session, len(c.sessions)+1, c.opts.maxSessions())
		}
		if err != nil {
			s = &sessionStream{ready: make(chan struct{}), err: err}
			close(s.ready)
			return s
		}
		s = &sessionStream{ready: make(chan struct{})}
		s.ctx, s.cancel = context.WithCancel(c.ctx)
		c.sessions[session] = s
		c.wg.Add(1)
		go c.readStream(session, s)
	}
	return s
}

var errClosed = errors.New("acp/remote: the connection is closed")

// errBadSessionID: the server named a session whose id cannot be sent back
// in Acp-Session-Id.
var errBadSessionID = errors.New("acp/remote: the server's session id cannot travel in the Acp-Session-Id header")

// errNotEventStream: a stream's GET was answered 200 with a body that is
// not an event stream.
var errNotEventStream = errors.New("not text/event-stream")

// opensSession: the methods whose answer names a session the client now
// has, and whose stream the transport opens.
func opensSession(method string) bool {
	switch method {
	case schema.MethodSessionNew, schema.MethodSessionLoad, schema.MethodSessionResume, schema.MethodSessionFork:
		return true
	}
	return false
}

// readStream opens and reads one SSE stream: the connection's (session
// "") or a session's.
func (c *httpConn) readStream(session string, s *sessionStream) {
	defer c.wg.Done()
	what := "the connection's SSE stream"
	hdr := map[string]string{"Accept": "text/event-stream", HeaderConnectionID: c.connID}
	if session != "" {
		what = fmt.Sprintf("the SSE stream of session %q", session)
		hdr[HeaderSessionID] = session
	}
	opened := func(err error) {
		if s != nil {
			s.err = err
			close(s.ready)
		}
	}
	sctx := c.ctx
	if s != nil {
		sctx = s.ctx
		defer s.cancel()
	}
	// open issues the GET and checks what answers it.
	open := func() (io.ReadCloser, error) {
		resp, err := c.do(sctx, http.MethodGet, nil, hdr, what)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			se := statusError(what, resp)
			resp.Body.Close()
			return nil, se
		}
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			if mt, _, _ := mime.ParseMediaType(ct); mt != "text/event-stream" {
				resp.Body.Close()
				return nil, fmt.Errorf("acp/remote: %s answered with Content-Type %s, %w", what, serverText(ct), errNotEventStream)
			}
		}
		if cb, ok := resp.Body.(*cancelBody); ok {
			cb.unbound()
		}
		return resp.Body, nil
	}
	body, err := open()
	opened(err)
	if err != nil {
		c.streamFailed(session, s, err)
		return
	}
	// emptyReopens counts the session stream's reopenings in a row that
	// carried no message: a server that ends a stream at once, every time,
	// gets one reopening, not a loop.
	emptyReopens := 0
	for {
		got := false
		err = readSSE(body, newMessage(c.in, c.opts.maxMessage(), c.budget), func(msg []byte) {
			got = true
			c.inspect(session, msg)
		})
		body.Close()
		var end error
		if err == nil {
			// Not io.EOF: the client would take that for the agent's own
			// end of output and drop the reason.
			end = fmt.Errorf("acp/remote: %s ended (the server closed it)", what)
		} else {
			end = fmt.Errorf("acp/remote: %s ended: %w", what, err)
		}
		if session == "" && got {
			emptyReopens = 0
		}
		if session == "" && err == nil && !c.ended(s) && emptyReopens == 0 {
			if !got {
				emptyReopens++ // a server that ends it at once, every time: one reopening
			}
			// The connection's stream ended cleanly: the server closed the
			// connection, or only the stream. Asking for it again tells
			// which, and a gateway that drained the connection says so in
			// its 404 (acp.ErrDrained: what is unanswered was never
			// delivered); through a proxy that end may arrive ahead of
			// the session streams' last answers, which a drained
			// connection's client must still read.
			if body, err = open(); err == nil {
				continue
			}
			if isDrained(err) {
				c.drainedEnd(fmt.Errorf("%v, and opening it again: %w", end, err))
				return
			}
			c.streamFailed(session, s, fmt.Errorf("%v, and opening it again failed: %w", end, err))
			return
		}
		if session == "" || errors.Is(err, ErrBufferLimit) || c.ended(s) {
			c.streamFailed(session, s, end)
			return
		}
		if got {
			emptyReopens = 0
		} else if emptyReopens++; emptyReopens > 1 {
			c.streamFailed(session, s, end)
			return
		}
		// A session's stream ended while the connection lives, as far as
		// this client knows. Its end is often only the first sign of the
		// connection's: a backend that died, whose streams a proxy ends
		// one by one and cleanly, the session's before the connection's.
		// Failing the session's calls now would hide that death from a
		// supervised client (the turn would fail with a stream error, not
		// as interrupted by a restart). So open the stream again: where
		// the connection is gone, that fails (refused, 404 Unknown
		// Acp-Connection-Id from another backend, a proxy's 502/503), and
		// the connection ends, its calls failing with acp.ErrConnClosed;
		// where the server only ended the stream, the session goes on.
		// 409 (someone else reads it) leaves the connection alone.
		if body, err = open(); err != nil {
			if sessionConflict(err) || c.ended(s) {
				c.streamFailed(session, s, end)
				return
			}
			if isDrained(err) {
				// The server drained the connection: this stream was read
				// to its end, and the server answered all it received.
				c.drainedEnd(fmt.Errorf("%v, and opening it again: %w", end, err))
				return
			}
			_ = c.fatal(fmt.Errorf("%v, and opening it again failed: %w", end, err))
			return
		}
	}
}

// ended: the connection or the session s was ended by this client (Close,
// session/close), so a stream's end is no news.
func (c *httpConn) ended(s *sessionStream) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing || (s != nil && s.released) || c.ctx.Err() != nil
}

// sessionConflict: the server refused a session's stream with 409, for
// that session alone (it has another reader).
func sessionConflict(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == http.StatusConflict
}

// inspect learns what routing needs from a message before the client sees
// it: a session the answer to one of the client's own session/new, load,
// resume or fork calls names (its stream opens now, so that nothing the
// server keeps for it waits for the client's first message), and the
// session whose stream carried an agent request (its answer goes there).
// An answer to an id the client is not waiting on opens nothing: a server
// could otherwise make the client open a stream (a GET, a goroutine, a
// TCP connection) per answer it invents.
func (c *httpConn) inspect(stream string, msg []byte) {
	if bytes.HasPrefix(msg, sessionUpdate) {
		return // a notification (the flood of a turn): nothing to learn
	}
	env := peek(msg)
	switch {
	case env.isResponse():
		key := idKey(env.id)
		c.mu.Lock()
		delete(c.calls, key)
		ours := c.opens[key]
		delete(c.opens, key)
		closed, isClose := c.closes[key]
		delete(c.closes, key)
		c.mu.Unlock()
		if ours && env.hasResult && env.sessionID != "" {
			c.startSession(env.sessionID)
		}
		if isClose && env.hasResult {
			c.releaseSession(closed)
		}
	case env.isRequest() && stream != "":
		c.mu.Lock()
		c.replyTo[idKey(env.id)] = stream
		c.mu.Unlock()
	}
}

var sessionUpdate = []byte(`{"jsonrpc":"2.0","method":"session/update",`)

// streamFailed handles the end of a stream: the connection's ends the
// connection, and so does any stream over the connection's budget (the
// budget is the connection's: which stream crossed it says little); a
// session's otherwise fails the calls that wait on it (and, refused with
// 409, the session until it is loaded again).
func (c *httpConn) streamFailed(session string, s *sessionStream, err error) {
	c.mu.Lock()
	closing := c.closing || (s != nil && s.released)
	c.mu.Unlock()
	if closing {
		return // we ended it: the connection's Close, or the session's
	}
	if isDrained(err) {
		c.drainedEnd(err)
		return
	}
	var se *StatusError
	if session == "" || errors.Is(err, ErrBufferLimit) || (errors.As(err, &se) && !sessionRefused(err)) {
		_ = c.fatal(err)
		return
	}
	c.failSession(session, err)
}

// sessionRefused: a session's stream was refused for that session alone —
// 409 (it has a reader already, or must be loaded again: the TypeScript
// server's meaning) or 404 (the RFD's unknown Acp-Session-Id). The
// TypeScript client ends the whole connection on a 404 here; a session
// the server does not know says nothing about the others, so only that
// session's calls fail.
func sessionRefused(err error) bool {
	if errors.Is(err, ErrTooManySessions) || errors.Is(err, errBadSessionID) {
		return true // refused here, before any request
	}
	if errors.Is(err, errNotEventStream) {
		// A session's stream that is no stream (a JSON or HTML page where
		// the events should be) says nothing about the others either.
		return true
	}
	var se *StatusError
	return errors.As(err, &se) && (se.StatusCode == http.StatusConflict || se.StatusCode == http.StatusNotFound)
}

// failSession fails the pending calls of session and forgets its stream,
// so that the next message for it opens a new one (session/load after a
// 409, as the TypeScript client requires, is just such a message).
func (c *httpConn) failSession(session string, err error) {
	c.mu.Lock()
	delete(c.sessions, session)
	var ids []string
	for id, s := range c.calls {
		if s == session {
			ids = append(ids, id)
			delete(c.calls, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.reply(id, err)
	}
}

// releaseSession ends the stream of a session the agent has closed (its
// answer to the client's session/close was a result), so that a
// long-lived connection that opens and closes sessions stays under
// MaxSessions. The answer itself, read on that very stream, is passed on
// before the stream's next read sees the cancellation.
func (c *httpConn) releaseSession(session string) {
	c.mu.Lock()
	s := c.sessions[session]
	if s != nil {
		delete(c.sessions, session)
		s.released = true
	}
	c.mu.Unlock()
	if s != nil {
		s.cancel()
	}
}

// forget drops a request from the session calls and the session openers.
func (c *httpConn) forget(env envelope) {
	if env.id == nil {
		return
	}
	c.mu.Lock()
	delete(c.calls, idKey(env.id))
	delete(c.opens, idKey(env.id))
	delete(c.closes, idKey(env.id))
	c.mu.Unlock()
}

// failRequest answers a request of the client's that the server refused
// with a JSON-RPC error, so that only its call fails. A notification or an
// answer refused this way has no one to tell; it is dropped.
func (c *httpConn) failRequest(env envelope, err error) {
	if env.isRequest() {
		c.forget(env)
		c.reply(idKey(env.id), err)
	}
}

// reply passes a synthetic error answer to the client, from a goroutine of
// its own: the client's reader may be waiting for this very writer.
func (c *httpConn) reply(id string, err error) {
	e := map[string]any{"code": -32603, "message": err.Error()}
	var se *StatusError
	if errors.As(err, &se) {
		var body any = se.Body
		if json.Valid([]byte(se.Body)) {
			body = json.RawMessage(se.Body)
		}
		e["data"] = map[string]any{"status": se.StatusCode, "body": body}
	}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "error": e})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = c.in.put(append(line, '\n'))
	}()
}

// fatal ends the connection with err and returns it.
func (c *httpConn) fatal(err error) error {
	c.in.fail(err)
	c.cancel()
	return err
}

// do sends one request; RequestTimeout bounds it until its response
// headers, and then again its body: a server that sends a 202's or a
// 409's headers and holds the body must not hold the writer (whose Write
// waits for the POST, or for a session's stream to open) for ever. A
// stream the caller accepts is unbound (cancelBody.unbound): an SSE body
// may idle for hours.
func (c *httpConn) do(parent context.Context, method string, body []byte, own map[string]string, what string) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(parent)
	timeout := c.opts.timeout()
	timer := time.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("acp/remote: %s got no response in %v (Options.RequestTimeout)", what, timeout))
	})
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url.String(), rd)
	if err != nil {
		timer.Stop()
		cancel(nil)
		return nil, err
	}
	req.Header = c.opts.header(own)
	resp, err := c.client.Do(req)
	if err != nil {
		timer.Stop()
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
		cancel(nil)
		return nil, err
	}
	if timer.Stop() {
		// The body stays bound to ctx: cancel it with the body.
		timer.Reset(timeout)
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: func() { cancel(nil) }, timer: timer}
		return resp, nil
	}
	resp.Body.Close()
	cancel(nil)
	return nil, context.Cause(ctx)
}

type cancelBody struct {
	io.ReadCloser
	cancel func()
	timer  *time.Timer // RequestTimeout over the body, until unbound
}

// unbound lifts RequestTimeout from an SSE body once the stream is
// accepted. Should the timer have fired first, the body's reads fail with
// its cause, as for any stream that opened too late.
func (b *cancelBody) unbound() { b.timer.Stop() }

func (b *cancelBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// Close cancels every request and stream, sends DELETE (bounded by
// RequestTimeout, at most 5 s: the connection is over either way), and
// waits for the stream readers.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.cancel()
		c.in.close()
		if c.connID != "" {
			c.delete()
		}
		c.wg.Wait()
		if c.owned {
			c.client.CloseIdleConnections()
		}
	})
	return nil
}

func (c *httpConn) delete() {
	timeout := min(c.opts.timeout(), 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url.String(), nil)
	if err != nil {
		return
	}
	req.Header = c.opts.header(map[string]string{HeaderConnectionID: c.connID})
	if resp, err := c.client.Do(req); err == nil {
		drain(resp)
	}
}
