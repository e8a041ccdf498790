package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// servePost is the RFD's POST routing: initialize creates a connection and
// answers 200 with the agent's response; everything else is forwarded to
// the connection's agent and answered 202, its response coming on a stream.
func (g *Gateway) servePost(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		textError(w, "Unsupported Media Type: want application/json", http.StatusUnsupportedMediaType)
		return
	}
	connID := r.Header.Get(HeaderConnectionID)
	// The body counts against the gateway's bound on bodies in flight, and
	// against its connection's when it names one (an unknown id is
	// answered below, as before; its body counts only against the
	// gateway's).
	h := &hold{all: &g.bodies}
	if connID != "" {
		if c, _ := g.lookup(connID); c != nil {
			h.conn = &c.bodies
		}
	}
	defer h.release()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.o.ReadTimeout)) // a slowloris body
	body, err := readBody(r.Body, r.ContentLength, g.o.MaxBodyBytes, h)
	if err != nil {
		// The rest of the body is not worth reading: net/http would
		// otherwise try to, before sending the answer, on a keep-alive
		// connection. Over HTTP/2 the unread stream is reset instead;
		// Connection: close there would make the server shut down the
		// whole TCP connection, every other stream on it (other clients'
		// SSE streams behind a proxy) included.
		if r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close")
		}
		switch {
		case errors.Is(err, errBodyTooLarge):
			textError(w, fmt.Sprintf("Request Entity Too Large: over %d bytes", g.o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		case errors.Is(err, errConnBodies):
			w.Header().Set("Retry-After", "1")
			textError(w, fmt.Sprintf("Too Many Requests: this connection's bodies in flight are at %d bytes", g.o.MaxConnectionBodyBytes), http.StatusTooManyRequests)
		case errors.Is(err, errAllBodies):
			w.Header().Set("Retry-After", "1")
			textError(w, fmt.Sprintf("Service Unavailable: the gateway's bodies in flight are at %d bytes", g.o.MaxGatewayBodyBytes), http.StatusServiceUnavailable)
		case errors.Is(err, os.ErrDeadlineExceeded):
			textError(w, fmt.Sprintf("Request Timeout: body not read within %v", g.o.ReadTimeout), http.StatusRequestTimeout)
		default:
			textError(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		}
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		// The RFD: "Batch JSON-RPC requests return 501". The TypeScript
		// server answers 400 with the same JSON-RPC error; no client sends
		// batches, so the RFD's explicit status is kept.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotImplemented)
		w.Write(rpcError(nil, -32600, "JSON-RPC batches are not supported"))
		return
	}
	line, ok := compactInPlace(body)
	if !ok {
		textError(w, "Invalid JSON", http.StatusBadRequest)
		return
	}
	e, ok := parseEnvelope(line)
	if !ok {
		textError(w, "Invalid JSON-RPC message", http.StatusBadRequest)
		return
	}
	if e.isRequest() && e.method() == "initialize" {
		if connID != "" {
			textError(w, "Initialize not allowed on existing connection", http.StatusBadRequest)
			return
		}
		g.initialize(w, r, e, line, h)
		return
	}
	if connID == "" {
		textError(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return
	}
	c, gone := g.lookup(connID)
	if c == nil {
		textError(w, gone, http.StatusNotFound)
		return
	}
	if !c.begin() {
		textError(w, "Unknown Acp-Connection-Id (closed)", http.StatusNotFound)
		return
	}
	defer c.end()
	if status, msg := c.forward(r.Context(), e, line, r.Header.Get(HeaderSessionID)); status != 0 {
		textError(w, msg, status)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// forward checks a client message's headers against its body, records
// where its response goes, and writes it to the agent. A nonzero status is
// the error to answer.
func (c *conn) forward(ctx context.Context, e envelope, line []byte, header string) (int, string) {
	if len(header) > maxIDBytes {
		return http.StatusBadRequest, "Acp-Session-Id too long"
	}
	if header != "" {
		c.mu.Lock()
		if !c.sessionsEnded {
			c.knowLocked(header)
		}
		c.mu.Unlock()
	}
	var key string
	switch {
	case e.isResponse():
		// A reply to an agent request must name the session the request
		// came on (the TypeScript server's forwardClientResponse).
		k, ok := idKey(e.ID)
		c.mu.Lock()
		session, known := c.replies[k]
		if ok && known && session != "" && header != session {
			c.mu.Unlock()
			if header == "" {
				return http.StatusBadRequest, "Missing Acp-Session-Id"
			}
			return http.StatusBadRequest, "Mismatched Acp-Session-Id"
		}
		delete(c.replies, k)
		c.mu.Unlock()
	case e.HasMethod:
		session, inParams := e.sessionID()
		if (sessionScopedMethods[e.method()] || inParams) && header == "" {
			return http.StatusBadRequest, "Missing Acp-Session-Id"
		}
		if header != "" && inParams && header != session {
			return http.StatusBadRequest, "Mismatched Acp-Session-Id"
		}
		if header != "" {
			session = header
		}
		if e.isRequest() {
			k, ok := idKey(e.ID)
			if !ok {
				return http.StatusBadRequest, "Invalid JSON-RPC id (a string or number of at most 1024 bytes)"
			}
			// session/load's response comes on the connection stream, as in
			// the RFD's resume flow and the TypeScript server
			// (pendingResponseRoute): the client may not have the session's
			// stream yet. Every other response follows its request's session.
			if e.method() == "session/load" {
				session = ""
			}
			c.mu.Lock()
			if c.resentLocked(k) {
				// A proxy's second copy of a request already forwarded
				// (resend.go): its answer is on its way. Debug, not Info:
				// a client resending one id in a loop must not flood the
				// operator's log.
				c.mu.Unlock()
				c.o.Logger.Debug("gateway: a request sent again (by a proxy) was not forwarded twice", "connection", c.id, "method", e.method())
				return 0, ""
			}
			if refused, ok := c.refuseDrainingLocked(session, e.ID); refused {
				c.mu.Unlock()
				if !ok {
					return http.StatusNotFound, "Unknown Acp-Connection-Id (closed: " + errDrained.Error() + ")"
				}
				return 0, ""
			}
			if len(c.pending) >= c.o.MaxPendingRequests {
				c.mu.Unlock()
				return http.StatusTooManyRequests, fmt.Sprintf("Too many requests awaiting the agent's answer (%d)", c.o.MaxPendingRequests)
			}
			c.pending[k] = session
			if e.method() == "session/prompt" {
				c.promptSentLocked(k, session)
			}
			c.mu.Unlock()
			key = k
		}
	default:
		return http.StatusBadRequest, "Invalid JSON-RPC message: neither a request, a notification nor a response"
	}
	if err := c.send(ctx, line); err != nil {
		if key != "" {
			c.mu.Lock()
			delete(c.pending, key)
			delete(c.turnCalls, key)
			c.mu.Unlock()
		}
		if r := c.closeReason(); r != nil {
			if errors.Is(r, ErrAgentStalled) {
				return http.StatusGatewayTimeout, "Gateway Timeout: " + r.Error()
			}
			return http.StatusNotFound, "Unknown Acp-Connection-Id (closed: " + r.Error() + ")"
		}
		return http.StatusServiceUnavailable, "Service Unavailable: " + err.Error()
	}
	return 0, ""
}

// initialize starts a connection: the agent, its initialize exchange, and
// 200 with the agent's response and Acp-Connection-Id. The RFD's diagram
// also puts a connectionId in the result; the TypeScript server and client
// use only the header, and the agent's result is passed on as it is.
func (g *Gateway) initialize(w http.ResponseWriter, r *http.Request, e envelope, line []byte, h *hold) {
	key, ok := idKey(e.ID)
	if !ok || key == "null" {
		textError(w, "Initialize request must include an ID", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.o.InitializeTimeout)
	defer cancel()
	c, status, err := g.newConn(ctx, false)
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		textError(w, err.Error(), status)
		return
	}
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.initWait[key] = ch
	c.mu.Unlock()
	if c.begin() {
		defer c.end()
	}
	err = c.send(ctx, line)
	h.release() // written: the wait for the answer holds no body
	if err != nil {
		c.close(fmt.Errorf("gateway: initialize not delivered: %w", err))
		textError(w, "Bad Gateway: "+err.Error(), http.StatusBadGateway)
		return
	}
	select {
	case resp := <-ch:
		c.mu.Lock()
		c.ready = c.reason == nil
		closeNow := c.drainStepLocked() // Drain began during the initialize
		c.mu.Unlock()
		if closeNow {
			defer c.close(errDrained) // after the answer is written
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(HeaderConnectionID, c.id)
		w.WriteHeader(http.StatusOK)
		w.Write(resp)
	case <-ctx.Done():
		if r.Context().Err() != nil {
			c.close(fmt.Errorf("%w before initialize was answered", ErrClientClosed))
			return
		}
		c.close(fmt.Errorf("%w: the agent did not answer it within %v", ErrInitializeTimeout, g.o.InitializeTimeout))
		textError(w, fmt.Sprintf("Gateway Timeout: the agent did not answer initialize within %v", g.o.InitializeTimeout), http.StatusGatewayTimeout)
	case <-c.ctx.Done():
		textError(w, "Bad Gateway: "+c.closeReason().Error()+" before answering initialize", http.StatusBadGateway)
	}
}

// serveGet opens an SSE stream: the connection's, or with Acp-Session-Id a
// session's.
//
// The RFD answers 404 to an Acp-Session-Id unknown on the connection. The
// TypeScript client opens a session's stream before its first POST for the
// session, also for session/load on a new connection (the RFD's own resume
// flow), when no message of the session has been seen yet; the TypeScript
// server therefore creates the stream on demand, and so does the gateway:
// the peer's wire wins. What a session stream can hold is bounded by
// MaxSessions, and since every connection has its own agent, a stream can
// only ever carry that agent's messages: another connection's session id
// names nothing here.
func (g *Gateway) serveGet(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		textError(w, "Not Acceptable: want Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	connID := r.Header.Get(HeaderConnectionID)
	if connID == "" {
		textError(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return
	}
	session := r.Header.Get(HeaderSessionID)
	if len(session) > maxIDBytes {
		textError(w, "Acp-Session-Id too long", http.StatusBadRequest)
		return
	}
	c, gone := g.lookup(connID)
	if c == nil {
		textError(w, gone, http.StatusNotFound)
		return
	}
	st, status, msg := c.attach(session)
	if status != 0 {
		textError(w, msg, status)
		return
	}
	defer c.detach(session, st)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	if r.ProtoMajor == 1 {
		// Not chunked: the stream ends with its connection, as the SSE
		// recommendation sets it up (net/http then sends Connection:
		// close). net/http's chunked writer put each chunk's header in
		// its 4 KiB buffer and so wrote a batch in two: the header and
		// the batch's first 4 KiB, then the rest. Unchunked, a batch is
		// one write, and the client reads the events with no chunk
		// framing: 15 % less CPU an update through the gateway over
		// HTTP (bench/README.md). HTTP/2 frames the stream itself, and
		// its server drops this header.
		h.Set("Transfer-Encoding", "identity")
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// One comment at once, not just the headers: nginx over HTTP/2 holds
	// a response's headers until its first body byte, and a client (package
	// remote, like the TypeScript SDK) waits for the stream's headers
	// before it POSTs; without a byte here the first turn of every session
	// would wait for the first keep-alive (KeepAliveInterval, 15 s).
	_ = rc.SetWriteDeadline(time.Now().Add(g.o.StallTimeout))
	if _, err := io.WriteString(w, ":\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(g.o.KeepAliveInterval)
	defer tick.Stop()
	// A burst of events is gathered in one buffer (from corkPool, held only
	// while the burst lasts) and written, then flushed, when nothing more
	// is queued or the buffer is full: few writes, and nothing waits in a
	// buffer for a message that has not arrived.
	var buf *[]byte
	defer func() { putCork(buf) }()
	var batch [][]byte
	for {
		var ok bool
		batch, ok = c.nextBatch(r.Context(), st, tick.C, batch)
		if !ok {
			if session != "" && r.Context().Err() == nil {
				c.holdSessionStream(r.Context())
			}
			return
		}
		if buf == nil {
			buf = corkPool.Get().(*[]byte)
		}
		if len(batch) == 0 {
			*buf = append(*buf, ":\n\n"...) // keep-alive comment
		}
		taken := 0 // bytes of the messages in buf, released when written
		for i, msg := range batch {
			*buf = append(*buf, "data: "...)
			*buf = append(*buf, msg...)
			*buf = append(*buf, "\n\n"...)
			taken += len(msg)
			if len(*buf) < corkBytes && i < len(batch)-1 {
				continue
			}
			// The last of the batch: flushed unless more came meanwhile.
			idle := i == len(batch)-1 && !c.hasQueued(st)
			if err := g.writeEvents(r.Context(), w, rc, c, *buf, idle); err != nil {
				c.delivered(taken)
				return
			}
			*buf = (*buf)[:0]
			c.delivered(taken)
			taken = 0
			if idle {
				putCork(buf)
				buf = nil
			}
		}
		if len(batch) == 0 {
			if err := g.writeEvents(r.Context(), w, rc, c, *buf, true); err != nil {
				return
			}
			putCork(buf)
			buf = nil
		}
	}
}

// writeEvents writes b to an SSE stream, and flushes it when flush is set
// (nothing more is queued). A write that takes StallTimeout closes the
// connection with ErrStalled.
func (g *Gateway) writeEvents(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, c *conn, b []byte, flush bool) error {
	_ = rc.SetWriteDeadline(time.Now().Add(g.o.StallTimeout))
	start := time.Now()
	_, err := w.Write(b)
	if err == nil && flush {
		err = rc.Flush()
	}
	if err != nil && ctx.Err() == nil && (errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) >= g.o.StallTimeout) {
		c.close(fmt.Errorf("%w: an SSE write took over %v", ErrStalled, g.o.StallTimeout))
	}
	return err
}

func acceptsEventStream(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}

// serveDelete ends a connection and its agent.
func (g *Gateway) serveDelete(w http.ResponseWriter, r *http.Request) {
	connID := r.Header.Get(HeaderConnectionID)
	if connID == "" {
		textError(w, "Missing Acp-Connection-Id", http.StatusBadRequest)
		return
	}
	c, gone := g.lookup(connID)
	if c == nil {
		textError(w, gone, http.StatusNotFound)
		return
	}
	c.close(ErrClientClosed)
	w.WriteHeader(http.StatusAccepted)
}
