// This file holds the runner: the grades recorded so far, the scenarios'
// connections (each bounded by the scenario's deadline) and the order the
// scenarios run in.

package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpclient/acp"
)

type resKey struct {
	id      string
	version int
}

type runner struct {
	opts   Options
	target Target
	trace  *traceOut

	version  int // the version being graded
	results  map[resKey]*Result
	timeouts int
	stopped  string // why the remaining scenarios were not run

	authRequired bool // session/new answered auth_required once

	report Report
	inits  map[int]*initInfo // the initialize result per version answered
}

// severity orders statuses: a worse grade replaces a better one.
func severity(s Status) int {
	switch s {
	case Fail:
		return 4
	case Warn:
		return 3
	case Pass:
		return 2
	case NotExercised:
		return 1
	}
	return 0
}

// grade records an observation of rule id in the version being graded.
// The worst grade of a rule wins; its evidence accumulates.
func (r *runner) grade(id string, st Status, msg string, ev ...*frame) {
	rule, ok := ruleByID[id]
	if !ok {
		panic("conformance: no rule " + id)
	}
	if !rule.appliesTo(r.version) {
		return
	}
	k := resKey{id, r.version}
	res := r.results[k]
	if res == nil {
		res = &Result{ID: id, Protocol: r.version, Area: rule.Area, Level: rule.Level, Spec: rule.spec(r.version), Title: rule.Title}
		r.results[k] = res
	}
	if severity(st) > severity(res.Status) {
		res.Status, res.Message = st, msg
	}
	if st == Fail || st == Warn {
		for _, f := range ev {
			if f != nil && len(res.Evidence) < MaxEvidence {
				res.Evidence = append(res.Evidence, f.evidence())
			}
		}
	}
}

func (r *runner) pass(id, msg string)               { r.grade(id, Pass, msg) }
func (r *runner) fail(id, msg string, ev ...*frame) { r.grade(id, Fail, msg, ev...) }
func (r *runner) warn(id, msg string, ev ...*frame) { r.grade(id, Warn, msg, ev...) }
func (r *runner) notExercised(id, msg string)       { r.grade(id, NotExercised, msg) }

// run runs every scenario and assembles the report.
func (r *runner) run(ctx context.Context) *Report {
	r.target.Command = slices.Clone(r.target.Command)
	r.results = map[resKey]*Result{}
	r.inits = map[int]*initInfo{}
	r.negotiate(ctx)
	versions := r.report.Offered
	if len(r.opts.Protocol) > 0 {
		versions = nil
		for _, v := range r.opts.Protocol {
			if slices.Contains(r.report.Offered, v) {
				versions = append(versions, v)
			} else {
				r.version = v
				r.fail("init.answers", fmt.Sprintf("protocol version %d was asked for but the agent does not offer it (it offers %v)", v, r.report.Offered))
				versions = append(versions, v)
			}
		}
	}
	slices.Sort(versions)
	r.report.Versions = versions
	for _, v := range versions {
		r.version = v
		if r.inits[v] == nil {
			continue
		}
		r.scenario(ctx, "probes", r.probes)
		r.scenario(ctx, "session", r.session)
		r.scenario(ctx, "cancel", r.cancel)
		r.scenario(ctx, "restore", r.restore)
		r.scenario(ctx, "tool", r.tool)
		if v == 2 {
			r.scenario(ctx, "background", r.background)
		}
	}
	if len(versions) == 0 {
		versions = []int{1}
		r.report.Versions = versions
		if r.stopped == "" {
			r.stopped = "the agent answered no initialize"
		}
	}
	skip := map[string]bool{}
	for _, id := range r.opts.Skip {
		skip[id] = true
	}
	for _, rule := range rules {
		for _, v := range versions {
			if !rule.appliesTo(v) {
				continue
			}
			res := r.results[resKey{rule.ID, v}]
			switch {
			case skip[rule.ID]:
				res = &Result{ID: rule.ID, Protocol: v, Area: rule.Area, Level: rule.Level, Spec: rule.spec(v), Title: rule.Title,
					Status: Skipped, Message: "skipped by request"}
			case res == nil:
				msg := "no scenario observed it"
				if r.stopped != "" {
					msg = "not run: " + r.stopped
				}
				res = &Result{ID: rule.ID, Protocol: v, Area: rule.Area, Level: rule.Level, Spec: rule.spec(v), Title: rule.Title,
					Status: NotExercised, Message: msg}
			}
			r.report.Results = append(r.report.Results, *res)
		}
	}
	return &r.report
}

// scene is one scenario's state: its connections, whether it offered fs,
// and the client's diagnostics.
type scene struct {
	name  string
	r     *runner
	ctx   context.Context
	fs    bool
	mu    sync.Mutex
	conns []*tap
	diags []acp.Diagnostic
}

// errTimeout marks a scenario step that ran out of the scenario's time.
var errTimeout = errors.New("the scenario's deadline passed")

// scenario runs fn with the scenario's deadline, closes its connections,
// and grades every frame they carried.
func (r *runner) scenario(ctx context.Context, name string, fn func(s *scene)) {
	if r.stopped != "" {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, r.opts.ScenarioTimeout)
	defer cancel()
	s := &scene{name: name, r: r, ctx: sctx}
	// When the deadline passes every connection is closed, which unblocks
	// whatever the scenario waits on.
	stop := context.AfterFunc(sctx, s.closeAll)
	defer stop()
	if r.trace != nil {
		r.trace.note(fmt.Sprintf("conformance: scenario %s (protocol %d)", name, r.version))
	}
	fn(s)
	timedOut := sctx.Err() != nil
	s.closeAll()
	for _, c := range s.conns {
		r.checkFrames(s, c.log.all())
		if c.log.truncated() {
			r.warn("jsonrpc.lines", fmt.Sprintf("the connection carried more than %d bytes; the rest of it was not graded", maxRecorded))
		}
	}
	r.checkDiagnostics(s)
	if timedOut && ctx.Err() == nil {
		r.timeouts++
		if r.timeouts >= 2 {
			r.stopped = fmt.Sprintf("two scenarios ran out of their %v; the agent stopped answering", r.opts.ScenarioTimeout)
		}
	}
	if ctx.Err() != nil {
		r.stopped = "the run's context ended: " + ctx.Err().Error()
	}
}

func (s *scene) closeAll() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.Close() })
	}
	wg.Wait()
}

// why words a step's error, naming the deadline when it was that.
func (s *scene) why(err error) string {
	if s.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within the scenario's %v", s.r.opts.ScenarioTimeout)
	}
	return err.Error()
}

// open starts (or dials) the agent and taps the connection.
func (s *scene) open() (*tap, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, errTimeout
	}
	rwc, err := s.r.dial(s.ctx)
	if err != nil {
		return nil, err
	}
	t := &tap{rwc: rwc, log: newWireLog(s.r.trace)}
	s.mu.Lock()
	s.conns = append(s.conns, t)
	s.mu.Unlock()
	if s.ctx.Err() != nil { // closeAll may have run before the append
		t.Close()
		return nil, errTimeout
	}
	return t, nil
}

func (r *runner) dial(ctx context.Context) (io.ReadWriteCloser, error) {
	if r.target.Dial != nil {
		return r.target.Dial(ctx)
	}
	cmd := exec.Command(r.target.Command[0], r.target.Command[1:]...)
	cmd.Dir = r.target.Dir
	if cmd.Dir == "" {
		cmd.Dir = r.opts.Workspace
	}
	cmd.Env = r.target.Env
	ct := &acp.CommandTransport{Command: cmd, ShutdownGrace: time.Second, TerminateGrace: time.Second}
	if r.trace != nil {
		ct.Stderr = &stderrNotes{trace: r.trace}
	}
	return ct.Connect(ctx)
}

// stderrNotes copies the agent's stderr into the trace, a note per line.
type stderrNotes struct {
	trace *traceOut
	mu    sync.Mutex
	buf   []byte
}

func (w *stderrNotes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = splitLines(append(w.buf, p...), func(line []byte) {
		w.trace.note("stderr: " + strings.TrimSuffix(string(line), "\r"))
	})
	if len(w.buf) > 4096 { // a line without end: note what came
		w.trace.note("stderr: " + string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}
