package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/procgroup"
	"github.com/acpclient/acp/internal/wsroot"
	"github.com/acpclient/acp/schema"
)

// defaultOutputLimit is both the default retained-output cap and the
// default ceiling on it. A MiB is some twenty thousand lines, more than a
// model can usefully read back, and with defaultMaxTerminals it bounds what
// one manager retains at 64 MiB.
const defaultOutputLimit = 1 << 20

// defaultMaxTerminals is Terminals.MaxTerminals when it is 0: agents
// run a handful of commands at a time and release them, so 64 leaves room
// for servers and watchers left running while refusing a flood.
const defaultMaxTerminals = 64

// drainGrace is how long, after a command exits, its exit is held back so the
// reader can collect the last output. It is bounded because a background
// process the command left behind may keep the output pipe open for good.
const drainGrace = 500 * time.Millisecond

// Terminals serves terminal/* (see [Terminals.Handlers]) by
// running each command as a local process. The zero value is usable.
//
// Commands run directly (no shell) with stdin from the null device and
// stdout and stderr merged into one bounded buffer. On Unix each runs in its
// own process group, so that kill and release end the command together with
// every process it started that stayed in the group; a process that leaves
// the group (setsid, a daemonizing tool) is out of reach, as it would be in
// any terminal. On Windows each runs in a job object of its own, which every
// process it starts joins; kill and release terminate the job, and a killed
// command reports exit code 1 rather than a signal. Commands are found in the
// PATH of their own environment (on Windows, with PATHEXT's extensions).
// Other systems refuse terminal/create.
//
// Commands do not outlive the client process, even one killed by SIGKILL
// that releases nothing; the same machinery ends an agent started by
// [acp.CommandTransport]. On Unix a watchdog joins each command's process
// group: a /bin/sh (under 2 MB resident, mostly shared; no CPU) blocked
// reading a pipe whose write end only the client holds; when the client
// dies the kernel closes that end and the watchdog SIGKILLs the group. On
// Linux the command itself also gets SIGKILL from the kernel when the
// client dies (Pdeathsig). On Windows the command's job kills what is left
// in it when its last handle closes, which the client's death does.
//
// What escapes: on Unix, a descendant that leaves the group on purpose
// (setsid, setpgid: daemons, tmux or screen servers), which kill and
// release miss too; a process some daemon starts on the command's behalf
// (docker run -d, systemd-run), which was never its descendant; and,
// without /bin/sh, on the client's death, every process but the command
// itself on Linux and everything on other Unix systems. On Windows, a
// process the command starts in the moment before it joins its job. A
// command running as the client's user can always escape on purpose (by
// killing its watchdog, for one): the guarantee is for careless commands,
// like a forgotten dev server, not for ones bent on staying.
//
// The working directory must lie inside the roots (after evaluating
// symlinks) and defaults to the first root; with no roots at all every
// create is refused. This bounds where a command starts, not what it can
// touch: a command can read and write anything its user can. For the same
// reason the check is by name, as the start is (os/exec changes directory
// by name in the child, with no descriptor to hold): a directory swapped
// for a symlink in between moves where the command starts, which a command
// can do itself with cd.
//
// Unknown terminal ids, including ids released earlier and ids of another
// session, are answered with [schema.CodeResourceNotFound] and data
// {"terminalId": …}.
//
// All methods may be called concurrently; in particular TerminalOutput,
// KillTerminal and ReleaseTerminal work while WaitForTerminalExit blocks on
// the same terminal. Only WaitForTerminalExit blocks for long (until the
// command exits or ctx is done). ReleaseTerminal, CloseSession and Close wait
// for the killed processes to be reaped and their output readers to stop,
// which takes moments; ReleaseTerminal stops waiting when its ctx is done.
//
// What one agent can make the client hold is bounded: at most MaxTerminals
// terminals (64) with at most MaxOutputBytes (1 MiB) of output each. A
// running command costs a process, two descriptors and two parked
// goroutines, and on Unix its watchdog one more process, two descriptors
// and a parked goroutine (until the terminal is released, or the group
// killed). On Linux (5.4 or later) it holds no OS thread, as the exit is
// awaited through a pidfd in Go's network poller; one thread, shared by all
// terminals and agents, starts the commands and lives while any of them is
// unreleased. On other systems, and on older Linux kernels, each running
// command holds a thread blocked in wait until it exits.
//
// On Linux, an exited command's process stays a zombie until its terminal is released:
// that keeps its process-group id from being reused, so a late kill cannot
// hit an unrelated process. Agents must release terminals (the protocol says
// so); call Close when the connection ends to release whatever remains.
type Terminals struct {
	// Roots confine the working directory; when empty, the session's roots
	// from the request context are used.
	Roots []string

	// DefaultOutputLimit is the retained-output cap in bytes for requests
	// without outputByteLimit. 0 means 1 MiB.
	DefaultOutputLimit int64

	// MaxOutputBytes is the most output one terminal retains, whatever
	// the agent's outputByteLimit (or DefaultOutputLimit) says: a larger
	// request is lowered to it. 0 means 1 MiB. Past the cap the oldest
	// output is dropped, at a character boundary, and terminal/output
	// reports truncated: true, as the protocol specifies for
	// outputByteLimit. Memory for a terminal's output grows with what it
	// retains, up to this cap.
	MaxOutputBytes int64

	// MaxTerminals caps the terminals that exist at once (created and not
	// yet released, whether or not their command still runs). 0 means 64.
	// At the cap terminal/create is refused with an error that wraps
	// [schema.ErrLimitExceeded] and names the limit; releasing a terminal frees
	// its slot. Together with MaxOutputBytes it bounds the memory, the
	// processes and the descriptors one agent can make the client hold.
	MaxTerminals int

	// Env is the environment commands start from, in os.Environ form; the
	// request's variables are set over it. nil means os.Environ().
	Env []string

	// OnOutput, if set, receives every chunk of output as it is read, e.g.
	// to show it live in a tool call. It is called on the terminal's reader
	// goroutine, one call at a time per terminal, concurrently for different
	// terminals. chunk is the callee's to keep, but it may end in the middle
	// of a UTF-8 character. A slow OnOutput stalls the command once the pipe
	// fills, so hand the chunk off instead of doing slow work.
	//
	// No call for a terminal starts after ReleaseTerminal, CloseSession or
	// Close has returned for it. They do not wait for a call already in
	// progress to return, so OnOutput may itself call them (or the
	// Client's Close) for any terminal, including its own, without
	// deadlocking.
	OnOutput func(terminalID string, chunk []byte)

	mu       sync.Mutex
	terms    map[string]*terminal
	starting int // creates that passed the MaxTerminals check, not yet in terms
	closed   bool
	closing  chan struct{} // closed when the first Close has finished
}

// Handlers returns the handlers to set as [acp.ClientOptions.Terminal]: the five
// requests, CloseSession when a session closes and Close when the client
// closes, all bound to m.
func (m *Terminals) Handlers() acp.TerminalHandlers {
	return acp.TerminalHandlers{
		Create:       m.CreateTerminal,
		Output:       m.TerminalOutput,
		WaitForExit:  m.WaitForTerminalExit,
		Kill:         m.KillTerminal,
		Release:      m.ReleaseTerminal,
		CloseSession: m.CloseSession,
		Close:        m.Close,
	}
}

// terminal is one command and its captured output.
type terminal struct {
	id, sessionID string
	cmd           *exec.Cmd
	tree          *procgroup.Group // the command and what it started
	pipe          *os.File         // read end of the stdout+stderr pipe

	readerDone chan struct{} // reader saw EOF or pipe was closed
	exited     chan struct{} // status is set
	stop       chan struct{} // destroy has begun
	destroyed  chan struct{} // killed, reaped, readers finished
	destroy1   sync.Once

	mu         sync.Mutex
	out        tailBuffer
	status     exitStatus
	released   bool // no OnOutput call starts once set
	inCallback bool // the reader is in an OnOutput call
}

type exitStatus struct {
	code     uint32
	signal   string // "" for a normal exit
	signaled bool
}

// CreateTerminal serves terminal/create. It returns as soon as the process
// has started.
func (m *Terminals) CreateTerminal(ctx context.Context, req *schema.CreateTerminalRequest) (*schema.CreateTerminalResponse, error) {
	if m.isClosed() {
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: "workspace: terminal manager is closed"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkCommand(req); err != nil {
		return nil, err
	}
	if err := m.reserve(); err != nil {
		return nil, err
	}
	registered := false
	defer func() {
		if !registered {
			m.mu.Lock()
			m.starting--
			m.mu.Unlock()
		}
	}()
	roots := m.Roots
	if len(roots) == 0 {
		roots = acp.RootsFromContext(ctx)
	}
	dir, err := workDir(roots, req.Cwd)
	if err != nil {
		return nil, err
	}
	env := mergeEnv(m.Env, req.Env)
	path, err := lookCommand(req.Command, dir, env)
	if err != nil {
		return nil, &schema.Error{
			Code:    schema.CodeResourceNotFound,
			Message: fmt.Sprintf("workspace: command not found: %q", req.Command),
			Data:    mustJSON(map[string]string{"command": req.Command}),
		}
	}

	ceiling := int64(defaultOutputLimit)
	if m.MaxOutputBytes > 0 {
		ceiling = m.MaxOutputBytes
	}
	limit := int64(defaultOutputLimit)
	if m.DefaultOutputLimit > 0 {
		limit = m.DefaultOutputLimit
	}
	if req.OutputByteLimit != nil {
		limit = int64(min(*req.OutputByteLimit, uint64(math.MaxInt64)))
	}
	limit = min(limit, ceiling, math.MaxInt)

	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("workspace: create terminal: %w", err)
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   append([]string{req.Command}, req.Args...),
		Env:    env,
		Dir:    dir,
		Stdout: w, // one pipe for both keeps their interleaving
		Stderr: w,
	}
	tree, err := procgroup.Start(cmd)
	w.Close() // the child holds its own copy; ours would block EOF forever
	if err != nil {
		r.Close()
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: fmt.Sprintf("workspace: start %q: %v", req.Command, unwrapPathError(err))}
	}
	if err := tree.Tracked(); err != nil {
		// A command whose tree kill could not reach is not run at all.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tree.Reaped()
		tree.Close()
		r.Close()
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: fmt.Sprintf("workspace: start %q: tracking its processes: %v", req.Command, err)}
	}

	t := &terminal{
		id:         newTerminalID(),
		sessionID:  req.SessionID,
		cmd:        cmd,
		tree:       tree,
		pipe:       r,
		out:        tailBuffer{limit: int(limit)},
		readerDone: make(chan struct{}),
		exited:     make(chan struct{}),
		stop:       make(chan struct{}),
		destroyed:  make(chan struct{}),
	}
	go t.read(m.OnOutput)
	go t.watch()

	m.mu.Lock()
	m.starting--
	registered = true
	if m.closed {
		// Close ran while the process was starting and could not see it.
		m.mu.Unlock()
		t.destroy()
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: "workspace: terminal manager is closed"}
	}
	if m.terms == nil {
		m.terms = make(map[string]*terminal)
	}
	m.terms[t.id] = t
	m.mu.Unlock()
	return &schema.CreateTerminalResponse{TerminalID: t.id}, nil
}

// TerminalOutput serves terminal/output. While the command runs, a trailing
// incomplete UTF-8 character is held back until the rest of it arrives.
func (m *Terminals) TerminalOutput(ctx context.Context, req *schema.TerminalOutputRequest) (*schema.TerminalOutputResponse, error) {
	t, err := m.lookup(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	exited := isClosed(t.exited)
	resp := &schema.TerminalOutputResponse{Output: t.out.String(exited), Truncated: t.out.truncated}
	if exited {
		st := t.status.wire()
		resp.ExitStatus = &schema.TerminalExitStatus{ExitCode: st.ExitCode, Signal: st.Signal}
	}
	return resp, nil
}

// WaitForTerminalExit serves terminal/wait_for_exit. It blocks until the command
// exits or ctx is done, in which case it returns ctx's error.
func (m *Terminals) WaitForTerminalExit(ctx context.Context, req *schema.WaitForTerminalExitRequest) (*schema.WaitForTerminalExitResponse, error) {
	t, err := m.lookup(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.exited:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status.wire(), nil
}

// KillTerminal serves terminal/kill: it sends SIGKILL to the command's
// process group. The terminal stays valid for output and wait_for_exit.
func (m *Terminals) KillTerminal(ctx context.Context, req *schema.KillTerminalRequest) (*schema.KillTerminalResponse, error) {
	t, err := m.lookup(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	if err := t.kill(); err != nil {
		return nil, &schema.Error{Code: schema.CodeInternalError, Message: fmt.Sprintf("workspace: kill terminal %s: %v", t.id, err)}
	}
	return &schema.KillTerminalResponse{}, nil
}

// ReleaseTerminal serves terminal/release: it kills the command's process
// group if anything in it still runs and frees the terminal; its id is
// unknown from then on. It waits for the processes to be reaped unless ctx
// is done first, in which case the cleanup finishes in the background and
// the release still counts as done.
func (m *Terminals) ReleaseTerminal(ctx context.Context, req *schema.ReleaseTerminalRequest) (*schema.ReleaseTerminalResponse, error) {
	t, err := m.lookup(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	delete(m.terms, t.id)
	m.mu.Unlock()
	go t.destroy()
	select {
	case <-t.destroyed:
	case <-ctx.Done():
	}
	return &schema.ReleaseTerminalResponse{}, nil
}

// CloseSession kills and releases every terminal of the session, and returns
// once their processes are reaped. Call it when a session ends.
func (m *Terminals) CloseSession(sessionID string) {
	m.mu.Lock()
	var ts []*terminal
	for id, t := range m.terms {
		if t.sessionID == sessionID {
			ts = append(ts, t)
			delete(m.terms, id)
		}
	}
	m.mu.Unlock()
	destroyAll(ts)
}

// Close kills and releases every terminal and refuses new ones. It returns
// once every process group it started has been killed and reaped; calling it
// again (even concurrently) waits for the same and returns nil.
func (m *Terminals) Close() error {
	m.mu.Lock()
	if m.closed {
		done := m.closing
		m.mu.Unlock()
		<-done
		return nil
	}
	m.closed = true
	m.closing = make(chan struct{})
	ts := make([]*terminal, 0, len(m.terms))
	for _, t := range m.terms {
		ts = append(ts, t)
	}
	m.terms = nil
	m.mu.Unlock()
	destroyAll(ts)
	close(m.closing)
	return nil
}

// reserve takes a slot for a terminal about to start, or refuses it at
// MaxTerminals. Slots of creates still starting count, so concurrent
// creates cannot overshoot.
func (m *Terminals) reserve() error {
	max := m.MaxTerminals
	if max <= 0 {
		max = defaultMaxTerminals
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.terms)+m.starting >= max {
		return limitExceeded(schema.CodeInternalError,
			map[string]any{"limit": "workspace.Terminals.MaxTerminals", "max": max},
			"workspace: limit exceeded: %d terminals exist, the most workspace.Terminals.MaxTerminals allows; release one first", max)
	}
	m.starting++
	return nil
}

func (m *Terminals) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// lookup finds a live terminal of the session. A terminal of another
// session is reported as unknown, so one session cannot probe another's.
func (m *Terminals) lookup(sessionID, id string) (*terminal, error) {
	m.mu.Lock()
	t := m.terms[id]
	m.mu.Unlock()
	if t == nil || t.sessionID != sessionID {
		return nil, &schema.Error{
			Code:    schema.CodeResourceNotFound,
			Message: fmt.Sprintf("workspace: unknown terminal %q (never created, or already released)", id),
			Data:    mustJSON(map[string]string{"terminalId": id}),
		}
	}
	return t, nil
}

func destroyAll(ts []*terminal) {
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(t.destroy)
	}
	wg.Wait()
}

// read copies the command's output into the buffer, and to onOutput, until
// the pipe is closed on either end.
func (t *terminal) read(onOutput func(string, []byte)) {
	defer close(t.readerDone)
	defer t.pipe.Close()
	b := make([]byte, 32<<10)
	for {
		n, err := t.pipe.Read(b)
		if n > 0 {
			t.mu.Lock()
			t.out.Write(b[:n])
			call := onOutput != nil && !t.released
			t.inCallback = call
			t.mu.Unlock()
			if call {
				onOutput(t.id, append([]byte(nil), b[:n]...))
				t.mu.Lock()
				t.inCallback = false
				t.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// watch records the command's exit, without reaping it (see
// Terminals's doc), once the output has been drained, drainGrace has
// passed or the terminal is being destroyed.
func (t *terminal) watch() {
	st, err := waitNoReap(t.cmd.Process.Pid)
	if err != nil {
		// Not expected for our own child; fall back to reaping it.
		_ = t.cmd.Wait()
		st = statusOf(t.cmd.ProcessState)
	}
	timer := time.NewTimer(drainGrace)
	select {
	case <-t.readerDone:
	case <-t.stop:
	case <-timer.C:
	}
	timer.Stop()
	t.mu.Lock()
	t.status = st
	close(t.exited)
	t.mu.Unlock()
}

// kill ends the command's whole process tree: SIGKILL to its process
// group, or on Windows the termination of its job.
func (t *terminal) kill() error {
	err := t.tree.Signal(syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil // nothing of it is left
	}
	return err
}

// destroy kills the group, stops the reader and reaps the leader. It runs
// once; later calls wait for the first.
func (t *terminal) destroy() {
	t.destroy1.Do(func() {
		_ = t.kill()
		t.mu.Lock()
		t.released = true
		inCallback := t.inCallback
		t.mu.Unlock()
		close(t.stop)
		// Closing our end stops the reader even if a process that escaped
		// the group still holds the pipe.
		t.pipe.Close()
		<-t.exited
		// Wait for the reader to stop, but not for an OnOutput call in
		// progress: that call may be the one destroying the terminal
		// (OnOutput calling Close), and waiting for it would deadlock.
		// Now that released is set no new call starts, so a reader not in
		// a call ends promptly, and one in a call ends when it returns.
		if !inCallback {
			<-t.readerDone
		}
		_ = t.cmd.Wait() // reap; after this the group id may be reused
		t.tree.Reaped()
		t.tree.Close() // the group is dead: this only reaps its watchdog
		close(t.destroyed)
	})
	<-t.destroyed
}

func (s exitStatus) wire() *schema.WaitForTerminalExitResponse {
	if s.signaled {
		sig := s.signal
		return &schema.WaitForTerminalExitResponse{Signal: &sig}
	}
	code := s.code
	return &schema.WaitForTerminalExitResponse{ExitCode: &code}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, whose
// remaining bytes have not been read yet.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func newTerminalID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "term_" + hex.EncodeToString(b[:])
}

// checkCommand refuses what exec would refuse less clearly.
func checkCommand(req *schema.CreateTerminalRequest) error {
	bad := func(format string, args ...any) error {
		return &schema.Error{Code: schema.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
	}
	if req.Command == "" {
		return bad("workspace: empty command")
	}
	if strings.IndexByte(req.Command, 0) >= 0 {
		return bad("workspace: command contains a NUL byte")
	}
	for _, a := range req.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return bad("workspace: argument %q contains a NUL byte", a)
		}
	}
	for _, e := range req.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") || strings.IndexByte(e.Value, 0) >= 0 {
			return bad("workspace: invalid environment variable %q", e.Name)
		}
	}
	return nil
}

// workDir resolves the requested working directory (default: the first
// root) and checks that it lies inside a root once symlinks are evaluated on
// both sides.
func workDir(roots []string, cwd string) (string, error) {
	var real []string
	for _, r := range roots {
		r, err := wsroot.Clean(r)
		if err != nil {
			continue // a relative root has no meaning
		}
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, rr)
		}
	}
	if len(real) == 0 {
		return "", &schema.Error{Code: schema.CodeInvalidParams, Message: "workspace: no workspace roots; refusing to start a command"}
	}
	if cwd == "" {
		return real[0], nil
	}
	clean, err := checkPath(cwd, cwd)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(clean)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", pathError(schema.CodeResourceNotFound, cwd, "workspace: working directory not found: %s", cwd)
		}
		return "", pathError(schema.CodeInvalidParams, cwd, "workspace: working directory %s: %v", cwd, unwrapPathError(err))
	}
	for _, r := range real {
		if _, ok := within(r, dir); ok {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return "", pathError(schema.CodeInvalidParams, cwd, "workspace: working directory %s is not a directory", cwd)
			}
			return dir, nil
		}
	}
	return "", pathError(schema.CodeInvalidParams, cwd, "workspace: working directory %s is outside the workspace roots", cwd)
}

// mergeEnv sets vars over base (nil: os.Environ()), replacing existing
// entries in place so that each name appears once.
func mergeEnv(base []string, vars []schema.EnvVariable) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(vars))
	index := make(map[string]int, len(base)+len(vars))
	set := func(name, kv string) {
		if i, ok := index[name]; ok {
			env[i] = kv
			return
		}
		index[name] = len(env)
		env = append(env, kv)
	}
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		set(name, kv)
	}
	for _, v := range vars {
		set(v.Name, v.Name+"="+v.Value)
	}
	return env
}
