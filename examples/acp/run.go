package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/schema"
	"github.com/acpclient/acp/workspace"
)

// session connects, sets the session up as the flags say, and runs the
// turns: one per -p, or interactively when there is none.
func session(ctx context.Context, cfg *config, stdin io.Reader, out *output, sigs *signals) error {
	// The renderer's output is deferred by at most a millisecond
	// (outbuf.go); whatever is left goes out before the command exits.
	defer out.stop()
	cwd, err := filepath.Abs(cfg.cwd)
	if cfg.cwd == "" {
		cwd, err = os.Getwd()
	}
	if err != nil {
		return err
	}
	var tr acp.Transport
	if cfg.remote.url != "" {
		if tr, err = cfg.remote.transport(); err != nil {
			return err
		}
	} else {
		cmd, err := agentCommand(cfg)
		if err != nil {
			return err
		}
		// A command line tool should not hang for long on an agent that
		// ignores stdin EOF (codex-acp and claude-agent-acp do): 2 s, then
		// SIGTERM, then 1 s, then SIGKILL.
		ct := &acp.CommandTransport{Command: cmd, ShutdownGrace: 2 * time.Second, TerminateGrace: time.Second,
			// One agent: room for a burst of its output while the last
			// one is read (PipeBytes; 256 of the user's pipe pages).
			PipeBytes: 1 << 20}
		out.agentCmd = cmd
		if cfg.stderr {
			// The agent's own bytes, live: escaped like everything else it
			// chooses, so its stderr cannot drive the terminal either.
			sw := &cleanWriter{w: out.stderr, mu: &out.mu}
			defer sw.flush()
			ct.Stderr = sw
		}
		tr = ct
	}
	opts := &acp.ClientOptions{
		ProtocolVersion: cfg.protocol,
		ClientInfo:      &schema.Implementation{Name: "acp-cli", Title: "acp", Version: acp.Version},
		Permission:      out.permissionHandler(cfg, stdin),
		// --session prints the whole replayed history, in wire order, from
		// SessionState.Outside once session/load returns: keep far more of
		// it than a long-running host would (4 Mi updates, a few hundred MB
		// at most, for one command's lifetime).
		// TurnLogs stays at its default (the last ended turn keeps its
		// log): runTurn reads a turn's events as they come, but a short
		// turn can end before it starts reading, and a turn whose log was
		// released at its end would print nothing but its state.
		Limits: acp.Limits{OutsideLog: 1 << 22},
		// Child sessions are shown with their sessionId and parent
		// (children.go).
		Subagents: cfg.subagents,
	}
	if cfg.diagnostics {
		opts.OnDiagnostic = out.diagnostic
	}
	sup := newSupervision()
	if cfg.restart.enabled(cfg) {
		opts.Restart = restartPolicy()
		opts.Restart.OnRestart = out.restartHandler(sup)
	}
	// Agents such as codex-acp say right after initialize whether the user
	// must sign in; show it, and every change.
	opts.OnAuthStatus = out.authStatus
	opts.PlanOperations = cfg.planOps
	if cfg.fs {
		opts.FS = (&workspace.FS{}).Handlers()
	}
	if cfg.terminal {
		opts.Terminal = (&workspace.Terminals{}).Handlers()
	}
	if cfg.trace != "" {
		f, err := os.Create(cfg.trace)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Trace = acp.NewTraceWriter(f)
	}
	var current *acp.Session
	out.lines = newLineReader(stdin, out.stdout, func(string) []string { return slashCommands(current) })
	stopNote := out.slowStart(cfg) // slowstart.go
	c, err := acp.Connect(ctx, tr, opts)
	stopNote()
	if err != nil {
		return err
	}
	out.client = c
	defer c.Close()
	sigs.setClient(c)

	if cfg.auth != "" {
		if _, err := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: cfg.auth}); err != nil {
			return err
		}
	}
	if cfg.list {
		return listSessions(ctx, c, cwd, out)
	}
	s, err := openSession(ctx, c, cfg, cwd, out)
	if err != nil {
		return err
	}
	current = s
	sup.setSession(s.ID())
	out.sessionStarted(s)
	if err := applySettings(ctx, s, cfg); err != nil {
		return err
	}

	if len(cfg.prompts) > 0 {
		var failed error
		for _, p := range cfg.prompts {
			err := runTurn(ctx, s, p, cfg, out, sigs)
			if interrupted(err) {
				// The agent died in this turn and is back (or coming
				// back): report the turn, go on with the next prompt on
				// the restored session, and exit 1 at the end. Prompt
				// would wait for the restart by itself, but the restored
				// event is printed from the client's callback goroutine,
				// which the next turn could outrun: wait for it, so the
				// restore comes before the next turn's output.
				sup.diedShown(c)
				out.fail(err)
				sup.backShown(c)
				failed = errTurnFailed
				err = nil
			}
			if s.Err() != nil {
				return sessionLostError(s)
			}
			if err != nil {
				return err
			}
		}
		return failed
	}
	return interactive(ctx, s, cfg, stdin, out, sigs, sup)
}

// openSession continues --session (resume when the agent offers it, else
// load with its replay) or creates a session. If the agent demands
// authentication and no --auth was given, a usable env_var method is picked
// by itself; otherwise the error lists what each method needs.
func openSession(ctx context.Context, c *acp.Client, cfg *config, cwd string, out *output) (*acp.Session, error) {
	open := func() (*acp.Session, error) {
		if cfg.session == "" {
			return c.NewSession(ctx, &schema.NewSessionRequest{Cwd: cwd})
		}
		if c.InitializeResponse().AgentCapabilities.SessionCapabilities.Resume != nil {
			return c.ResumeSession(ctx, &schema.ResumeSessionRequest{SessionID: cfg.session, Cwd: cwd})
		}
		s, err := c.LoadSession(ctx, &schema.LoadSessionRequest{SessionID: cfg.session, Cwd: cwd})
		if err == nil {
			out.history(s)
		}
		return s, err
	}
	s, err := open()
	if err == nil || !errors.Is(err, schema.ErrAuthRequired) || cfg.auth != "" {
		return s, err
	}
	for _, m := range schema.UsableAuthMethods(c.InitializeResponse().AuthMethods, c.ClientCapabilities().Auth.Terminal, nil) {
		if _, ok := m.(*schema.EnvVarAuthMethod); !ok {
			continue
		}
		out.note("authenticating with %s", cleanLine(m.MethodID()))
		if _, aerr := c.Authenticate(ctx, &schema.AuthenticateRequest{MethodID: m.MethodID()}); aerr != nil {
			return nil, fmt.Errorf("%w\n(tried %s: %v)", err, m.MethodID(), aerr)
		}
		return open()
	}
	return nil, authHelp(err, c, cfg)
}

// authHelp explains how to authenticate: each method and what it needs; for
// a terminal method, the exact command to run.
func authHelp(err error, c *acp.Client, cfg *config) error {
	var b strings.Builder
	b.WriteString("the agent requires authentication. Rerun with --auth METHOD_ID, or set what a method needs:")
	for _, m := range c.InitializeResponse().AuthMethods {
		b.WriteString("\n  ")
		b.WriteString(schema.DescribeAuthMethod(m))
		if tm, ok := schema.AsTerminalAuthMethod(m); ok {
			cmd, cerr := agentCommand(cfg)
			if cerr == nil {
				login := schema.TerminalLoginCommand(tm, cmd)
				b.WriteString("\n      login: ")
				b.WriteString(shellQuote(login.Args))
				for k, v := range tm.Env {
					b.WriteString(" [" + k + "=" + v + "]")
				}
			}
		}
	}
	return fmt.Errorf("%s\n(%w)", b.String(), err)
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// applySettings sets --mode and each --config, checked against what the
// agent offered (the SDK names the valid ids and values on a mismatch).
func applySettings(ctx context.Context, s *acp.Session, cfg *config) error {
	if cfg.mode != "" {
		if err := s.SetMode(ctx, cfg.mode); err != nil {
			return err
		}
	}
	if err := applyModel(ctx, s, cfg); err != nil {
		return err
	}
	for _, kv := range cfg.configs {
		id, val, _ := strings.Cut(kv, "=")
		var err error
		if isBoolOption(s, id) && (val == "true" || val == "false") {
			_, err = s.SetConfigBool(ctx, id, val == "true")
		} else {
			_, err = s.SetConfigOption(ctx, id, val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func isBoolOption(s *acp.Session, id string) bool {
	for _, o := range s.State().ConfigOptions {
		if _, ok := o.(*schema.BooleanConfigOption); ok && o.OptionID() == id {
			return true
		}
	}
	return false
}

func listSessions(ctx context.Context, c *acp.Client, cwd string, out *output) error {
	_ = cwd // every session is listed; --cwd only sets where a new one would start
	for page, err := range c.ListSessions(ctx, nil) {
		if err != nil {
			return err
		}
		for _, info := range page.Sessions {
			out.sessionInfo(info)
		}
	}
	return nil
}

// runTurn runs one prompt. The first interrupt cancels the turn; a second
// one exits at once.
func runTurn(ctx context.Context, s *acp.Session, prompt string, cfg *config, out *output, sigs *signals) error {
	interrupts, release := sigs.duringTurn()
	defer release()
	turn, err := s.Prompt(ctx, schema.Text(prompt))
	if err != nil {
		return err
	}
	if cfg.cancelAfter > 0 {
		t := time.AfterFunc(cfg.cancelAfter, turn.Cancel)
		defer t.Stop()
	}
	stopSpin := out.spin(turn)
	rendered := make(chan struct{})
	kids := out.watchChildren(s)
	// The renderer writes each text chunk out and keeps none: the reused
	// form saves the turn's largest allocation (about 100 bytes a chunk;
	// bench/README.md, "End to end"). Text mode shows a message's text, not
	// its chunks, so it takes the chunks of a message joined (about 100 ns
	// of the renderer's work an update; bench/README.md, "Merged text");
	// --json prints every update with its seq, as its contract says.
	events := turn.EventsMerged
	if cfg.json {
		events = turn.EventsReused
	}
	go func() {
		defer close(rendered)
		for ev := range events(context.Background(), 0) {
			out.event(s, turn, ev)
			if _, ok := ev.Update.(*schema.SubagentUpdate); ok {
				kids.poll()
			}
		}
	}()
	for waiting := true; waiting; {
		select {
		case <-turn.Done():
			waiting = false
		case <-interrupts:
			select {
			case <-turn.Done():
			default:
				if turn.State().Cancelled {
					out.note("interrupted again: exiting")
					s.Client().Close()
					out.flush() // os.Exit runs no deferred call
					os.Exit(statusInterrupted)
				}
				out.note("cancelling (Ctrl-C again to exit)")
				turn.Cancel()
			}
		}
	}
	<-rendered
	out.flush()
	kids.stop() // shows what the children did up to the turn's end
	stopSpin()
	stop, err := turn.Wait()
	if err != nil && (stop != schema.StopReasonCancelled || endingWith(s.Client(), cfg, err) != nil) {
		return err // a turn cancelled only because the agent died is the death's
	}
	out.turnEnd(turn, err)
	return nil
}

// endingWith is agentGone for a turn that failed with err: without
// supervision a connection that ended (err wraps acp.ErrConnClosed) ends
// the client too, but the library fails the turn first, so it waits (a
// few seconds at most) for the client's end before it answers. Otherwise
// the death could pass for an ordinary failed turn, a note, and the
// session go on against no agent.
func endingWith(c *acp.Client, cfg *config, err error) error {
	if !cfg.restart.enabled(cfg) && errors.Is(err, acp.ErrConnClosed) {
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		select {
		case <-c.Done():
		case <-t.C:
		}
	}
	return agentGone(c)
}

// interactive reads prompts line by line until EOF or /quit. Lines starting
// with / are the client's commands (/mode, /config, /help, /quit) or, when
// the agent offers a command of that name, sent to the agent as they are.
func interactive(ctx context.Context, s *acp.Session, cfg *config, stdin io.Reader, out *output, sigs *signals, sup *supervision) error {
	prompt := "> "
	if out.json {
		prompt = ""
	}
	// An agent that dies while the prompt waits is reported then, not at
	// the next prompt sent to it: the read stops when the connection ends.
	c := s.Client()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-c.Done():
			stop()
		case <-sup.lost:
			stop()
		case <-ctx.Done():
		}
	}()
	for {
		raw, err := out.lines.ReadLine(ctx, prompt)
		if gone := agentGone(c); gone != nil {
			out.lines.Abandon()
			return gone
		}
		if s.Err() != nil {
			out.lines.Abandon()
			return sessionLostError(s)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line := strings.TrimSpace(raw)
		// "//NAME" sends the agent's /NAME where acp has a command of
		// that name too (the demo's /help).
		toAgent := strings.HasPrefix(line, "//")
		if toAgent {
			line = line[1:]
		}
		switch {
		case line == "":
		case toAgent:
			if err := interactiveTurn(ctx, c, s, line, cfg, out, sigs, sup); err != nil {
				return err
			}
		case line == "/quit" || line == "/exit":
			return nil
		case line == "/help":
			out.help(s)
		case strings.HasPrefix(line, "/mode"):
			id := strings.TrimSpace(strings.TrimPrefix(line, "/mode"))
			if id == "" {
				out.modes(s)
			} else if err := s.SetMode(ctx, id); err != nil {
				out.note("%v", err)
			} else {
				out.note("mode: %s", cleanLine(id))
			}
		case strings.HasPrefix(line, "/config"):
			arg := strings.TrimSpace(strings.TrimPrefix(line, "/config"))
			if arg == "" {
				out.configs(s)
			} else if err := applySettings(ctx, s, &config{configs: multiFlag{arg}}); err != nil {
				out.note("%v", err)
			} else {
				out.note("config: %s", arg)
			}
		case strings.HasPrefix(line, "/") && !isAgentCommand(s, line):
			out.note("unknown command %s (try /help)", strings.Fields(line)[0])
		default:
			if err := interactiveTurn(ctx, c, s, line, cfg, out, sigs, sup); err != nil {
				return err
			}
		}
	}
}

// interactiveTurn runs one typed prompt. Its error ends the interactive
// session: the agent gone, the session lost; any other failure is a note
// and the prompt comes back.
func interactiveTurn(ctx context.Context, c *acp.Client, s *acp.Session, line string, cfg *config, out *output, sigs *signals, sup *supervision) error {
	err := runTurn(ctx, s, line, cfg, out, sigs)
	if err == nil {
		return nil
	}
	if gone := endingWith(c, cfg, err); gone != nil {
		return gone
	}
	if interrupted(err) {
		sup.diedShown(c)
		out.fail(err) // an error event; the prompt comes back once the agent is
		sup.backShown(c)
	}
	if s.Err() != nil {
		return sessionLostError(s)
	}
	if !interrupted(err) {
		out.note("%v", err)
	}
	return nil
}

// agentGone returns why the connection to the agent has ended (its exit
// status and the tail of its stderr, when it died), or nil while it is
// open.
func agentGone(c *acp.Client) error {
	select {
	case <-c.Done():
		return goneError{c.Err()}
	default:
		return nil
	}
}

// goneError says the agent is gone; it wraps the client's reason
// (acp.ErrConnClosed, and an *acp.ExitError when the process died).
type goneError struct{ err error }

func (e goneError) Error() string {
	return "the agent has gone: " + strings.TrimPrefix(e.err.Error(), "acp: ")
}

func (e goneError) Unwrap() error { return e.err }

// slashCommands are the completions for "/": the client's commands and the
// agent's, from its latest available_commands_update.
func slashCommands(s *acp.Session) []string {
	out := []string{"/mode ", "/config ", "/help", "/quit"}
	if s != nil {
		for _, c := range s.State().Commands {
			out = append(out, "/"+c.Name)
		}
	}
	return out
}

func isAgentCommand(s *acp.Session, line string) bool {
	name := strings.TrimPrefix(strings.Fields(line)[0], "/")
	return slices.ContainsFunc(s.State().Commands, func(c schema.AvailableCommand) bool { return c.Name == name })
}
