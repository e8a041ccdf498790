package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/gateway"
)

// tokenEnv is where `acp serve` takes the bearer token from when --token
// is not given (a command line is visible to every user of the machine).
const tokenEnv = "ACP_SERVE_TOKEN"

var serveUsageHead = `usage: acp serve [flags] [--agent ID | -- AGENT_COMMAND [ARGS...]]

Serves the agent (the demo agent by default) to remote ACP clients on one
endpoint, both profiles of the RFD "Streamable HTTP & WebSocket transport":
POST/GET(SSE)/DELETE and WebSocket upgrade. One agent process per client
connection, shut down when the connection ends.

The first line on stdout is the endpoint's URL (with --listen 127.0.0.1:0,
the port bound); stderr then names it for both profiles (http:// and
ws://), and logs the pid of each agent process as it starts. SIGTERM,
SIGINT and SIGHUP drain, for a rolling restart: new connections get 503
and the health check 503 (a proxy sends them to another backend; see
docs/OPERATORS.md); on the open connections new requests are refused as
not delivered (a supervised client sends them again elsewhere) while the
running turns finish, each connection closing once its answers are
written, for at most --drain-timeout; then the listener closes, every
agent is shut down in stages, and it exits 0. GET --health-path (default
/healthz) answers 200 while serving, 503 while draining, with no token:
point the proxy's health check at it.

Off loopback a bearer token is required: --token or $` + tokenEnv + `; clients
send "Authorization: Bearer TOKEN". Without a token only loopback Host
names are served (localhost, 127.0.0.0/8, ::1; --allow-host adds more):
a web page reaching it through DNS rebinding gets 403. See docs/REMOTE.md.

` + serveLimits + `
flags:
`

// serveLimits states the gateway's defaults that acp serve keeps, from the
// gateway's own constants.
var serveLimits = fmt.Sprintf(`Limits (the gateway's defaults): --max-connections agent processes alive,
each counted until it has exited; a message (POST body, WebSocket frame)
of at most %d MiB (413); POST bodies in flight %d MiB per connection (429)
and %d MiB in all (503); a body read within %v (408); a message the agent
does not read from its stdin within %v fails with 504 and ends the
connection; a connection not initialized within %v is closed; a client
that takes none of its output for %v is disconnected.
`, gateway.DefaultMaxBodyBytes>>20, gateway.DefaultMaxConnectionBodyBytes>>20, gateway.DefaultMaxGatewayBodyBytes>>20,
	gateway.DefaultReadTimeout, gateway.DefaultAgentWriteTimeout, gateway.DefaultInitializeTimeout, gateway.DefaultStallTimeout)

type serveConfig struct {
	listen         string
	path           string
	token          string
	tlsCert        string
	tlsKey         string
	allowedOrigins multiFlag
	allowedHosts   multiFlag
	maxConnections int
	idleTimeout    time.Duration
	drainTimeout   time.Duration
	healthPath     string
	agent          []string
	registry       registryFlags
}

func parseServeFlags(args []string, stderr io.Writer) (*serveConfig, error) {
	sc := &serveConfig{}
	fs := flag.NewFlagSet("acp serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&sc.listen, "listen", "127.0.0.1:8765", "the address to listen on (host:port; port 0 picks one)")
	fs.StringVar(&sc.path, "path", "/acp", "the endpoint's path")
	fs.StringVar(&sc.token, "token", "", "require this bearer token (default $"+tokenEnv+"); required off loopback")
	fs.StringVar(&sc.tlsCert, "tls-cert", "", "serve HTTPS with this certificate file (PEM; with --tls-key)")
	fs.StringVar(&sc.tlsKey, "tls-key", "", "the certificate's private key file (PEM)")
	fs.Var(&sc.allowedOrigins, "allow-origin", "also allow browser pages of this origin host pattern (e.g. *.example.com; repeatable)")
	fs.Var(&sc.allowedHosts, "allow-host", "without a token, also accept this Host pattern besides the loopback names (e.g. a proxy's name; repeatable)")
	fs.IntVar(&sc.maxConnections, "max-connections", 0, fmt.Sprintf("agent processes alive at once, each counted until it has exited (default %d)", gateway.DefaultMaxConnections))
	fs.DurationVar(&sc.idleTimeout, "idle-timeout", 0, fmt.Sprintf("shut down an HTTP connection with no request or stream open this long (default %v)", gateway.DefaultIdleTimeout))
	fs.DurationVar(&sc.drainTimeout, "drain-timeout", 30*time.Second, "how long a drain waits for the running turns to finish")
	fs.StringVar(&sc.healthPath, "health-path", "/healthz", "serve the health check here: 200 while serving, 503 while draining (empty: none)")
	sc.registry.register(fs, stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsageHead)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	sc.agent = fs.Args()
	if sc.registry.listAgents {
		return nil, errors.New("serve takes no --list-agents")
	}
	if err := sc.registry.validate(&config{agent: sc.agent}); err != nil {
		return nil, err
	}
	if (sc.tlsCert == "") != (sc.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if !strings.HasPrefix(sc.path, "/") {
		return nil, fmt.Errorf("--path must start with /, not %q", sc.path)
	}
	if sc.healthPath != "" && (!strings.HasPrefix(sc.healthPath, "/") || sc.healthPath == sc.path) {
		return nil, fmt.Errorf("--health-path must start with / and differ from --path, not %q", sc.healthPath)
	}
	if sc.token == "" {
		sc.token = os.Getenv(tokenEnv)
	}
	host, _, err := net.SplitHostPort(sc.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %v", sc.listen, err)
	}
	if sc.token == "" && !isLoopbackHost(host) {
		return nil, fmt.Errorf("--listen %s is not loopback: a bearer token is required (--token or $%s)", sc.listen, tokenEnv)
	}
	return sc, nil
}

// isLoopbackHost: a loopback IP or "localhost". An empty host (":8765")
// means every interface, which is not loopback.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serve is `acp serve`: it returns the exit status.
func serve(args []string, stdout, stderr io.Writer) int {
	sc, err := parseServeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "acp serve:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	newCmd, err := sc.agentCommand(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "acp serve:", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	opts := &gateway.Options{
		Token:          sc.token,
		AllowedOrigins: sc.allowedOrigins,
		MaxConnections: sc.maxConnections,
		IdleTimeout:    sc.idleTimeout,
		Logger:         logger,
	}
	if sc.token == "" {
		// Without a token the gateway serves only loopback Host names
		// (localhost, 127.0.0.0/8, ::1: the defence against DNS
		// rebinding); --allow-host adds to them.
		opts.AllowedHosts = sc.allowedHosts
	}
	gw := gateway.New(dialLogged(newCmd, stderr, logger), opts)
	mux := http.NewServeMux()
	mux.Handle(sc.path, gw)
	if sc.healthPath != "" {
		mux.Handle(sc.healthPath, gw.Health())
	}
	srv := gateway.NewServer(mux)

	ln, err := net.Listen("tcp", sc.listen)
	if err != nil {
		fmt.Fprintln(stderr, "acp serve:", err)
		return 1
	}
	scheme := "http"
	if sc.tlsCert != "" {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s%s", scheme, ln.Addr().String(), sc.path)
	fmt.Fprintln(stdout, url)
	// The same endpoint's WebSocket profile, for clients that want it
	// (acp --url ws://...): on stderr, as stdout's one line is the contract.
	fmt.Fprintf(stderr, "acp serve: Streamable HTTP at %s, WebSocket at %s\n", url, "ws"+strings.TrimPrefix(url, "http"))
	served := make(chan error, 1)
	go func() {
		if sc.tlsCert != "" {
			served <- srv.ServeTLS(ln, sc.tlsCert, sc.tlsKey)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		fmt.Fprintln(stderr, "acp serve:", err)
		drain(gw, srv, sc.drainTimeout, stderr)
		return 1
	case <-ctx.Done():
	}
	stop()
	// The listener stays open while the running turns finish: over
	// Streamable HTTP their client's POSTs (a cancel, a permission
	// choice) and its return for each ended session stream may come on
	// new TCP connections, and a closed listener would send them to
	// another backend, which knows nothing of the connection. New
	// connections get 503 (a proxy configured as docs/deploy is retries
	// them on another backend) and the health check 503 (the proxy takes
	// this backend out). The proxy's idle keep-alive connections stay
	// open until the drain is over (drain: the server's Shutdown comes
	// after the gateway's): closing them now (SetKeepAlivesEnabled(false))
	// can close one just as the proxy's next POST arrives on it, which
	// net/http then serves, so the prompt reaches the agent, and cannot
	// answer; nginx resends such a POST to the other backend, whose 404
	// says "not delivered", and the turn would run twice
	// (gateway/resend.go covers a resend to this backend).
	fmt.Fprintln(stderr, "acp serve: draining")
	if !drain(gw, srv, sc.drainTimeout, stderr) {
		return 1
	}
	<-served
	return 0
}

// dialLogged is the gateway's dialer: it starts an agent process per
// connection (as gateway.CommandAgent does) and logs its pid, so that an
// operator can tell the connections' processes apart (and kill one).
func dialLogged(newCmd func(context.Context) (*exec.Cmd, error), stderr io.Writer, logger *slog.Logger) func(context.Context) (acp.Conn, error) {
	return func(ctx context.Context) (acp.Conn, error) {
		cmd, err := newCmd(ctx)
		if err != nil {
			return nil, err
		}
		agent := &gateway.CommandAgent{Command: func(context.Context) (*exec.Cmd, error) { return cmd, nil },
			Stderr: stderr, ShutdownGrace: 2 * time.Second, TerminateGrace: time.Second}
		conn, err := agent.Dial(ctx)
		if err == nil && cmd.Process != nil {
			logger.Info("agent started", "pid", cmd.Process.Pid, "command", cmd.Path)
		}
		return conn, err
	}
}

// agentsShutdown bounds, after a drain, the wait for the agents' staged
// shutdown (the CommandAgent's graces, 3 s, with room to spare).
const agentsShutdown = 10 * time.Second

// drain lets the running turns finish, within timeout (gateway.Drain),
// then closes what is left and waits for every agent (the gateway first:
// the server's Shutdown would wait for SSE streams that never end), then
// stops the server. false if the agents outlived their bound.
func drain(gw *gateway.Gateway, srv *http.Server, timeout time.Duration, stderr io.Writer) bool {
	dctx, dcancel := context.WithTimeout(context.Background(), timeout)
	defer dcancel()
	if err := gw.Drain(dctx); err != nil {
		fmt.Fprintln(stderr, "acp serve: turns still running after --drain-timeout: closing them:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), agentsShutdown)
	defer cancel()
	ok := true
	if err := gw.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "acp serve: the agents did not all exit:", err)
		ok = false
	}
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
	return ok
}

// agentCommand returns what starts one agent process per connection: the
// command after --, the registry's agent (resolved, and downloaded, once
// now), or this binary as the demo agent.
func (sc *serveConfig) agentCommand(ctx context.Context) (func(context.Context) (*exec.Cmd, error), error) {
	switch {
	case sc.registry.agentID != "":
		reg, err := sc.registry.load(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := reg.Command(ctx, sc.registry.agentID); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*exec.Cmd, error) { return reg.Command(ctx, sc.registry.agentID) }, nil
	case len(sc.agent) > 0:
		return func(context.Context) (*exec.Cmd, error) { return exec.Command(sc.agent[0], sc.agent[1:]...), nil }, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to run the demo agent: %w", err)
	}
	return func(context.Context) (*exec.Cmd, error) {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), demoEnv+"=1")
		return cmd, nil
	}, nil
}
