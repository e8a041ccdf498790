package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	client, err := t.httpClient(false)
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
	drain    *drainState               // the wait for the streams' ends (drained.go)
	sessions map[string]*sessionStream // open or opening, by session id
	replyTo  map[string]string         // agent request id → the session whose stream carried it
	calls    map[string]string         // our pending session request id → its session
	opens    map[string]bool           // our pending session/new, load, resume, fork ids
	closes   map[string]string         // our pending session/close id → its session

	closeOnce sync.Once
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
		if c.wasDrained() || c.deferEnd(postStream, err) {
			// Unanswered: not delivered if the end proves drained, else
			// failed with it.
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
		// Not delivered. The streams, which the server has ended, are
		// still to be read to their ends (drainedAt).
		c.forget(env)
		c.drainedAt(postStream, se)
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
		if c.deferEnd(postStream, se) {
			// The session streams are still to be read (deferEnd), which
			// a write error would cut short: the request is answered
			// not delivered instead.
			c.replyNotDelivered(idKey(env.id), se)
			return nil
		}
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

var errClosed = errors.New("acp/remote: the connection is closed")

// errBadSessionID: the server named a session whose id cannot be sent back
// in Acp-Session-Id.
var errBadSessionID = errors.New("acp/remote: the server's session id cannot travel in the Acp-Session-Id header")

// errNotEventStream: a stream's GET was answered 200 with a body that is
// not an event stream.
var errNotEventStream = errors.New("not text/event-stream")

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
		if c.drain != nil {
			c.drain.timer.Stop()
		}
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
