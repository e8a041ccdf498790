package remote

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/acpclient/acp/internal/agenttext"
)

// StatusError is an HTTP response the transport could not use: a POST, an
// SSE stream or a WebSocket handshake answered with another status than
// the RFD's. When it ends the connection, the client's pending calls fail
// with an error wrapping acp.ErrConnClosed and this (errors.As finds it).
//
// What each status means, as the RFD and the TypeScript SDK's server use
// them: 400 a missing or mismatched Acp-Connection-Id or Acp-Session-Id, or
// a malformed body; 401/403 credentials refused; 404 an unknown connection
// (it was closed or the server restarted) or session; 406 an SSE GET
// without text/event-stream; 409 a stream that already has a reader; 413 a
// body over the server's limit; 415 a POST that is not application/json;
// 426 a server without WebSocket; 501 a batch; 5xx the server or a gateway
// in front of it failed.
type StatusError struct {
	Method     string // POST, GET, DELETE
	URL        string // redacted
	StatusCode int
	Status     string // "404 Not Found"
	Body       string // the start of the response body (8 KiB at most), as sent
	What       string // what the request was for: "initialize", "the connection's SSE stream"...
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("acp/remote: %s (%s %s): %s", e.What, e.Method, e.URL, e.Status)
	if b := strings.TrimSpace(e.Body); b != "" {
		// The body is the server's text: cut and escaped like agent text.
		msg += ": " + serverText(b)
	}
	return msg
}

func statusError(what string, resp *http.Response) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &StatusError{
		Method:     resp.Request.Method,
		URL:        resp.Request.URL.Redacted(),
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Body:       string(body),
		What:       what,
	}
}

// CloseError is how a WebSocket connection ended when the server closed it
// (or it broke: Code 1006, no close frame). The client's pending calls fail
// with an error wrapping acp.ErrConnClosed and this.
type CloseError struct {
	Code   int    // the close code: 1000 normal, 1001 going away, 1009 too big, 1011 server error...
	Reason string // the server's reason text
	Err    error  // the underlying error, if any
}

func (e *CloseError) Error() string {
	msg := fmt.Sprintf("acp/remote: WebSocket closed with code %d", e.Code)
	if e.Reason != "" {
		msg += ": " + serverText(e.Reason)
	}
	if e.Err != nil && e.Code == 1006 {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err — except an end of file (a socket that dropped
// without a close frame), which the client would take for the agent's
// orderly end of output, and which Code 1006 already says.
func (e *CloseError) Unwrap() error {
	if errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) {
		return nil
	}
	return e.Err
}

// serverText is text the server chose, as an error shows it: cut, and
// quoted when it holds control characters, so that it cannot drive a
// terminal.
func serverText(s string) string {
	s = agenttext.Text(s)
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) {
		return strconv.Quote(s)
	}
	return s
}
