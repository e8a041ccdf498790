// Command acp runs prompt turns against an ACP agent: the demo agent that
// ships with this module (the default, so it works offline), any agent
// named after "--", one from the ACP agent registry (--agent ID), or one
// served remotely (--url: https:// speaks the RFD's Streamable HTTP, wss://
// its WebSocket profile; --header adds a header such as a bearer token).
//
//	go run ./examples/acp -p "hello"                       # the demo agent
//	go run ./examples/acp -p "hello" -- codex-acp          # a real agent
//	go run ./examples/acp -p "hello" --agent codex-acp     # from the registry
//	go run ./examples/acp --list-agents                    # the registry's agents
//	go run ./examples/acp -p "hello" --url wss://host/acp  # a remote agent
//	go run ./examples/acp --json -p "a" -p "b" -- my-agent # NDJSON for scripts
//	go run ./examples/acp -- my-agent                      # interactive
//	go run ./examples/acp serve -- my-agent                # serve it remotely
//	go run ./examples/acp view trace.jsonl > trace.html    # a trace as a page
//
// `acp view TRACE.jsonl > trace.html` renders a --trace file (or any
// recording of the same shape) as one self-contained HTML page; see
// view.go and docs/VIEWER.md. (An agent command named "view" runs with
// `acp -- view`.)
//
// `acp serve` serves the agent (a command after "--", --agent ID, or the
// demo agent) to remote clients on the endpoint of the ACP RFD
// "Streamable HTTP & WebSocket transport", one agent process per client
// connection; see serve.go and docs/REMOTE.md. Its first line on stdout is
// the endpoint's URL; stderr names its WebSocket URL too and logs each
// agent's pid. (An agent command named "serve" runs with
// `acp -- serve`.)
//
// With --json it prints one JSON object per line: {"event":"session",...}
// (its protocolVersion is the ACP version negotiated, see --protocol; its
// pid the agent's process id, when the agent is a local process)
// first (after the download events of --agent's first run, below), then
// {"event":"update","sessionId":...,"seq":N,"update":{...}} for each
// update as received, {"event":"permission",...} for each permission
// request, and exactly one {"event":"turn_end","stopReason":...,"state":{...}}
// per turn; a failure prints {"event":"error","message":...} and exits 1.
// With --diagnostics it also prints {"event":"diagnostic","kind":...,
// "message":...} for each diagnostic the client reports (a malformed line,
// an unknown update kind, a limit reached; see acp.Diagnostic), when it is
// reported: not necessarily in wire order with the update events. Without
// --json they go to stderr.
// The events of a turn are enough to rebuild its state: the client's own
// changes appear as update events with "origin":"local" (a tool call marked
// cancelled when the turn is cancelled), and a permission event stands where
// the request arrived, carrying the patch it applied to its tool call
// ("toolCall") and the request's wording ("title"); folding the update
// events and the permission events' patches in order gives turn_end.state.
// The exit status is 0 when the last turn ended, whatever its stop reason.
// --list-agents --json prints one object per agent and line:
// {"id":...,"name":...,"version":...,"description":...,"distribution":
// ["binary","npx","uvx"],"platforms":[...]} ("platforms", the binary
// distribution's, only when there is one).
//
// --agent downloads a binary agent's archive on first use. Stderr says
// "acp: installing ID VERSION from URL" first; on a terminal (without
// --json) a line follows, redrawn in place at most ten times a second,
// "acp: downloading ID VERSION  12.3 MiB / 49.0 MiB  25%  4.1 MiB/s"
// (bytes and rate only when the size is unknown), ended with a newline when
// the download ends. With --json two events come before the session event:
// {"event":"download","phase":"start","agent":ID,"version":...,"url":...,
// "done":0,"total":N} when the response arrives and the same with
// "phase":"end" and the bytes received as "done" when the download ends,
// also when it failed (an error event follows); "total" is -1 when the
// size is unknown.
//
// Ctrl-C (SIGINT) during a turn, also in a permission dialog, cancels the
// turn; a second one exits with status 130. SIGTERM, SIGHUP, and SIGINT
// or Ctrl-C outside a turn shut the agent down in stages (stdin closed,
// 2 s, SIGTERM, 1 s, SIGKILL to its process group), print an error event,
// and exit with 128 plus the signal's number (143, 129, 130): no agent
// process outlives the command. Ctrl-D or the end of input at the prompt
// exits 0. Without --restart, an agent that exits or closes its output is
// reported at once, with its exit status and stderr tail, and the command
// exits 1.
//
// --restart supervises the agent (see docs/SUPERVISION.md): on by default
// when prompts are read interactively, off with -p prompts and --list (a
// script's agent that dies ends the command, as it always did); --restart
// turns it on, --restart=false off. An agent that dies, or whose remote
// connection drops, is reported, started again (a new process, or a new
// connection for --url) and its session resumed, else loaded; the turn it
// interrupted gets an error event (--json) or line instead of its turn_end,
// and the next prompt runs on the restored session; with -p prompts the
// exit status is then 1. Each step is a line on stderr ("acp: the agent
// died (exit status 3); restarting it", "acp: the agent is back
// (connection 2); restored session ID"), or with --json an event
// {"event":"restart","phase":P,"connection":N,"attempt":K,...}: phase
// "died" (exitStatus, exitCode and stderrTail when a process died;
// message), "waiting" (delayMs, the backoff before attempt K), "failed"
// (attempt K failed: message, and exitStatus, exitCode, stderrTail),
// "restored" (restored and lost: lists of session ids) and "gave_up"
// (message; an error event follows). A session the restarted agent cannot
// bring back ends the command with an error naming it; an agent that
// dies more than 5 times within a minute (backoff 0, 0.5 s, 1 s, ... up to
// 30 s) ends it with an error naming its last exit status and stderr tail.
//
// Without --json, every string the agent chooses is printed with its
// control characters escaped (\r, \x1b, \u009b; see sanitize.go), so that
// it cannot drive the terminal.
//
// Text mode starts with a line on stderr naming the agent, its pid when
// it is a local process, the ACP version negotiated and the session
// ("acp: ACP demo agent (pid 4242), ACP v1, session demo-…"), and prints
// the session's title and context usage as the agent reports them
// ("[title] …", "[usage] 1005 of 200000 tokens"). An agent that has not
// answered initialize within a second gets a line saying what the command
// waits for.
//
// The built-in demo agent is this binary re-executed (a real subprocess,
// so --restart and kill -9 work on it); it keeps its sessions in
// --demo-state-dir (default: acp-demo under the user cache directory,
// or $ACP_DEMO_STATE_DIR; empty keeps them in memory). See docs/DEMO.md.
//
// `go run` prints "exit status N" and exits 1 itself for any non-zero N:
// the statuses above are those of the built binary
// (go build -o acp ./examples/acp).
//
// These flags, this output and these exit statuses are a stable contract.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

const usageHead = `usage: acp [flags] [--agent ID | --url URL | -- AGENT_COMMAND [ARGS...]]

With no agent command, acp runs the demo agent built into it.
With no -p, it reads prompts interactively.

examples:
  acp -p "hello"                         one turn with the demo agent
  acp -p "hello" -- codex-acp            a real agent
  acp -p "hello" --agent codex-acp       an agent from the ACP registry
  acp --list-agents                      the registry's agents
  acp -p "hello" --url wss://host/acp --header 'Authorization: Bearer T'
                                         an agent served remotely
  acp --json -p "a" -p "b" -- my-agent   two turns, as NDJSON for scripts
  acp --fs --permission allow -- my-agent
                                         interactive; the agent may edit files in --cwd
  acp serve -- my-agent                  serve the agent to remote clients (acp serve -h)
  acp view TRACE.jsonl > trace.html      a --trace file as an HTML page (acp view -h)
  acp check -- my-agent                  grade the agent against the protocol (acp check -h)

flags:
`

const usageTail = `
interactive commands:
  /mode [ID]           show the session's modes, or switch to one
  /config [ID=VALUE]   show the config options, or set one
  /help                these commands and the agent's own
  /quit, /exit         end the session (so does Ctrl-D)
  /NAME ...            the agent's slash commands are sent as typed
  //NAME ...           the agent's /NAME where acp has a /NAME too (//help)
  Ctrl-C               cancel the turn (also in a permission dialog); at the prompt, exit

exit status:
  0    the last turn ended, whatever its stop reason; or /quit, Ctrl-D, end of input
  1    a failure, including the agent exiting or closing its output (without
       --restart), its session lost at a restart, or a -p turn interrupted by
       the agent's death
  2    bad flags
  130  Ctrl-C at the prompt, or twice in a turn
  129  SIGHUP; 143 SIGTERM (the agent is shut down in stages first)
  (go run reports "exit status N" and itself exits 1 for any non-zero N, so
  Ctrl-C then Ctrl-D shows 1 there: build first, go build -o acp ./examples/acp,
  and ./acp gives the real status)

the built-in demo agent (docs/DEMO.md): a subprocess of its own (text mode
prints its pid), speaking v1 or v2 as --protocol offers; it keeps its sessions
in --demo-state-dir, so --session, --list and --restart find them again; try
/help, /slow (then Ctrl-C), and --restart -p /kill -p "are you still there?"
`

// demoEnv makes the binary serve the demo agent on stdin/stdout instead of
// running the command: `acp` with no agent re-executes itself this way, so
// no second binary needs building.
const demoEnv = "ACP_DEMO_AGENT"

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type config struct {
	protocol     int
	prompts      multiFlag
	cwd          string
	json         bool
	permission   string
	cancelAfter  time.Duration
	fs           bool
	terminal     bool
	auth         string
	list         bool
	session      string
	mode         string
	model        string // --model (modelflag.go)
	configs      multiFlag
	trace        string
	stderr       bool
	diagnostics  bool
	planOps      bool // --plan-ops
	subagents    bool
	agent        []string
	registry     registryFlags // --agent, --registry, --list-agents (agentflag.go)
	remote       remoteFlags   // --url, --header, --allow-insecure (remoteflag.go)
	restart      restartFlag   // --restart (restart.go)
	demoStateDir string        // --demo-state-dir (demo.go)
}

func main() {
	if os.Getenv(demoEnv) != "" {
		serveDemo() // demo.go
		return
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&cfg.prompts, "p", "a prompt; repeat for several turns in one session (shorthand for --prompt)")
	fs.Var(&cfg.prompts, "prompt", "a prompt; repeat for several turns in one session")
	fs.StringVar(&cfg.cwd, "cwd", "", "the session's working directory (default: the current directory)")
	fs.IntVar(&cfg.protocol, "protocol", 1, "the highest ACP version to offer, 1 or 2 (the agent picks; v2 is in Preview and has no client fs/terminal)")
	fs.BoolVar(&cfg.json, "json", false, "print NDJSON events instead of text")
	fs.StringVar(&cfg.permission, "permission", "", "answer permission requests: allow, reject, ask or cancel (default: ask on a terminal, else reject)")
	fs.DurationVar(&cfg.cancelAfter, "cancel-after", 0, "cancel each turn this long after it starts")
	fs.BoolVar(&cfg.fs, "fs", false, "serve fs/* requests inside --cwd")
	fs.BoolVar(&cfg.terminal, "terminal", false, "serve terminal/* requests (commands run inside --cwd)")
	fs.StringVar(&cfg.auth, "auth", "", "authenticate with this method id before the session")
	fs.BoolVar(&cfg.list, "list", false, "list the agent's sessions and exit")
	fs.StringVar(&cfg.session, "session", "", "continue this session (resume when offered, else load)")
	fs.StringVar(&cfg.mode, "mode", "", "set this session mode before the first prompt")
	registerModelFlag(fs, cfg)
	fs.Var(&cfg.configs, "config", "set a config option before the first prompt, as ID=VALUE (repeatable)")
	fs.StringVar(&cfg.trace, "trace", "", "write a JSONL wire trace to this file")
	fs.BoolVar(&cfg.stderr, "stderr", false, "show the agent's stderr live (otherwise only its tail, on failure)")
	fs.BoolVar(&cfg.planOps, "plan-ops", false, "advertise plan operations: the agent may then send several plans by id (plan_update, plan_removed) instead of one checklist")
	fs.BoolVar(&cfg.subagents, "subagents", true, "advertise subagents: show the child sessions an agent delegates to, and the messages between sessions (--subagents=false: the agent reports them in the parent's turn, if at all)")
	fs.BoolVar(&cfg.diagnostics, "diagnostics", false, "report what the client tolerated or refused of the agent: malformed lines, unknown update kinds, limits reached")
	fs.Var(&cfg.restart, "restart", "supervise the agent: when it dies (or its connection drops), report it, start it again and resume the session; the turn it interrupted fails (default: on interactively, off with -p prompts; --restart=false: the command ends when the agent does)")
	cfg.registry.register(fs, stderr)
	cfg.remote.register(fs)
	registerDemoFlag(fs, cfg)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHead)
		fs.PrintDefaults()
		fmt.Fprint(stderr, usageTail)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.agent = fs.Args()
	if err := cfg.registry.validate(cfg); err != nil {
		return nil, err
	}
	if err := cfg.remote.validate(cfg); err != nil {
		return nil, err
	}
	switch cfg.permission {
	case "", "allow", "reject", "ask", "cancel":
	default:
		return nil, fmt.Errorf("--permission must be allow, reject, ask or cancel, not %q", cfg.permission)
	}
	for _, c := range cfg.configs {
		if !strings.Contains(c, "=") {
			return nil, fmt.Errorf("--config wants ID=VALUE, got %q", c)
		}
	}
	return cfg, nil
}

// agentCommand builds the agent's command: the one named after "--", or
// this binary re-executed as the demo agent.
func agentCommand(cfg *config) (*exec.Cmd, error) {
	if cfg.registry.agentID != "" {
		return cfg.registry.command(context.Background())
	}
	if len(cfg.agent) > 0 {
		return exec.Command(cfg.agent[0], cfg.agent[1:]...), nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to run the demo agent: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), demoEnv+"=1", demoStateEnv+"="+cfg.demoStateDir)
	return cmd, nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "serve" {
		return serve(args[1:], stdout, stderr) // serve.go
	}
	if len(args) > 0 && args[0] == "view" {
		return view(args[1:], stdin, stdout, stderr) // view.go
	}
	if len(args) > 0 && args[0] == "check" {
		return check(args[1:], stdout, stderr) // check.go
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "acp:", err)
		return 2
	}
	out := newOutput(cfg, stdout, stderr)
	cfg.registry.out = out
	if cfg.registry.listAgents {
		return cfg.registry.list(context.Background(), cfg, out)
	}
	// During a turn, the first interrupt cancels the turn and the second
	// exits (see runTurn). Any other interrupt, SIGTERM or SIGHUP shuts the
	// agent down and exits with 128+signal.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := catchSignals(cancel, stdin)
	err = session(ctx, cfg, stdin, out, sigs)
	if sig := sigs.stop(); sig != nil {
		out.fail(fmt.Errorf("%v: the agent was shut down", sig))
		return signalStatus(sig)
	}
	if errors.Is(err, errInterrupted) {
		// Ctrl-C at the prompt: the terminal was raw, so it came as a
		// key, not as SIGINT, but it ends the command the same way.
		out.fail(fmt.Errorf("%v: the agent was shut down", os.Interrupt))
		return statusInterrupted
	}
	if errors.Is(err, errTurnFailed) {
		return 1 // the failed turn's error is out already
	}
	if err != nil {
		out.fail(err)
		return 1
	}
	return 0
}

// statusInterrupted is the exit status for Ctrl-C (SIGINT) outside a
// turn, or twice in one: 128 + SIGINT's number, as a shell reports a
// process killed by it.
const statusInterrupted = 130
