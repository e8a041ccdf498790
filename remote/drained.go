package remote

// A connection the server drained (package gateway's Drain): it answered
// every request it received, then closed, and says so; what is still
// unanswered was never delivered (acp.ErrDrained).

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/engine"
)

// drainedMark ends what a drained gateway says about the connection: the
// 404 bodies of its requests and its WebSocket close reason (1001).
const drainedMark = "(drained)"

// isDrained: err is a 404 that names a drained connection.
func isDrained(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == http.StatusNotFound && strings.Contains(se.Body, drainedMark)
}

// drainedEnd ends the connection as drained (first: an end already under
// way keeps its reason).
func (c *httpConn) drainedEnd(err error) {
	c.mu.Lock()
	first := c.ctx.Err() == nil
	if first {
		c.drained = true
	}
	c.mu.Unlock()
	if first {
		_ = c.fatal(fmt.Errorf("%w: %w", acp.ErrDrained, err))
	}
}

// wasDrained: the connection ended drained, so a message whose POST
// failed since was not delivered, and is no write error (the client
// learns of the end from its reader, with acp.ErrDrained).
func (c *httpConn) wasDrained() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drained
}

// notDelivered is the write error of a message the server answered without
// forwarding it (404: it does not know the connection). It wraps
// engine.ErrNotWritten, which tells the client the agent cannot have seen
// it; Write returns it only when nothing of its buffer was sent.
type notDelivered struct{ err error }

func (e notDelivered) Error() string   { return e.err.Error() }
func (e notDelivered) Unwrap() []error { return []error{e.err, engine.ErrNotWritten} }
