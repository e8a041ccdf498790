package remote

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// Options configure both transports. The zero value is ready: a cookie jar
// of the connection's own, a 64 MiB message bound, 128 MiB for all the
// unfinished messages of a connection, 64 session streams, a 60 s request
// timeout, TLS as Go verifies it, and plain http/ws to loopback only.
type Options struct {
	// Header is sent with every request (POST, GET, DELETE, the WebSocket
	// handshake): a bearer token, an API key. The transport's own headers
	// (Content-Type, Accept, Acp-Connection-Id, Acp-Session-Id and the
	// WebSocket handshake's) take precedence over the same names here.
	Header http.Header

	// HTTPClient makes the requests. Nil means a client of the transport's
	// own built from TLSConfig, which reads at most 1 MiB of a response's
	// headers (Go's default is 10 MiB). Its Jar, when set and Jar is nil, keeps the
	// cookies; its CheckRedirect is kept and runs after the transport's own
	// redirect rules. For WebSocket its Transport must speak HTTP/1.1 to the
	// server (the upgrade is an HTTP/1.1 mechanism) and its Timeout must be
	// zero or it bounds the whole connection.
	HTTPClient *http.Client

	// TLSConfig configures TLS for the client the transport builds; it is
	// an error to set both TLSConfig and HTTPClient.
	TLSConfig *tls.Config

	// Jar keeps the cookies the server sets and sends them back on every
	// request of the connection, as the RFD requires (load balancers use
	// them for sticky sessions). Pass one jar to several transports to keep
	// the affinity across reconnects. Nil means a fresh jar per connection
	// (or the HTTPClient's own Jar).
	Jar http.CookieJar

	// AllowInsecure allows plain http:// and ws:// URLs to hosts other than
	// loopback. Without it they are refused with ErrInsecureURL: a bearer
	// token or the agent's traffic must not cross a network in clear text
	// by accident.
	AllowInsecure bool

	// MaxMessageBytes bounds what the transport buffers of one message from
	// the server: its buffer doubles as the message arrives but never past
	// this bound. Zero means 64 MiB, acp.Limits.MaxLineBytes' default. A
	// message up to it is passed on whole; a larger one is passed on as it
	// arrives (over Streamable HTTP, holding the other streams back until it
	// ends), so the client's own Limits.MaxLineBytes decides, exactly as for
	// an over-long line on stdio: the message is skipped and only the call
	// it answered fails with acp.ErrLineTooLong.
	MaxMessageBytes int

	// RequestTimeout bounds each HTTP request until its response headers,
	// and then again its body unless it is an SSE stream the transport
	// accepted: a POST, the opening of an SSE stream, the DELETE, the
	// WebSocket handshake. Zero means 60 s (the TypeScript server makes a
	// POST wait up to 60 s while the client is behind on its output;
	// initialize includes the agent's start). A 2xx POST whose body does
	// not arrive in time still counts as sent (its body is dropped); an
	// error status whose body does not arrive is reported with what came
	// of it. It does not bound an open SSE stream or WebSocket, which may
	// idle for hours.
	RequestTimeout time.Duration

	// MaxBufferedBytes bounds what one Streamable HTTP connection holds of
	// unfinished messages, across all its SSE streams and response bodies
	// together: each stream's message counts its buffer's capacity beyond
	// its first 64 KiB (which stays outside, so that a small answer is
	// never refused because another stream holds a big message), and
	// both buffers for the moment one grows into the other. Zero means
	// twice MaxMessageBytes (128 MiB by default): one message can grow to
	// MaxMessageBytes (its last growth holds at most 1.75 × that) while
	// the others are small; set it lower than 1.75 × MaxMessageBytes and
	// a single message can exceed it. Past it the
	// connection ends: the client's pending calls fail with an error
	// wrapping acp.ErrConnClosed and ErrBufferLimit. (A message over
	// MaxMessageBytes is passed on as it arrives and holds nothing.)
	// WebSocket holds one message at a time and ignores it.
	MaxBufferedBytes int

	// MaxSessions bounds the session SSE streams one Streamable HTTP
	// connection opens (each is a GET held open, a TCP connection under
	// HTTP/1.1, and a reader). Zero means 64, the gateway's own default.
	// A stream opens only for a session the client asked for: one named by
	// the answer to its own session/new, session/load, session/resume or
	// session/fork, or one the client sends a message for. Past the bound
	// no stream opens; the client's requests for that session fail with an
	// error wrapping ErrTooManySessions, and the connection and its other
	// sessions live on. A session the agent closed (it answered the
	// client's session/close with a result) gives its stream back. WebSocket carries every session on its one socket
	// and ignores it.
	MaxSessions int
}

// ErrInsecureURL: a plain http:// or ws:// URL to a host that is not
// loopback without Options.AllowInsecure, or a redirect from https to http.
var ErrInsecureURL = errors.New("acp/remote: insecure URL")

// ErrTooManySessions: a session's stream was not opened because the
// connection has Options.MaxSessions open already.
var ErrTooManySessions = errors.New("acp/remote: too many sessions on one connection")

const (
	defaultMaxMessageBytes = 64 << 20
	defaultRequestTimeout  = 60 * time.Second
	defaultMaxSessions     = 64
	// maxIDBytes bounds an id the server chooses that the transport sends
	// back in a header (Acp-Connection-Id, Acp-Session-Id), as the
	// gateway bounds them.
	maxIDBytes = 1024
	// maxErrorBody is how much of an error response's body is read and
	// kept for the error: it is diagnostic text, not a message.
	maxErrorBody = 8 << 10
	maxRedirects = 10
	// maxResponseHeader bounds a response's headers for a client the
	// transport builds (Options.HTTPClient's are its own affair).
	maxResponseHeader = 1 << 20
)

func (o *Options) maxMessage() int {
	if o.MaxMessageBytes <= 0 {
		return defaultMaxMessageBytes
	}
	return o.MaxMessageBytes
}

func (o *Options) maxBuffered() int {
	if o.MaxBufferedBytes <= 0 {
		return 2 * o.maxMessage()
	}
	return o.MaxBufferedBytes
}

func (o *Options) maxSessions() int {
	if o.MaxSessions <= 0 {
		return defaultMaxSessions
	}
	return o.MaxSessions
}

// headerID checks an id the server chose before the transport sends it in
// a header: at most maxIDBytes, and nothing Go refuses to send in a header
// value (a control byte would make every request carrying it fail).
func headerID(id string) error {
	if id == "" || len(id) > maxIDBytes {
		return fmt.Errorf("%d bytes, want 1 to %d", len(id), maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("control byte %#02x at %d", c, i)
		}
	}
	if id[0] == ' ' || id[len(id)-1] == ' ' {
		return errors.New("a leading or trailing space, which a header drops")
	}
	return nil
}

func (o *Options) timeout() time.Duration {
	if o.RequestTimeout <= 0 {
		return defaultRequestTimeout
	}
	return o.RequestTimeout
}

// checkURL parses raw and applies the scheme rule: secure is the scheme that
// is always allowed ("https" or "wss"), plain the one allowed to loopback
// or with AllowInsecure.
func checkURL(raw, secure, plain string, allowInsecure bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("acp/remote: %w", err)
	}
	switch u.Scheme {
	case secure:
	case plain:
		if !allowInsecure && !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%w: %s to a host that is not loopback (set Options.AllowInsecure to allow it)", ErrInsecureURL, u.Redacted())
		}
	default:
		return nil, fmt.Errorf("acp/remote: %s wants a %s:// or %s:// URL, got %q", map[string]string{"https": "Streamable HTTP", "wss": "WebSocket"}[secure], secure, plain, u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("acp/remote: %s has no host", u.Redacted())
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpClient returns the client the transport uses: the caller's (copied,
// so its CheckRedirect and Jar can be wrapped) or one of its own. http1
// builds one that never negotiates HTTP/2, for the WebSocket upgrade.
func (o *Options) httpClient(http1 bool) (*http.Client, error) {
	var c http.Client
	switch {
	case o.HTTPClient != nil && o.TLSConfig != nil:
		return nil, errors.New("acp/remote: set Options.TLSConfig or Options.HTTPClient, not both")
	case o.HTTPClient != nil:
		c = *o.HTTPClient
	default:
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Go reads up to 10 MiB of a response's headers by default, on
		// every request; an agent endpoint has no use for more than a few
		// KiB (cookies included).
		tr.MaxResponseHeaderBytes = maxResponseHeader
		if o.TLSConfig != nil {
			tr.TLSClientConfig = o.TLSConfig.Clone()
		}
		if http1 {
			// A non-nil empty map turns HTTP/2 off.
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			tr.ForceAttemptHTTP2 = false
		} else {
			// The RFD requires HTTP/2; Go negotiates it over TLS (ALPN).
			// Plain http stays HTTP/1.1: the TypeScript SDK's server
			// (node:http) speaks nothing else, and neither does any
			// reverse proxy that has not been told to.
			tr.ForceAttemptHTTP2 = true
		}
		c.Transport = tr
	}
	if o.Jar != nil {
		c.Jar = o.Jar
	}
	if c.Jar == nil {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, err
		}
		c.Jar = jar
	}
	next := c.CheckRedirect
	allowInsecure := o.AllowInsecure
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("acp/remote: stopped after %d redirects", maxRedirects)
		}
		if err := redirectAllowed(via[0], req, allowInsecure); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c, nil
}

// redirectAllowed keeps a redirect as safe as the URL the caller gave:
// never from https to http, plain http only where the first URL could have
// gone, and a POST only by 307/308 (Go turns a POST redirected by 301, 302
// or 303 into a GET, which would drop the message and open nothing).
func redirectAllowed(first, next *http.Request, allowInsecure bool) error {
	orig, u := first.URL, next.URL
	switch {
	case (orig.Scheme == "https" || orig.Scheme == "wss") && u.Scheme != "https" && u.Scheme != "wss":
		return fmt.Errorf("%w: %s redirected to %s", ErrInsecureURL, orig.Redacted(), u.Redacted())
	case u.Scheme == "http" && !allowInsecure && !isLoopback(u.Hostname()):
		return fmt.Errorf("%w: %s redirected to %s", ErrInsecureURL, orig.Redacted(), u.Redacted())
	case first.Method != next.Method:
		return fmt.Errorf("acp/remote: %s %s was redirected as a %s to %s; only 307 and 308 keep a request's method", first.Method, orig.Redacted(), next.Method, u.Redacted())
	}
	return nil
}

// header returns the caller's headers with the transport's on top.
func (o *Options) header(own map[string]string) http.Header {
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range own {
		h.Set(k, v)
	}
	return h
}
