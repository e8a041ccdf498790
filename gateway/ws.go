package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/acpclient/acp"
	"github.com/coder/websocket"
)

// serveWebSocket is the RFD's WebSocket profile: the upgrade creates the
// connection (its agent starts, and the 101 carries Acp-Connection-Id), then
// each text frame is one JSON-RPC message each way; binary frames are
// ignored. The first message must be initialize.
func (g *Gateway) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	// The handshake is checked in full before the agent starts: an upgrade
	// the library would refuse must cost no agent.
	if status, msg := checkHandshake(w, r); status != 0 {
		textError(w, msg, status)
		return
	}
	deadline := time.Now().Add(g.o.InitializeTimeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	c, status, err := g.newConn(ctx, true)
	cancel()
	if err != nil {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		textError(w, err.Error(), status)
		return
	}
	w.Header().Set(HeaderConnectionID, c.id)
	cc := &corkConn{}
	ws, err := websocket.Accept(&corkWriter{w, cc}, r, &websocket.AcceptOptions{
		// ServeHTTP has checked Origin, with the rule of every method
		// (AllowedOrigins); the library's own check matches patterns
		// against host:port and would refuse what that rule allows.
		InsecureSkipVerify: true,
	})
	if err != nil { // Accept has answered the request
		c.close(fmt.Errorf("%w: the WebSocket upgrade failed: %v", ErrClientClosed, err))
		return
	}
	ws.SetReadLimit(g.o.MaxBodyBytes)
	if c.begin() { // a WebSocket is never reaped as idle; pings watch it
		defer c.end()
	}
	// An agent held by a socket that never initializes (or whose agent
	// never answers) is released at InitializeTimeout, as over HTTP.
	initTimer := time.AfterFunc(time.Until(deadline), c.wsInitExpired)
	defer initTimer.Stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.wsWrite(ws, cc) }()
	go func() { defer wg.Done(); c.wsPing(ws) }()
	c.wsRead(ws)
	wg.Wait()
}

// wsRead forwards the client's frames to the agent until the socket ends.
func (c *conn) wsRead(ws *websocket.Conn) {
	for {
		typ, data, err := ws.Read(context.Background())
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig || errors.Is(err, websocket.ErrMessageTooBig) {
				c.close(fmt.Errorf("%w: a frame over %d bytes", ErrClientClosed, c.o.MaxBodyBytes))
			} else {
				c.close(fmt.Errorf("%w: %v", ErrClientClosed, err))
			}
			return
		}
		if typ != websocket.MessageText {
			continue // the RFD: binary frames are ignored
		}
		if !c.wsMessage(data) {
			return
		}
	}
}

// errFirstNotInitialize closes a WebSocket whose first message is not
// initialize (status 1002, as the TypeScript server).
var errFirstNotInitialize = errors.New("gateway: first message must be initialize")

// wsMessage handles one text frame; false ends the connection. Errors the
// TypeScript server answers with a JSON-RPC error (parse error, batch,
// invalid request, a second initialize) are answered the same way.
func (c *conn) wsMessage(data []byte) bool {
	if b := bytes.TrimLeft(data, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		c.push("", rpcError(nil, -32600, "JSON-RPC batches are not supported"))
		return true
	}
	line, ok := compactInPlace(data)
	if !ok {
		c.push("", rpcError(nil, -32700, "Parse error"))
		return true
	}
	e, ok := parseEnvelope(line)
	if !ok {
		c.push("", rpcError(nil, -32600, "Invalid Request"))
		return true
	}
	c.mu.Lock()
	first := !c.wsInit
	c.wsInit = true
	c.mu.Unlock()
	switch {
	case first && e.isResponse():
		c.mu.Lock()
		c.wsInit = false // a stray response before initialize is dropped
		c.mu.Unlock()
		return true
	case first && !(e.isRequest() && e.method() == "initialize" && string(e.ID) != "null"):
		c.close(errFirstNotInitialize)
		return false
	case first:
		key, ok := idKey(e.ID)
		if !ok {
			c.close(errFirstNotInitialize)
			return false
		}
		c.mu.Lock()
		c.wsInitKey = key
		c.mu.Unlock()
	case !first && e.isRequest() && e.method() == "initialize":
		c.push("", rpcError(e.ID, -32600, "Initialize not allowed on existing connection"))
		return true
	case !first && e.isRequest():
		// Tracked as over HTTP, for Drain: a connection closes only once
		// its client's requests are answered. Past MaxPendingRequests they
		// are not tracked (the agent's own bound applies).
		c.mu.Lock()
		if c.draining {
			// Refused in the gateway's name, also in the moment between
			// the drain's last step and the close: the WebSocket writer
			// sends what is queued before the close frame.
			_ = c.pushLocked("", rpcError(e.ID, acp.CodeNotDelivered, notDeliveredMessage))
			c.mu.Unlock()
			return true
		}
		if key, ok := idKey(e.ID); ok && len(c.pending) < c.o.MaxPendingRequests {
			c.pending[key] = ""
			if s, ok := e.sessionID(); ok && e.method() == "session/prompt" {
				c.promptSentLocked(key, s)
			}
		}
		c.mu.Unlock()
	}
	return c.send(c.ctx, line) == nil
}

// errNoInitialize: a WebSocket client sent no initialize within
// InitializeTimeout (closed with 1008; an agent that did not answer one
// closes with 1011).
var errNoInitialize = fmt.Errorf("%w: the client sent no initialize", ErrInitializeTimeout)

// wsInitExpired closes a WebSocket whose initialize has not been answered
// by InitializeTimeout.
func (c *conn) wsInitExpired() {
	c.mu.Lock()
	answered, sent := c.wsAnswered, c.wsInitKey != ""
	c.mu.Unlock()
	switch {
	case answered:
	case sent:
		c.close(fmt.Errorf("%w: the agent did not answer it within %v", ErrInitializeTimeout, c.o.InitializeTimeout))
	default:
		c.close(fmt.Errorf("%w within %v", errNoInitialize, c.o.InitializeTimeout))
	}
}

// wsWrite sends the connection's output until it closes and is drained,
// then closes the socket with the reason (the library's close frame). It
// writes the data frames itself, straight to cc (corkConn.writeFrame): a
// frame is written through when it is the last one queued; while more
// are queued the socket is corked, so a burst goes out in few writes and
// nothing waits in the buffer for a message that has not arrived.
func (c *conn) wsWrite(ws *websocket.Conn, cc *corkConn) {
	defer ws.CloseNow()
	c.mu.Lock()
	st := c.streams[""] // never removed
	c.mu.Unlock()
	// The stall closes the connection with its reason before the socket
	// is closed under the write: the reader would report that first. The
	// write has no context (none to end per message, and the library
	// arms a timer per frame for one that can): the messages a closing
	// connection drains (and then its close frame, 1001 at Shutdown) must
	// not find the socket closed under them because the connection's
	// context ended. One timer, armed for each write to the socket (a
	// frame, or the flush of a corked burst; not for a frame gathered).
	stall := time.AfterFunc(time.Hour, func() {
		c.close(fmt.Errorf("%w: a WebSocket write took over %v", ErrStalled, c.o.StallTimeout))
		cc.Conn.Close()
	})
	stall.Stop()
	defer stall.Stop()
	armed := false
	arm := func() { stall.Reset(c.o.StallTimeout); armed = true }
	var batch [][]byte
	for {
		var ok bool
		batch, ok = c.nextBatch(context.Background(), st, nil, batch)
		if !ok {
			break
		}
		// The batch goes out in runs of up to corkBytes (or one longer
		// message), each written under one lock of the socket's, and
		// released as it goes: room for the agent's output as the burst
		// goes out, not only at its end. The last frame is corked when
		// more is queued already.
		for i := 0; i < len(batch); {
			j, taken := i+1, len(batch[i])
			for j < len(batch) && taken+len(batch[j]) <= corkBytes {
				taken += len(batch[j])
				j++
			}
			corkLast := j < len(batch) || c.hasQueued(st)
			armed = false
			err := cc.writeFrames(batch[i:j], corkLast, arm)
			if armed {
				stall.Stop()
			}
			c.delivered(taken)
			if err != nil {
				c.close(fmt.Errorf("%w: %v", ErrClientClosed, err))
				return
			}
			i = j
		}
	}
	stall.Reset(c.o.StallTimeout)
	err := cc.flush()
	stall.Stop()
	if err != nil {
		c.close(fmt.Errorf("%w: %v", ErrClientClosed, err))
		return
	}
	code, reason := closeStatus(c.closeReason())
	_ = ws.Close(code, reason)
}

// wsPing pings the client every PingInterval; a ping unanswered within the
// interval closes the connection (a half-open socket, a dead peer).
func (c *conn) wsPing(ws *websocket.Conn) {
	t := time.NewTicker(c.o.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		// As in wsWrite: the reason first, then the ping is abandoned; and
		// a ping of its own context, so that a connection closing while a
		// ping is out leaves the socket to wsWrite's close frame.
		pctx, abandon := context.WithCancel(context.Background())
		dead := time.AfterFunc(c.o.PingInterval, func() {
			c.close(fmt.Errorf("%w: no pong within %v", ErrIdle, c.o.PingInterval))
			abandon()
		})
		err := ws.Ping(pctx)
		dead.Stop()
		abandon()
		if err != nil {
			return
		}
	}
}

// closeStatus is the close frame for a connection closed for reason.
func closeStatus(reason error) (websocket.StatusCode, string) {
	code := websocket.StatusInternalError
	switch {
	case errors.Is(reason, ErrClientClosed):
		code = websocket.StatusNormalClosure
	case errors.Is(reason, ErrShutdown):
		code = websocket.StatusGoingAway
	case errors.Is(reason, errFirstNotInitialize):
		code = websocket.StatusProtocolError
	case errors.Is(reason, errNoInitialize):
		code = websocket.StatusPolicyViolation
	case errors.Is(reason, ErrStalled), errors.Is(reason, ErrTooManySessions), errors.Is(reason, ErrIdle):
		code = websocket.StatusPolicyViolation
	}
	msg := ""
	if reason != nil {
		msg = reason.Error()
	}
	if len(msg) > 123 { // a close frame's reason is at most 123 bytes
		msg = msg[:123]
	}
	return code, msg
}
