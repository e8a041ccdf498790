package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpclient/acp"
	"github.com/coder/websocket"
)

// WebSocketTransport speaks ACP over the RFD's WebSocket profile: a GET
// with Upgrade: websocket to URL (the same endpoint as Streamable HTTP),
// then one JSON-RPC message per text frame in each direction. Binary
// frames from the server are read past. The client's first message is
// initialize, as on every transport. Close performs the close handshake
// (code 1000), waiting at most 5 s for the server's close frame.
//
// Everything travels on one stream, in the order the server wrote it, so
// every ordering guarantee of the client holds as on stdio, the
// session/load replay included.
//
// When the server closes the socket or it breaks, the client's pending
// calls fail with an error wrapping acp.ErrConnClosed and a *CloseError
// (code and reason; 1006 when no close frame came). A handshake answered
// with another status than 101 fails Connect with a *StatusError (426: the
// server has no WebSocket; use HTTPTransport).
type WebSocketTransport struct {
	// URL is the endpoint: wss://agents.example.com/acp (https:// is read
	// as wss://, and http:// as ws://, which the insecure rule covers).
	URL string
	Options
}

// Connect performs the handshake, bounded by ctx and RequestTimeout.
func (t *WebSocketTransport) Connect(ctx context.Context) (acp.Conn, error) {
	raw := t.URL
	// The WebSocket and the Streamable HTTP profile share one endpoint, so
	// an http(s) URL names it just as well.
	switch {
	case len(raw) > 8 && raw[:8] == "https://":
		raw = "wss://" + raw[8:]
	case len(raw) > 7 && raw[:7] == "http://":
		raw = "ws://" + raw[7:]
	}
	u, err := checkURL(raw, "wss", "ws", t.AllowInsecure)
	if err != nil {
		return nil, err
	}
	onBlock := new(atomic.Pointer[func()])
	client, err := t.httpClient(true, onBlock)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeoutCause(ctx, t.timeout(),
		fmt.Errorf("acp/remote: the WebSocket handshake with %s got no response in %v (Options.RequestTimeout)", u.Redacted(), t.timeout()))
	defer cancel()
	ws, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{
		HTTPClient: client,
		HTTPHeader: t.header(nil),
	})
	if err != nil {
		if t.HTTPClient == nil {
			client.CloseIdleConnections()
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, statusError("the WebSocket handshake", resp)
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if cause := context.Cause(dctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, cause
		}
		return nil, fmt.Errorf("acp/remote: WebSocket handshake with %s: %w", u.Redacted(), err)
	}
	// The transport bounds what it holds itself (see message), and a
	// message over the client's line limit is the client's to skip, as
	// on stdio, rather than a reason to close the socket.
	ws.SetReadLimit(-1)
	c := &wsConn{ws: ws, in: newInbox(), max: t.maxMessage(), done: make(chan struct{})}
	if t.HTTPClient == nil {
		c.client = client
		// Our own dialer tells the inbox when the reader is about to wait
		// for the network (bufConn), so the client is woken once per
		// burst rather than per message.
		c.in.deferred = true
		flush := c.in.flush
		onBlock.Store(&flush)
	}
	if id := resp.Header.Get(HeaderConnectionID); id != "" {
		c.connID = id
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.readLoop()
	return c, nil
}

type wsConn struct {
	ws     *websocket.Conn
	in     *inbox
	max    int
	client *http.Client // ours, to close its idle connections; nil when the caller's
	connID string       // from the 101 response (the RFD's; informative)

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // the reader has stopped

	partial []byte // the writer's unfinished line

	mu        sync.Mutex
	closing   bool
	drained   bool // the server closed it drained (closeErr)
	closeOnce sync.Once
}

func (c *wsConn) Read(p []byte) (int, error) { return c.in.Read(p) }

// Write sends each complete line as one text frame.
func (c *wsConn) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(c.partial[:i])
		if len(line) > 0 {
			if err := c.ws.Write(c.ctx, websocket.MessageText, line); err != nil {
				c.partial = nil
				if c.endedDrained() {
					return len(p), nil // not delivered; the reader reports acp.ErrDrained
				}
				return len(p), c.closeErr(err)
			}
		}
		c.partial = c.partial[i+1:]
	}
	if len(c.partial) == 0 {
		c.partial = nil
	}
	return len(p), nil
}

func (c *wsConn) readLoop() {
	defer close(c.done)
	m := newMessage(c.in, c.max, nil)
	buf := make([]byte, 32<<10)
	for {
		// A context that never ends: coder/websocket arms a timer per
		// frame for one that can (a third of the cost of a small
		// message), and Close ends a blocked read anyway.
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.in.fail(c.closeErr(err))
			return
		}
		if typ != websocket.MessageText {
			// The RFD: binary frames are ignored.
			if _, err := io.Copy(io.Discard, r); err != nil {
				c.in.fail(c.closeErr(err))
				return
			}
			continue
		}
		if err := m.readFrom(r, buf); !errors.Is(err, io.EOF) {
			m.abandon()
			if !errors.Is(err, io.ErrClosedPipe) {
				c.in.fail(c.closeErr(err))
			}
			return
		}
		if err := m.finish(nil); err != nil {
			return // the client closed
		}
	}
}

// endedDrained waits, after a failed write, for the reader to learn how
// the socket ended (briefly: the socket is gone), and reports whether the
// server drained it.
func (c *wsConn) endedDrained() bool {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drained
}

// closeErr says how the socket ended.
func (c *wsConn) closeErr(err error) error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return io.EOF
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		e := &CloseError{Code: int(ce.Code), Reason: ce.Reason, Err: err}
		if ce.Code == websocket.StatusGoingAway && strings.Contains(ce.Reason, drainedMark) {
			// The server drained the connection: it answered all it
			// received before this close.
			c.mu.Lock()
			c.drained = true
			c.mu.Unlock()
			return fmt.Errorf("%w: %w", acp.ErrDrained, e)
		}
		return e
	}
	return &CloseError{Code: int(websocket.StatusAbnormalClosure), Err: err}
}

// Close performs the close handshake and waits for the reader.
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.in.close()
		_ = c.ws.Close(websocket.StatusNormalClosure, "")
		c.cancel()
		<-c.done
		if c.client != nil {
			c.client.CloseIdleConnections()
		}
	})
	return nil
}
