package gateway

import (
	"log/slog"
	"time"
)

// Options configure a [Gateway]. The zero value is safe on loopback: it
// serves only loopback Host names (DNS rebinding gets 403) and same-origin
// browser pages, and bounds everything a client can make it hold. It does
// not authenticate: set Token (or put the gateway behind a proxy that
// authenticates, and list its name in AllowedHosts) before listening
// anywhere but loopback. Every limit counts what the gateway retains; each
// says what happens when it is reached.
type Options struct {
	// Token, if set, is required on every request as
	// "Authorization: Bearer <Token>"; a request without it, or with
	// another, gets 401 and reaches no agent.
	Token string

	// AllowedOrigins are host patterns (path.Match syntax, as
	// "*.example.com"; "*" allows any) of the browser origins allowed
	// besides the gateway's own. A request with an Origin header whose host
	// is neither the request's Host nor matches a pattern gets 403; a
	// request without Origin (not from a browser) is not checked. This is
	// what keeps a web page from opening a WebSocket to an agent, since
	// WebSocket upgrades are not subject to CORS.
	AllowedOrigins []string
	// AllowedHosts are host patterns (path.Match syntax, no port; "*"
	// allows any) the request's Host may match; a request whose Host is
	// not allowed gets 403 and reaches no agent. This is the defence
	// against DNS rebinding: a web page that makes its own DNS name
	// resolve to 127.0.0.1 reaches a loopback gateway with that name as
	// Host. Without a Token, the loopback names (localhost, 127.0.0.0/8,
	// ::1) are allowed, and AllowedHosts adds to them (a reverse proxy's
	// public name). With a Token, any Host is allowed unless AllowedHosts
	// is set, and then only those.
	AllowedHosts []string

	// MaxConnections bounds the agents alive at once: an agent counts from
	// the start of its dial until it has exited (the Close of the DialFunc's
	// conn returned; for CommandAgent, the process group is gone), not
	// merely until its connection closed, so no client behaviour can have
	// more agents running. Zero means 64. Past it, an initialize POST or a
	// WebSocket upgrade gets 503 with Retry-After and starts nothing. (A
	// WebSocket upgrade that is not a valid handshake gets 4xx before any
	// agent starts.)
	MaxConnections int
	// MaxSessions bounds the session streams one connection keeps (those
	// with a receiver, or with messages waiting for one). Zero means 64.
	// Past it a GET for a new session gets 429; an agent message for a new
	// session closes the connection with [ErrTooManySessions].
	MaxSessions int
	// MaxPendingRequests bounds the client requests one connection has
	// forwarded and the agent has not answered yet. Zero means 1024. Past
	// it a POST of a request gets 429 and is not forwarded. It also bounds
	// the agent's requests the gateway remembers until the client answers
	// (to check the answer's Acp-Session-Id): past it, answers to further
	// ones are forwarded unchecked.
	MaxPendingRequests int
	// MaxBodyBytes bounds one client message: a POST body, a WebSocket
	// frame. Zero means 16 MiB. A larger POST gets 413; a larger frame
	// closes the WebSocket with status 1009 (message too big).
	MaxBodyBytes int64
	// MaxConnectionBodyBytes bounds the POST body bytes one connection
	// holds at once: bodies being read, and messages read but not yet
	// written to its agent (queued behind another, or stuck on an agent
	// that does not read). A body counts its buffer as it grows, not its
	// announced length. Zero means 16 MiB; never less than MaxBodyBytes.
	// Past it a POST gets 429 with Retry-After and the rest of its body is
	// not read (the HTTP/1.1 connection is closed after the answer).
	MaxConnectionBodyBytes int64
	// MaxGatewayBodyBytes bounds the same over every POST the gateway is
	// reading or forwarding, including initialize and bodies that name no
	// connection. Zero means 64 MiB; never less than MaxBodyBytes. Past it
	// a POST gets 503 with Retry-After, the rest of its body not read.
	// (A WebSocket holds one frame, at most MaxBodyBytes, while it waits
	// for its agent: bounded by MaxConnections and AgentWriteTimeout.)
	MaxGatewayBodyBytes int64
	// AgentWriteTimeout bounds how long a client message may take to reach
	// the agent's stdin once the gateway has read it, waiting behind other
	// messages included. Zero means 30s. Past it the agent is taken as
	// stuck (it does not read its input): the POST gets 504, the
	// connection closes with [ErrAgentStalled] (a WebSocket with 1011),
	// and the agent is shut down.
	AgentWriteTimeout time.Duration
	// MaxMessageBytes bounds one line of the agent's output. Zero means
	// 64 MiB (the client's own acp.Limits.MaxLineBytes). A longer line
	// closes the connection with [ErrAgentMessageTooLarge].
	MaxMessageBytes int
	// MaxBufferedBytes bounds the agent output one connection holds for its
	// client, over all its streams, counting a message until it is written
	// to the client. Zero means 16 MiB. At the bound the gateway stops
	// reading the agent's output (the agent blocks on its stdout); if the
	// client takes nothing for StallTimeout, the connection closes with
	// [ErrStalled]. One message may overshoot the bound. What is counted is
	// what is retained, within a factor of two: the gateway queues copies
	// of the agent's lines, never the blocks it read them in; a burst's
	// copies share pooled 16 KiB blocks, each at least half full.
	MaxBufferedBytes int
	// StallTimeout is how long a client may take nothing while output
	// waits for it: full buffers (above), or one write to an SSE stream or
	// WebSocket that the client does not read. Zero means 30s. Then the
	// connection closes with [ErrStalled].
	StallTimeout time.Duration
	// IdleTimeout reaps an HTTP connection that has had no request in
	// flight and no stream open for this long: it closes with [ErrIdle]
	// and its agent is shut down. Zero means 5 minutes. (A WebSocket is
	// watched by pings instead; see PingInterval.)
	IdleTimeout time.Duration
	// ReadTimeout bounds reading one POST body (a slowloris client); past
	// it the request fails and forwards nothing. Zero means 30s.
	ReadTimeout time.Duration
	// InitializeTimeout bounds starting the agent and waiting for its
	// initialize response, from the initialize POST or the WebSocket
	// upgrade: a WebSocket that sends no initialize is bounded by it too.
	// Zero means 60s. Past it the POST gets 504, the WebSocket closes (1008
	// if the client sent no initialize, 1011 if the agent did not answer),
	// the connection closes with [ErrInitializeTimeout], and the agent is
	// shut down.
	InitializeTimeout time.Duration
	// KeepAliveInterval is how often an idle SSE stream gets a comment line
	// so that proxies keep it open (every stream also gets one when it
	// opens). Zero means 15s (the TypeScript server's interval).
	KeepAliveInterval time.Duration
	// PingInterval is how often a WebSocket is pinged; a ping unanswered
	// within the interval closes the connection (a half-open socket).
	// Zero means 30s.
	PingInterval time.Duration

	// OnClose, if set, is called once per connection when it closes, with
	// its Acp-Connection-Id and why (errors.Is against ErrStalled, ErrIdle,
	// ErrClientClosed, ...), before its agent is shut down; for metrics and
	// audit logs. It runs on the goroutine that closed the connection and
	// must not block.
	OnClose func(connectionID string, reason error)

	// Logger receives one line per connection closed for a reason other
	// than the client's DELETE or close, and per message dropped. Nil
	// logs nothing.
	Logger *slog.Logger
}

// Defaults of [Options].
const (
	DefaultMaxConnections         = 64
	DefaultMaxSessions            = 64
	DefaultMaxPendingRequests     = 1024
	DefaultMaxBodyBytes           = 16 << 20
	DefaultMaxConnectionBodyBytes = 16 << 20
	DefaultMaxGatewayBodyBytes    = 64 << 20
	DefaultAgentWriteTimeout      = 30 * time.Second
	DefaultMaxMessageBytes        = 64 << 20
	DefaultMaxBufferedBytes       = 16 << 20
	DefaultStallTimeout           = 30 * time.Second
	DefaultIdleTimeout            = 5 * time.Minute
	DefaultReadTimeout            = 30 * time.Second
	DefaultInitializeTimeout      = 60 * time.Second
	DefaultKeepAliveInterval      = 15 * time.Second
	DefaultPingInterval           = 30 * time.Second
)

// maxIDBytes bounds a JSON-RPC id or session id the gateway keeps as a
// routing key (the TypeScript server's maxIdLength, 1024). Longer: 400.
const maxIDBytes = 1024

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxConnections, DefaultMaxConnections)
	def(&o.MaxSessions, DefaultMaxSessions)
	def(&o.MaxPendingRequests, DefaultMaxPendingRequests)
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxConnectionBodyBytes <= 0 {
		o.MaxConnectionBodyBytes = DefaultMaxConnectionBodyBytes
	}
	if o.MaxGatewayBodyBytes <= 0 {
		o.MaxGatewayBodyBytes = DefaultMaxGatewayBodyBytes
	}
	// A body MaxBodyBytes allows must fit in flight.
	o.MaxConnectionBodyBytes = max(o.MaxConnectionBodyBytes, o.MaxBodyBytes)
	o.MaxGatewayBodyBytes = max(o.MaxGatewayBodyBytes, o.MaxBodyBytes)
	defD(&o.AgentWriteTimeout, DefaultAgentWriteTimeout)
	def(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&o.MaxBufferedBytes, DefaultMaxBufferedBytes)
	defD(&o.StallTimeout, DefaultStallTimeout)
	defD(&o.IdleTimeout, DefaultIdleTimeout)
	defD(&o.ReadTimeout, DefaultReadTimeout)
	defD(&o.InitializeTimeout, DefaultInitializeTimeout)
	defD(&o.KeepAliveInterval, DefaultKeepAliveInterval)
	defD(&o.PingInterval, DefaultPingInterval)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
