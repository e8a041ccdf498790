// This file holds the package's entry points: what is graded (Target), how
// (Options), what comes back (Report, Result) and Run, which drives the
// scenarios.

package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Target says how to reach the agent under test. Exactly one of Command
// and Dial is set. Every scenario opens a connection of its own, so the
// agent is started (or dialled) several times in one run.
type Target struct {
	// Command is the agent's argv, started once per scenario with the
	// run's workspace as its working directory (unless Dir is set) and the
	// environment Env. Closing a connection shuts the
	// process down in stages (stdin closed, then SIGTERM, then SIGKILL to
	// its process group), as acp.CommandTransport does.
	Command []string
	// Env is the command's environment, as KEY=VALUE; nil means this
	// process's (as with exec.Cmd.Env).
	Env []string
	// Dir is the command's working directory; empty means the workspace.
	Dir string
	// Dial opens a new connection to the agent: a remote agent
	// (remote.New(...).Connect), an in-process one over pipes, anything
	// that carries newline-delimited JSON-RPC. Closing it must end the
	// connection.
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
}

// Options configures a run. The zero value grades every version the agent
// offers, skips nothing, gives each scenario 20 s and works in a temporary
// directory it removes afterwards.
type Options struct {
	// Protocol lists the ACP versions to grade (1, 2). Empty means every
	// version the agent offers at initialize.
	Protocol []int
	// Skip lists rule ids that are not graded (reported as skipped).
	Skip []string
	// ScenarioTimeout bounds each scenario, from starting the agent to
	// closing it. Zero means DefaultScenarioTimeout. A scenario that runs
	// out fails the rules it was observing; two that run out end the run
	// (the rest is reported not exercised), so a hung agent costs at most
	// about two timeouts plus the shutdown grace.
	ScenarioTimeout time.Duration
	// Workspace is the directory sessions are created in (their cwd) and
	// the only one the agent's fs requests are served in. Empty means a
	// new temporary directory, removed when Run returns.
	Workspace string
	// Trace, if set, receives the wire trace of every scenario in the
	// format of acp.TraceWriter (one JSON object per line: {"t","dir",
	// "msg"|"note"}), with a note starting each scenario, so that
	// `acp view` can show the evidence.
	Trace io.Writer
	// AuthMethod, if set, is the authentication method id used when the
	// agent requires authentication before session/new. Without it such
	// an agent's session rules are not exercised.
	AuthMethod string
	// Prompts steers the agent; the zero value sends plain requests any
	// agent can act on.
	Prompts Prompts
}

// Prompts are the texts the scenarios send; "{workspace}" in them is
// replaced by the workspace's absolute path, where the file NotesFile
// exists. An agent that can be steered
// offline (a scripted model, a demo) gets the prompts that make it do what
// a rule needs.
type Prompts struct {
	// Hello is an ordinary prompt. Empty means "Say hello in one short
	// sentence."
	Hello string
	// Cancel is the prompt that the cancellation scenario cancels at once;
	// it should keep the agent busy. Empty means a request for a long
	// answer.
	Cancel string
	// Tool is a prompt meant to make the agent call a tool that reads or
	// edits a file in the workspace (the tool scenario). Empty means a
	// request to write a file named conformance.txt.
	Tool string
	// Background is a prompt meant to make a v2 agent start background
	// work, a terminal or tool call that outlives the turn (the background
	// scenario). Empty means none is asked for: v2.background-ends is then
	// not exercised, since no plain request makes an arbitrary agent
	// run something in the background (the demo agent's is
	// "/background").
	Background string

	workspace string
}

// NotesFile is the file Run writes into the workspace before the
// scenarios, which the resource-link and embedded-resource prompts name
// and a steered fs prompt can read.
const NotesFile = "conformance-notes.txt"

const notesText = "conformance notes\nline two\nline three\n"

// DefaultScenarioTimeout is the deadline of each scenario when
// Options.ScenarioTimeout is zero.
const DefaultScenarioTimeout = 20 * time.Second

// Level is how strongly the spec states a rule.
type Level string

// The levels, as the spec writes them (RFC 2119).
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
)

// Status is a rule's grade.
type Status string

// The grades. NotExercised means no scenario observed what the rule is
// about (the agent advertised no such capability, or made no such call):
// it is never counted as a pass.
const (
	Pass         Status = "pass"
	Fail         Status = "fail"
	Warn         Status = "warn"
	NotExercised Status = "not_exercised"
	Skipped      Status = "skipped"
)

// Result is one rule's grade in one protocol version.
type Result struct {
	ID       string `json:"id"`
	Protocol int    `json:"protocol"`
	Area     string `json:"area"`
	Level    Level  `json:"level"`
	// Spec is the page and anchor the rule comes from, relative to
	// https://agentclientprotocol.com/ (for instance
	// "protocol/v1/initialization#version-negotiation").
	Spec    string `json:"spec"`
	Title   string `json:"title"`
	Status  Status `json:"status"`
	Message string `json:"message,omitempty"`
	// Evidence holds the frames that show a failure or warning (at most
	// MaxEvidence), each {"dir":">"|"<","msg":{...}} or, for a line that
	// is not JSON, {"dir":"<","line":"..."}.
	Evidence []json.RawMessage `json:"evidence,omitempty"`
}

// MaxEvidence bounds the frames kept per result.
const MaxEvidence = 5

// AgentInfo is what the agent says about itself at initialize.
type AgentInfo struct {
	Name    string `json:"name,omitempty"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// Report is a run's outcome: one Result per rule and graded version, in
// the order of [Rules].
type Report struct {
	Agent AgentInfo `json:"agent"`
	// Offered are the versions the agent answered as its own at
	// initialize; Versions those graded.
	Offered  []int    `json:"offered"`
	Versions []int    `json:"versions"`
	Results  []Result `json:"results"`
}

// Failures counts the failed results of the given levels (all levels when
// none are given).
func (r *Report) Failures(levels ...Level) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == Fail && (len(levels) == 0 || slices.Contains(levels, res.Level)) {
			n++
		}
	}
	return n
}

// Passed reports whether no MUST rule failed, and with strict no SHOULD
// rule either.
func (r *Report) Passed(strict bool) bool {
	if strict {
		return r.Failures(Must, Should) == 0
	}
	return r.Failures(Must) == 0
}

// Result returns the result of rule id in version protocol.
func (r *Report) Result(id string, protocol int) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id && res.Protocol == protocol {
			return res, true
		}
	}
	return Result{}, false
}

// Run grades the agent: it opens a connection per scenario, drives the
// agent with the acp client and with raw JSON-RPC, and grades every rule
// of [Rules] it can observe. It returns an error only when the run could
// not start (a bad Target or Options, no workspace); an agent that cannot
// be started, hangs or breaks the protocol yields a Report with failed
// rules. Run returns when every connection is closed and every process it
// started has been shut down. ctx bounds the whole run.
func Run(ctx context.Context, target Target, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	if (len(target.Command) == 0) == (target.Dial == nil) {
		return nil, errors.New("conformance: Target needs exactly one of Command and Dial")
	}
	for _, v := range opts.Protocol {
		if v != 1 && v != 2 {
			return nil, fmt.Errorf("conformance: protocol version %d: want 1 or 2", v)
		}
	}
	for _, id := range opts.Skip {
		if _, ok := ruleByID[id]; !ok {
			return nil, fmt.Errorf("conformance: skip: no rule %q", id)
		}
	}
	r := &runner{opts: *opts, target: target}
	if r.opts.ScenarioTimeout <= 0 {
		r.opts.ScenarioTimeout = DefaultScenarioTimeout
	}
	if r.opts.Workspace == "" {
		dir, err := os.MkdirTemp("", "acp-conformance-")
		if err != nil {
			return nil, fmt.Errorf("conformance: workspace: %w", err)
		}
		defer os.RemoveAll(dir)
		r.opts.Workspace = dir
	}
	ws, err := filepath.Abs(r.opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("conformance: workspace: %w", err)
	}
	// Symlinks resolved, so that the fs handlers' containment check
	// compares like with like (a macOS temp dir is behind /var -> /private/var).
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	r.opts.Workspace = ws
	r.opts.Prompts.workspace = ws
	if err := os.WriteFile(filepath.Join(ws, NotesFile), []byte(notesText), 0o644); err != nil {
		return nil, fmt.Errorf("conformance: workspace: %w", err)
	}
	if len(target.Command) > 0 {
		path, err := exec.LookPath(target.Command[0])
		if err != nil {
			return nil, fmt.Errorf("conformance: agent command: %w", err)
		}
		if r.target.Command[0], err = filepath.Abs(path); err != nil {
			return nil, fmt.Errorf("conformance: agent command: %w", err)
		}
	}
	if opts.Trace != nil {
		r.trace = newTraceOut(opts.Trace)
	}
	return r.run(ctx), nil
}

// PipeTarget grades an in-process agent: pipe opens a new connection and
// returns the client's ends of it (an acptest.Agent's Pipe method fits).
// Closing both ends ends the connection.
func PipeTarget(pipe func() (fromAgent io.ReadCloser, toAgent io.WriteCloser)) Target {
	return Target{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		r, w := pipe()
		return &pipeConn{r, w}, nil
	}}
}

type pipeConn struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p *pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *pipeConn) Close() error {
	werr := p.w.Close()
	if err := p.ReadCloser.Close(); err != nil {
		return err
	}
	return werr
}
