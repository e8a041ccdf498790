// The Streamable HTTP profile's session streams: each session's SSE
// stream, opened after the answer that creates the session, read until it
// ends, and what a stream's end or refusal means for the calls waiting on
// it.

package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/acpclient/acp/schema"
)

// sessionStream is a session's SSE stream.
type sessionStream struct {
	ready chan struct{} // closed once it is open, or failed
	err   error         // why it failed to open (set before ready closes)

	ctx      context.Context // ends with the connection, or when the session is closed
	cancel   context.CancelFunc
	released bool // the session was closed: its stream's end is no failure (c.mu)
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
		if session == "" && err == nil && c.drainedVerdict() {
			// The server said the connection is drained (a 404
			// "(drained)"), then ended its stream cleanly: it has written
			// all it will (the gateway closes a drained connection only
			// once the client has come back for its session streams), and
			// asking again may find it gone altogether. An end that is
			// only waiting for the session streams (deferEnd) says no
			// such thing: a backend that died behind a proxy ends its
			// streams cleanly too, and taking that for a drain would send
			// its prompts, which the agent had, a second time.
			c.drainedAt("", end)
			return
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
				c.drainedAt(session, fmt.Errorf("%v, and opening it again: %w", end, err))
				return
			}
			if e := fmt.Errorf("%v, and opening it again failed: %w", end, err); !c.deferEnd("", e) {
				c.streamFailed(session, s, e)
			}
			return
		}
		if session == "" || errors.Is(err, ErrBufferLimit) || c.ended(s) {
			c.streamFailed(session, s, end)
			return
		}
		if err == nil && c.drainedVerdict() {
			// The server has said the connection is drained; this
			// stream's clean end since is its end.
			c.drainedAt(session, end)
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
				// to its end; the connection ends drained once every
				// stream has been (drainedAt).
				c.drainedAt(session, fmt.Errorf("%v, and opening it again: %w", end, err))
				return
			}
			// Or the server closed it as it drained, and the GET went
			// where the connection is unknown: the other streams may
			// still say drained (deferEnd).
			if e := fmt.Errorf("%v, and opening it again failed: %w", end, err); !c.deferEnd(session, e) {
				_ = c.fatal(e)
			}
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
		c.drainedAt(session, err)
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
