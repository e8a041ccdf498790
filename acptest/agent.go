package acptest

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/acpclient/acp/schema"
)

// Options configures an [Agent]. The zero value is a usable agent that needs
// no authentication, has no modes or config options, and answers every
// prompt with stopReason "end_turn" and no updates.
type Options struct {
	// AgentInfo is sent as agentInfo in the initialize result. Nil means
	// {"name":"acptest","version":"0.0.0"}.
	AgentInfo any
	// Capabilities is sent as agentCapabilities. Nil means loadSession,
	// session list/resume/close/delete, and image, audio and embedded-context
	// prompts (plus auth.logout when AuthMethods is set).
	Capabilities any
	// ProtocolVersion is answered to initialize whatever the client asked
	// for, so that a mismatch can be tested. Zero means 1.
	ProtocolVersion int
	// Version is the ACP version the agent speaks: 1 (zero selects it) or
	// 2. A v2 agent answers an initialize offering less than 2 with
	// -32022, answers in the v2 shape (info, capabilities, auth methods by
	// methodId), and runs each turn the v2 way: it reports running, echoes
	// the prompt as a user_message, answers session/prompt {messageId} at
	// once, runs OnPrompt after that and reports idle with its stop reason
	// (an error becomes idle "error" with the error). The scenario API is
	// the same: the updates a script sends are put in v2 form (a tool_call
	// becomes a tool_call_update upsert, a chunk without a messageId gets
	// the turn's) and RequestPermission sends the v2 request (title,
	// subject). As the real v2 agents do, a turn reports requires_action
	// while its permission request is pending (running again once it is
	// answered, unless cancelled), and session/cancel withdraws a pending
	// permission request with $/cancel_request (the script still gets the
	// client's answer). Unstable: ACP v2 is in Preview; may change.
	Version int
	// AnyVersion makes the agent speak, on each connection, the version
	// the client's initialize offers: v2 (as described under Version)
	// when it offers 2 or more, v1 otherwise; Version is then ignored.
	// Sessions belong to the agent whatever the version of the connection
	// that made them; history recorded in v1 form is put in v2 form when
	// a v2 client replays it. Unstable: ACP v2 is in Preview; may change.
	AnyVersion bool
	// NoInitializeCheck lets requests through before initialize; by default
	// they fail with -32600, as in the reference TypeScript agent.
	NoInitializeCheck bool

	// AuthMethods is sent as authMethods (raw objects, any shape).
	AuthMethods []any
	// RequireAuth makes every session/* request fail with -32000 until the
	// client calls authenticate with an accepted method id. The state is
	// kept by the Agent across connections; see [Agent.SetAuthenticated].
	RequireAuth bool
	// AcceptAuth decides authenticate requests. Nil accepts the id of any
	// entry of AuthMethods whose type is absent or "agent" and rejects other
	// ids with -32602. A returned *Error is sent as is.
	AcceptAuth func(methodID string) error

	// Modes is the SessionModeState ({currentModeId, availableModes})
	// returned by session/new, load and resume. Each session keeps its own
	// copy, changed by session/set_mode and [Session.Mode].
	Modes any
	// ConfigOptions is the SessionConfigOption list returned by session/new,
	// load and resume. Each session keeps its own copy, changed by
	// session/set_config_option (which answers the full list) and
	// [Session.ConfigOptions]. An option's id is sent as the connection's
	// version names it: "id" in v1, "configId" in v2 (either is accepted
	// here).
	ConfigOptions any

	// Sessions are SessionInfo objects listed by session/list (before the
	// sessions created on this agent) and accepted by session/load and
	// session/resume.
	Sessions []any
	// PageSize limits session/list pages; further pages are reached with
	// nextCursor. Zero means one page.
	PageSize int
	// History maps a session id to the updates session/load replays before
	// answering. A session listed here can be loaded. Sessions created on
	// this agent also record their conversation (prompts as
	// user_message_chunk, and message, thought, tool-call and plan updates)
	// and replay it on load.
	History map[string][]any

	// NewSessionID, if set, returns the id of each session that
	// session/new creates, for an agent whose sessions outlive its process
	// (the ids must then not repeat across processes). Nil means "sess-1",
	// "sess-2", ... counted by the Agent. It is called with no lock held
	// and must return an id unique to the agent.
	NewSessionID func() string
	// OpenSession, if set, is asked by session/load and session/resume
	// for a session the agent does not hold (not created or opened on it
	// and not deleted), before Sessions and History: it returns the
	// session as stored elsewhere (on disk, say), or nil and a nil error
	// when it knows no such session (Sessions and History are consulted
	// next). A non-nil error fails the request (an *Error is sent as is,
	// any other error as -32603 with its text). It runs on the request's
	// goroutine with no lock held.
	OpenSession func(sessionID string) (*StoredSession, error)

	// OnNewSession, if set, runs in the request's goroutine after the
	// session exists and before the session/new response is written; updates
	// it sends therefore precede the response, as with some real agents.
	OnNewSession func(s *Session)
	// OnLoadSession, if set, runs for session/load (after the history
	// replay) and session/resume, before the response (in v2 before the
	// current-state snapshot that ends every resume).
	//
	// A session that session/close closed on a connection refuses prompts
	// there (-32002) until a load or resume on it opens it again.
	OnLoadSession func(s *Session)
	// OnCloseSession, if set, runs for session/close after the session's
	// turns were cancelled and before the response: what it sends (the
	// end of background work, which closing stops) precedes the answer,
	// after which nothing more is sent for the session.
	OnCloseSession func(s *Session)
	// OnReplay, if set, runs before the i-th update (from 0) a session/load
	// (or v2's session/resume from the start) replays, on the request's
	// goroutine: a script may kill the agent mid-replay there
	// (Session.Crash, Agent.Kill).
	OnReplay func(s *Session, i int)
	// Restore says which ways back to an existing session the agent
	// offers (session/resume, session/load), for tests of clients that
	// restart agents: the zero value offers both. It changes the default
	// capabilities (when Capabilities is nil) and answers a method it
	// leaves out -32601. ACP v1 only.
	Restore Restore
	// OnPrompt is the turn script. It runs in its own goroutine per
	// session/prompt and may block; the agent keeps serving other requests
	// and notifications meanwhile. Its stopReason is sent as the result
	// (any string goes out as given, so unknown reasons can be tested);
	// "" means [schema.StopReasonCancelled] if the turn was cancelled and
	// [schema.StopReasonEndTurn] otherwise. A non-nil error is sent as an error
	// reply instead. Nil OnPrompt ends every turn at once with "end_turn".
	OnPrompt func(t *Turn) (stopReason schema.StopReason, err error)
	// OnExtMethod answers requests the agent does not implement (extension
	// methods starting with "_", and any other unknown method). It runs in
	// its own goroutine; ctx is cancelled by a $/cancel_request for the
	// request or when the connection ends. Nil answers -32601.
	OnExtMethod func(ctx context.Context, c *Conn, method string, params json.RawMessage) (result any, err error)
	// OnNotification receives notifications the agent does not handle
	// itself (anything but session/cancel and $/cancel_request). It runs on
	// the connection's read goroutine, in arrival order, and must not block.
	OnNotification func(c *Conn, method string, params json.RawMessage)

	// OnCancel, if set, runs for every session/cancel the client sends,
	// after the session's running turns were marked cancelled: for any
	// session id, including a child session's (which has no turn here;
	// a script answers by reporting the child idle on its parent). It
	// runs on the connection's read goroutine, like OnNotification, and
	// must not block.
	OnCancel func(c *Conn, sessionID string)
	// Methods overrides built-in handling of any client→agent request by
	// method name (e.g. to make session/new fail or never answer; see
	// [NeverAnswer]). The function runs in its own goroutine.
	Methods map[string]MethodFunc

	// StringIDs makes the agent's own requests use string ids ("req-0",
	// "req-1", …) instead of numbers counted from 0.
	StringIDs bool
	// CRLF ends every frame the agent writes with "\r\n" instead of "\n".
	CRLF bool
	// Stderr receives the agent's log output in-process (nil discards it).
	// In subprocess mode the agent writes to the process's stderr.
	Stderr io.Writer
	// StderrFlood writes this many bytes of log lines to stderr when a
	// connection starts, before reading anything: a client that does not
	// drain stderr then stalls the agent, as with a real chatty agent.
	StderrFlood int
	// IgnoreStdinEOF (subprocess mode) keeps the process running after
	// stdin closes, like agents that must be killed.
	IgnoreStdinEOF bool
	// SpawnGrandchild (subprocess mode) starts a child process that shares
	// the agent's stdout and stderr and sleeps until killed, like an npx
	// wrapper's agent. Its pid is logged to stderr as
	// "acptest: grandchild pid=N" and sent in the initialize result's
	// _meta.acptest.grandchildPid.
	SpawnGrandchild bool
	// DisableTranscript stops recording frames (for benchmarks and floods).
	DisableTranscript bool
}

// StoredSession is a session kept outside the agent, returned by
// [Options.OpenSession].
type StoredSession struct {
	// Cwd is the session's working directory when the request names none.
	Cwd string
	// Title is listed by session/list once the session is open.
	Title string
	// History is replayed by session/load (and v2's session/resume from
	// the start), like [Options.History]: session/update params' update
	// objects, in order.
	History []json.RawMessage
	// Turns is the number of prompt turns the session has had: the next
	// turn's [Turn.Number] is Turns+1, so that ids a script derives from
	// it do not repeat those of the history.
	Turns int
}

// MethodFunc answers one client request. A nil result is sent as {}.
type MethodFunc func(ctx context.Context, c *Conn, params json.RawMessage) (result any, err error)

// NeverAnswer is a [MethodFunc] that never replies: it blocks until the
// connection ends. Use it in [Options.Methods] to simulate a hung agent.
func NeverAnswer(ctx context.Context, c *Conn, params json.RawMessage) (any, error) {
	c.Hang()
	return nil, nil
}

// Agent is a scriptable ACP agent for tests of ACP clients, the way
// net/http/httptest.Server is a server for tests of HTTP clients. It speaks
// newline-delimited JSON-RPC 2.0 over any byte stream ([Agent.Serve]), over
// in-process pipes ([Agent.Pipe]) or as a real subprocess ([Command]).
//
// An Agent may serve several connections, one after another or at once;
// sessions, authentication state and the transcript belong to the Agent and
// outlive a connection, as they would for a real agent's on-disk state.
//
// All methods are safe for concurrent use.
type Agent struct {
	opts Options

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	errMu sync.Mutex // serialises stderr writes

	mu          sync.Mutex
	rec         recorder
	conns       map[*Conn]struct{}
	sessions    map[string]*sessionState
	order       []string // session ids in creation order, for session/list
	deleted     map[string]bool
	nextSession int
	authed      bool
	closed      bool

	replay        []Frame // set by Replay
	subprocess    bool
	grandchildPID int
}

// New returns an agent configured by opts; nil opts is the zero Options.
// The agent does nothing until it is served.
func New(opts *Options) *Agent {
	a := &Agent{
		conns:    make(map[*Conn]struct{}),
		sessions: make(map[string]*sessionState),
		deleted:  make(map[string]bool),
	}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.RequireAuth && a.opts.AuthMethods == nil && a.opts.AcceptAuth == nil {
		a.opts.AuthMethods = []any{map[string]any{"id": "acptest-login", "name": "Log in (acptest)"}}
	}
	a.rec = recorder{start: time.Now(), off: a.opts.DisableTranscript}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a
}

// Serve speaks ACP on r (client→agent) and w (agent→client) until r reaches
// EOF or fails, ctx is done, or the agent is closed. It then waits for every
// request handler and script of the connection to return. If ctx is done or
// the agent is closed while reading, Serve closes r and w when they are
// io.Closers, to unblock them. It returns nil after EOF or Close.
//
// Serve reads on the calling goroutine; each request is answered on its own
// goroutine, so a blocked turn script never stops the agent from answering
// session/set_mode or noticing session/cancel. Serve never writes on the
// reading goroutine, so a client that writes without reading cannot
// deadlock it.
func (a *Agent) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.wg.Add(1)
	c := newConn(a, r, w)
	a.conns[c] = struct{}{}
	a.mu.Unlock()
	defer a.wg.Done()
	defer func() {
		a.mu.Lock()
		delete(a.conns, c)
		a.mu.Unlock()
	}()

	stop := context.AfterFunc(ctx, c.abort)
	defer stop()
	err := c.serve()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Pipe starts serving a new connection in-process over a pair of io.Pipes
// and returns the client's ends: read the agent's stdout from fromAgent and
// write its stdin to toAgent. Closing toAgent is stdin EOF: the agent
// finishes its handlers and then closes fromAgent. [Agent.Close] tears the
// connection down at once.
func (a *Agent) Pipe() (fromAgent io.ReadCloser, toAgent io.WriteCloser) {
	inR, inW := io.Pipe()   // client → agent
	outR, outW := io.Pipe() // agent → client
	a.mu.Lock()
	closed := a.closed
	if !closed {
		a.wg.Add(1)
	}
	a.mu.Unlock()
	if closed {
		inR.Close()
		outW.Close()
		return outR, inW
	}
	go func() {
		defer a.wg.Done()
		_ = a.Serve(a.ctx, inR, outW)
		outW.Close()
		inR.Close()
	}()
	return outR, inW
}

// Close stops every connection at once (closing the streams it can),
// fails the agent's pending requests, and waits for all handler and script
// goroutines to return. Scripts should watch [Conn.Context] so that they
// return. Close must not be called from a script. It is idempotent.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closed = true
	conns := make([]*Conn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	a.cancel()
	for _, c := range conns {
		c.abort()
	}
	a.wg.Wait()
	return nil
}

// Authenticated reports whether a client has authenticated (see
// [Options.RequireAuth]).
func (a *Agent) Authenticated() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.authed
}

// SetAuthenticated sets the authentication state, for example to simulate a
// terminal login that happened out of band before the client reconnects.
func (a *Agent) SetAuthenticated(ok bool) {
	a.mu.Lock()
	a.authed = ok
	a.mu.Unlock()
}
