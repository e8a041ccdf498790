// Package demo is the demo ACP agent that ships with the SDK: a small,
// deterministic agent built on acptest that exercises most of the
// protocol on every prompt, so that clients, tests and the acp command can
// be tried offline.
//
// In a test, run it in-process with [Connect] (like acptest.Connect):
//
//	func TestMyHost(t *testing.T) {
//		c, _ := demo.Connect(t, nil, nil) // sessions in memory; the cleanup closes both
//		s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: t.TempDir()})
//		...
//	}
//
// or serve [New]'s agent over pipes to any client:
//
//	a := demo.New(nil)
//	defer a.Close()
//	fromAgent, toAgent := a.Pipe() // the client's ends of its stdout and stdin
//
// From another module, run it as a process (it speaks ACP on stdin and
// stdout; --state-dir keeps its sessions across runs):
//
//	go run github.com/acpclient/acp/examples/demoagent@latest
//
// It speaks ACP v1 and v2, whichever the client offers (v2 when the
// client's initialize offers 2 or more; see acptest.Options.AnyVersion).
//
// On an ordinary prompt it thinks briefly, shows a plan, reads the
// workspace (a read tool call), proposes writing acp-demo.txt into the
// session's cwd (an edit tool call with a diff, after asking permission in
// the "ask" mode; the "code" mode edits without asking), writes it with
// fs/write_text_file when the client allowed it and advertised
// fs.writeTextFile (otherwise the tool call fails saying why, and the
// plan leaves that step unticked), then streams an answer that echoes the
// prompt, and reports usage and (on the first prompt) a session title.
//
// Slash commands: /help, /echo TEXT, /slow (50 chunks 20 ms apart, so that
// cancellation can be shown) and /kill (three chunks, then the agent dies
// mid-turn: with [Options.OwnProcess] its process kills itself, SIGKILL,
// or os.Exit(137) on Windows; otherwise every connection ends as with
// acptest.Agent.Kill), /background (ACP v2: a tool call starts a watcher
// in the agent's own terminal and returns; the terminal stays in
// state_update.background after the turn, printing a line every
// [BackgroundTick], until it ends after [BackgroundTicks] lines or
// terminal/cancel or session/close stops it). Every step honours session/cancel: the turn ends
// with stopReason "cancelled" and its open tool calls are marked failed
// (v1 has no cancelled status).
//
// # Sessions
//
// With [Options.StateDir] every session is kept in a file of that
// directory, written after each turn, so that a demo agent started later
// lists it (session/list), and loads (replaying its history) or resumes
// it. The zero Options keeps sessions in memory for the agent's lifetime.
// See [MaxHistory], [MaxSessions] and [MaxFileSize] for the bounds, and
// [DefaultStateDir] for the directory the commands use.
package demo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// FileName is the file the demo proposes to write into the session's cwd.
const FileName = "acp-demo.txt"

// Options configures the demo agent. The zero value is useful: sessions
// in memory only, /kill ends the connections but not the process, logs
// discarded.
type Options struct {
	// StateDir is the directory the sessions are kept in, one file per
	// session ("" keeps them in memory only). It is created (0700) when
	// the first session is saved. A file the agent cannot read or parse
	// fails the session/load or session/resume of that session with an
	// error naming the file; other sessions are unaffected.
	StateDir string
	// OwnProcess says the agent is its process's only business (the
	// demoagent command, the acp command's built-in demo): /kill then
	// kills the process instead of ending its connections, and
	// initialize reports the process id in agentInfo._meta.pid.
	OwnProcess bool
	// Stderr receives the agent's log lines: a state file it could not
	// write, one it skipped listing. Nil discards them.
	Stderr io.Writer
}

// DefaultStateDir is where the demoagent and acp commands keep the demo's
// sessions unless told otherwise: "acp-demo" under [os.UserCacheDir].
func DefaultStateDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("demo: no user cache directory for the demo's sessions: %w", err)
	}
	return filepath.Join(dir, "acp-demo"), nil
}

var modes = map[string]any{
	"currentModeId": "ask",
	"availableModes": []any{
		map[string]any{"id": "ask", "name": "Ask", "description": "Asks before editing files"},
		map[string]any{"id": "code", "name": "Code", "description": "Edits files without asking"},
	},
}

var configOptions = []any{
	map[string]any{
		"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "demo-fast",
		"options": []any{
			map[string]any{"value": "demo-fast", "name": "Demo Fast", "description": "Answers tersely"},
			map[string]any{"value": "demo-smart", "name": "Demo Smart", "description": "Answers at more length"},
		},
	},
}

var commands = []acptest.SlashCommand{
	{Name: "help", Description: "Show what the demo agent can do"},
	{Name: "echo", Description: "Repeat the text back", Hint: "text to echo"},
	{Name: "slow", Description: "Stream slowly, to try cancelling"},
	{Name: "kill", Description: "Die mid-turn, to try restarting (acp --restart)"},
	{Name: "background", Description: "Leave a watcher running in the background (ACP v2)"},
}

const helpText = "I am the ACP demo agent. Send any text and I will think, plan, read the workspace, " +
	"propose writing " + FileName + " and echo you. Commands: /help, /echo TEXT, " +
	"/slow (streams slowly; try cancelling), /kill (dies mid-turn; try acp --restart), " +
	"/background (ACP v2: a watcher that runs on after the turn; terminal/cancel stops it)."

// New returns a new demo agent configured by opts (nil is the zero
// Options). Serve it over stdin/stdout (see examples/demoagent), in-process
// with Pipe or acptest.Transport, or re-execute a test binary with
// acptest.Register. Close it when done.
func New(opts *Options) *acptest.Agent {
	var o Options
	if opts != nil {
		o = *opts
	}
	logf := func(format string, args ...any) {
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "acp-demo: "+format+"\n", args...)
		}
	}
	st := &store{dir: o.StateDir, logf: logf}
	info := map[string]any{"name": "acp-demo", "title": "ACP demo agent", "version": "0.2.0"}
	if o.OwnProcess {
		info["_meta"] = map[string]any{"pid": os.Getpid()}
	}
	d := &agent{opts: o, store: st}
	ao := &acptest.Options{
		AgentInfo:     info,
		AnyVersion:    true,
		Modes:         modes,
		ConfigOptions: configOptions,
		Stderr:        o.Stderr,
		NewSessionID:  newSessionID,
		OnNewSession: func(s *acptest.Session) {
			s.Commands(commands...)
			st.save(s, 0)
		},
		OnLoadSession: func(s *acptest.Session) {
			d.bg.reopen(s)
			s.Commands(commands...)
		},
		OnPrompt:       d.turn,
		OnExtMethod:    d.bg.cancel,
		OnCloseSession: d.bg.closeSession,
	}
	if st.dir != "" {
		ao.Sessions = st.list()
		ao.OpenSession = st.open
	}
	return acptest.New(ao)
}

// newSessionID returns a random session id, so that the ids of agents
// sharing a state directory never collide.
func newSessionID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "demo-" + hex.EncodeToString(b)
}

type agent struct {
	opts  Options
	store *store
	bg    watchers
}

// turn runs a prompt, titles an untitled session after its first prompt
// that ends, and saves the session, whatever the turn's end.
func (d *agent) turn(t *acptest.Turn) (schema.StopReason, error) {
	defer d.store.save(t.Session, t.Number())
	text := strings.TrimSpace(t.PromptText())
	stop, err := d.run(t, text)
	if err == nil && stop != schema.StopReasonCancelled && t.Title() == "" {
		t.SessionInfo(title(text)) // acptest keeps it: Session.Title
	}
	return stop, err
}

func (d *agent) run(t *acptest.Turn, text string) (schema.StopReason, error) {
	msgID := fmt.Sprintf("msg-%d", t.Number())
	switch {
	case text == "/slow":
		return slow(t, msgID)
	case text == "/kill":
		return d.kill(t, msgID)
	case text == "/background":
		return d.bg.start(t, msgID)
	case text == "/help":
		return "end_turn", t.SayID(msgID, helpText)
	case text == "/echo" || strings.HasPrefix(text, "/echo "):
		return "end_turn", t.SayID(msgID, strings.TrimSpace(strings.TrimPrefix(text, "/echo")))
	}
	return work(t, text, msgID)
}

// slow streams 50 chunks 20 ms apart, stopping at a cancel.
func slow(t *acptest.Turn, msgID string) (schema.StopReason, error) {
	for i := range 50 {
		if !t.Pause(20 * time.Millisecond) {
			return "cancelled", nil
		}
		if err := t.SayID(msgID, fmt.Sprintf("chunk %d of 50. ", i+1)); err != nil {
			return "", err
		}
	}
	return "end_turn", nil
}

// kill streams three chunks and dies mid-turn, after saving the session
// so that a restarted demo can resume it.
func (d *agent) kill(t *acptest.Turn, msgID string) (schema.StopReason, error) {
	for i := range 3 {
		if err := t.SayID(msgID, fmt.Sprintf("dying in %d… ", 3-i)); err != nil {
			return "", err
		}
	}
	d.store.save(t.Session, t.Number())
	if d.opts.OwnProcess {
		killSelf()
	}
	t.Agent().Kill()
	<-t.Context().Done()
	return "", t.Context().Err()
}

// Connect starts a demo agent configured by opts in-process and connects
// an [acp.Client] configured by copts to it, as [acptest.Connect] does for
// a scripted agent: the test's cleanup closes both, a failed handshake
// ends the test with t.Fatal.
func Connect(t testing.TB, opts *Options, copts *acp.ClientOptions) (*acp.Client, *acptest.Agent) {
	t.Helper()
	a := New(opts)
	return acptest.ConnectAgent(t, a, copts), a
}
