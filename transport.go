package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/acpclient/acp/internal/engine"
	"github.com/acpclient/acp/internal/procgroup"
)

// A Transport opens the byte stream to an agent; [Connect] calls Connect
// once and speaks ACP over the result. Two are ready: [CommandTransport]
// starts and supervises an agent subprocess, and [StreamTransport] speaks
// over any reader/writer pair. Implement Transport to reach an agent some
// other way (a socket, an SSH channel, an in-process pipe): the client does
// the framing, the limits and the protocol on top of the [Conn] it returns.
type Transport interface {
	// Connect opens the stream. If ctx ends first, it returns ctx's error
	// and leaves nothing open.
	Connect(ctx context.Context) (Conn, error)
}

// Conn is an open byte stream to an agent: newline-delimited JSON-RPC
// messages in both directions.
//
// Read returns the agent's output, and io.EOF (or any error) when it has
// ended: the connection then ends. Write carries the agent's input; it may
// block while the agent does not read. The client reads from one goroutine
// and writes from another, never two of either at once.
//
// When the client closes, it stops writing and, if the Conn has a
// CloseWrite() error method (as *net.TCPConn has), calls it so the agent
// sees the end of its input; then it calls Close once. Close must make a
// blocked Read and a blocked Write return. The client calls Close early,
// without CloseWrite, when the agent stops reading its input for longer
// than the shutdown grace.
type Conn interface {
	io.Reader
	io.Writer
	io.Closer
}

// opener is implemented by the transports of this package, which hand the
// client more than a Conn: the agent process to supervise, and its stderr.
type opener interface {
	open(ctx context.Context, h linkHooks) (*link, error)
}

// openLink opens t for a client.
func openLink(ctx context.Context, t Transport, h linkHooks) (*link, error) {
	if o, ok := t.(opener); ok {
		return o.open(ctx, h)
	}
	if t == nil {
		return nil, errors.New("acp: nil Transport")
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, errors.New("acp: Transport.Connect returned a nil Conn")
	}
	l := &link{r: conn, w: conn}
	var once sync.Once
	closeAll := func() (err error) { once.Do(func() { err = conn.Close() }); return err }
	l.closeRead, l.closeWrite = closeAll, closeAll
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		var wOnce sync.Once
		l.closeWrite = func() (err error) { wOnce.Do(func() { err = cw.CloseWrite() }); return err }
	}
	return l, nil
}

// link is an open transport: the two byte streams and how to end them. It
// is the Conn the transports of this package return from Connect.
type link struct {
	r          io.Reader
	w          io.Writer
	closeRead  func() error
	closeWrite func() error
	proc       *process // nil for streams
}

// Read reads the agent's output.
func (l *link) Read(b []byte) (int, error) { return l.r.Read(b) }

// Write writes to the agent's input.
func (l *link) Write(b []byte) (int, error) { return l.w.Write(b) }

// CloseWrite ends the agent's input.
func (l *link) CloseWrite() error { return l.closeWrite() }

// Close ends the connection: the agent's input is closed, an agent process
// is shut down in stages (see [CommandTransport]), then its output is
// closed.
func (l *link) Close() error {
	err := l.closeWrite()
	if l.proc != nil {
		l.proc.shutdown()
	}
	if rerr := l.closeRead(); err == nil {
		err = rerr
	}
	return err
}

type linkHooks struct {
	stderrLine func(line []byte) // each stderr line, from the stderr goroutine
}

// CommandTransport runs an agent subprocess and speaks ACP over its
// stdin/stdout. The caller builds Command (path, args, Env, Dir, SysProcAttr)
// and must leave its Stdin, Stdout and Stderr nil: the transport owns them.
//
// The agent is started in its own process group, so a wrapper (npx, uvx, a
// shell) and everything it spawns can be signalled together. Its stderr is
// always drained — an undrained pipe eventually blocks an agent — into a
// 64 KiB ring whose tail is attached to connection errors, and line by line
// to Stderr.
//
// Closing the client shuts the agent down in stages: stdin is closed, then
// after ShutdownGrace the group gets SIGTERM, then after TerminateGrace
// SIGKILL. Whatever is left of the group when the agent has exited is killed
// too, so no process the agent started outlives the connection. A Connect
// that fails (its context ended before initialize was answered, or the
// agent answered with an error or another protocol version) skips the
// stages: it SIGKILLs the group and returns as soon as the agent is gone.
//
// The agent also dies with its host, even when the host is killed by
// SIGKILL and closes nothing. On Unix a watchdog joins the agent's process
// group: a /bin/sh (under 2 MB resident, mostly shared; no CPU) that blocks
// reading a pipe whose write end only the host holds; when the host dies
// the kernel closes that end and the watchdog SIGKILLs the whole group.
// On Linux the agent itself also gets SIGKILL from the kernel when the host
// dies (SysProcAttr.Pdeathsig, unless the caller set another signal); the
// agent is started from a dedicated thread, because the kernel sends that
// signal when the thread that started the child exits, and the Go runtime
// retires threads of goroutines that exit while locked to them.
//
// A connected agent holds no OS thread of its own on Linux: its exit and
// its watchdog's are awaited through pidfds in Go's poller, on one goroutine
// shared by all agents (kernels before 5.3 fall back to a blocked thread per
// process). On macOS, the BSDs and Windows each agent holds one thread,
// blocked in its wait; Go stops a program at 10 000 threads.
//
// A client with ClientOptions.Restart starts the agent again after it
// died: a copy of Command (same path, arguments, environment, directory
// and process attributes), since an exec.Cmd runs once.
//
// What escapes: a descendant that leaves the agent's process group (setsid,
// setpgid — daemons, or a terminal multiplexer the agent starts) is neither
// reached by Close nor by the watchdog; only the kernel could track it, by
// making the host a subreaper, which would change the host process and is
// left to the caller. An agent running as the host's user can always
// escape on purpose (setsid, or killing its watchdog); these guarantees
// hold for agents that are careless, not for ones bent on staying. Without
// /bin/sh the agent runs without a watchdog; then, on Linux, only the agent
// itself dies with its host. On Windows, where there are no process groups
// and no signals, the agent runs in a job object of its own, which every
// process it starts joins: SIGTERM and SIGKILL both become terminating the
// job, and the job ends whatever is still in it when the host closes it or
// dies. A process the agent starts in the moment before it joins the job,
// or one that breaks away from it, escapes.
type CommandTransport struct {
	Command *exec.Cmd

	// ShutdownGrace is how long Close waits for the agent to exit after its
	// stdin is closed. Zero means 5s. Some agents never exit on stdin EOF.
	ShutdownGrace time.Duration
	// TerminateGrace is how long Close waits after SIGTERM before SIGKILL.
	// Zero means 2s.
	TerminateGrace time.Duration

	// Stderr, if set, receives the agent's stderr line by line (each line
	// with its newline), written from the goroutine that drains the pipe: a
	// slow writer delays only stderr, never the protocol.
	Stderr io.Writer

	// PipeBytes, on Linux, is the capacity asked of the pipe the agent
	// writes its output into (fcntl F_SETPIPE_SZ; the kernel rounds it up
	// to a power of two of pages). Zero leaves the kernel's default, 64
	// KiB. An agent that writes in bursts larger than the pipe waits in
	// write until the client has read the rest; with room for a whole
	// burst it goes on to make the next while the client reads this one:
	// the acp command asks 1 MiB, which made a 100 000-chunk turn from an
	// agent writing 1 MiB at a time take 15–18 % less time
	// (bench/README.md).
	//
	// The memory is the kernel's and only held while the pipe holds data,
	// but the capacity counts at once against the user's
	// /proc/sys/fs/pipe-user-pages-soft (64 MiB by default), and an
	// unprivileged user past it gets 8 KiB pipes everywhere until enough
	// are closed: ask for it for a few agents, not for a thousand. Best
	// effort: a size the kernel refuses (past /proc/sys/fs/pipe-max-size,
	// 1 MiB by default, or past that limit) leaves the pipe as it was, and
	// the agent runs. Ignored on other systems.
	PipeBytes int
}

// StreamTransport speaks ACP over an existing byte stream: Reader carries the
// agent's output, Writer the agent's input. When the client closes, Writer
// is closed if it is an io.Closer, and so is Reader — a Reader that is not
// an io.Closer must end by itself when the agent goes away, or the client's
// Close waits for it.
type StreamTransport struct {
	Reader io.Reader
	Writer io.Writer
}

// Connect returns a Conn over Reader and Writer.
func (t *StreamTransport) Connect(ctx context.Context) (Conn, error) {
	return t.open(ctx, linkHooks{})
}

func (t *StreamTransport) open(context.Context, linkHooks) (*link, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("acp: StreamTransport needs both Reader and Writer")
	}
	l := &link{r: t.Reader, w: t.Writer}
	var rOnce, wOnce sync.Once
	l.closeRead = func() (err error) {
		rOnce.Do(func() {
			if c, ok := t.Reader.(io.Closer); ok {
				err = c.Close()
			}
		})
		return err
	}
	l.closeWrite = func() (err error) {
		wOnce.Do(func() {
			if c, ok := t.Writer.(io.Closer); ok {
				err = c.Close()
			}
		})
		return err
	}
	return l, nil
}

// stderrRingSize bounds what is kept of the agent's stderr.
const stderrRingSize = 64 << 10

// stderrReadBuf is the size of the reads from the agent's stderr.
const stderrReadBuf = 2 << 10

// Connect starts the agent and returns a Conn over its stdin and stdout.
// Closing the Conn shuts the agent down in stages, as described above.
func (t *CommandTransport) Connect(ctx context.Context) (Conn, error) {
	return t.open(ctx, linkHooks{})
}

func (t *CommandTransport) open(ctx context.Context, h linkHooks) (*link, error) {
	cmd := t.Command
	if cmd == nil {
		return nil, errors.New("acp: CommandTransport.Command is nil")
	}
	if cmd.Process != nil {
		// Started before: this is a restart (ClientOptions.Restart). An
		// exec.Cmd runs once, so a copy of it starts the new agent.
		cmd = cloneCommand(cmd)
	} else if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("acp: CommandTransport owns the command's stdin, stdout and stderr; leave them nil")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Our own pipes rather than cmd.StdoutPipe: exec.Cmd.Wait closes the
	// pipes it made, which would cut off the last stderr bytes of a dying
	// agent — exactly the ones worth reporting.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	if t.PipeBytes > 0 {
		_ = setPipeSize(outR, t.PipeBytes) // best effort: see PipeBytes
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// The group's watchdog is best effort: without /bin/sh the agent still
	// runs, unwatched.
	group, err := procgroup.Start(cmd)
	if err != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("acp: starting the agent: %w", err)
	}
	closeAll(inR, outW, errW) // the child has its copies

	p := &process{
		group:      group,
		cmd:        cmd,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		grace:      orDefault(t.ShutdownGrace, 5*time.Second),
		termGrace:  orDefault(t.TerminateGrace, 2*time.Second),
	}
	go p.drainStderr(errR, t.Stderr, h.stderrLine)
	// Reap waits without a thread of its own (on Linux) and runs this on a
	// goroutine shared by all agents: it must not block.
	procgroup.Reap(cmd, func(err error) {
		group.Reaped()
		p.mu.Lock()
		p.state, p.waitErr = cmd.ProcessState, err
		p.mu.Unlock()
		close(p.exited)
		// Wake the reader: from now on it reads what the agent left in the
		// pipe and stops when the pipe is empty, even if a process the agent
		// started still holds the write end (see exitReader). The deadline
		// is a wake-up, not a wait: it has passed when it is set.
		_ = outR.SetReadDeadline(time.Now())
		_ = errR.SetReadDeadline(time.Now())
	})

	var rOnce, wOnce sync.Once
	return &link{
		r:          &exitReader{f: outR},
		w:          inW,
		closeRead:  func() (err error) { rOnce.Do(func() { err = outR.Close() }); return err },
		closeWrite: func() (err error) { wOnce.Do(func() { err = inW.Close() }); return err },
		proc:       p,
	}, nil
}

// cloneCommand returns an unstarted copy of cmd, for a transport that
// starts its agent again: the same program, arguments, environment,
// directory and process attributes (as the first start left them: the
// process group settings are set again anyway).
func cloneCommand(cmd *exec.Cmd) *exec.Cmd {
	n := &exec.Cmd{
		Path:       cmd.Path,
		Args:       slices.Clone(cmd.Args),
		Env:        slices.Clone(cmd.Env),
		Dir:        cmd.Dir,
		ExtraFiles: cmd.ExtraFiles,
		Cancel:     cmd.Cancel,
		WaitDelay:  cmd.WaitDelay,
		Err:        cmd.Err,
	}
	if cmd.SysProcAttr != nil {
		attr := *cmd.SysProcAttr
		n.SysProcAttr = &attr
	}
	return n
}

// exitReader reads the agent's stdout. Until the agent exits it reads as
// usual; the exit sets a deadline that has already passed, which wakes a
// blocked Read, and from then on each Read takes only what the pipe holds
// (readNow): the end of what the agent wrote is the end of the input. So
// the connection ends when the agent exits even if a grandchild keeps the
// pipe open, and nothing the agent wrote before exiting is lost. Where
// pipes have no deadlines (Windows), the connection then ends when the
// pipe closes or the client is closed.
type exitReader struct {
	f        *os.File
	draining bool // only the reader goroutine touches it
}

func (r *exitReader) Read(b []byte) (int, error) {
	if !r.draining {
		n, err := r.f.Read(b)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		r.draining = true
		_ = r.f.SetReadDeadline(time.Time{})
		if n > 0 {
			return n, nil
		}
	}
	return readNow(r.f, b)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// process supervises a started agent.
type process struct {
	cmd        *exec.Cmd
	exited     chan struct{}
	stderrDone chan struct{}
	grace      time.Duration
	termGrace  time.Duration
	group      *procgroup.Group

	mu      sync.Mutex
	state   *os.ProcessState
	waitErr error
	ring    []byte // the last stderrRingSize bytes of stderr
}

func (p *process) drainStderr(r *os.File, w io.Writer, onLine func([]byte)) {
	defer close(p.stderrDone)
	defer r.Close()
	er := &exitReader{f: r} // after the exit, read what is left and stop
	// Stderr is rarely busy: a small buffer, since every idle connection
	// holds one while it waits.
	buf := make([]byte, stderrReadBuf)
	var partial []byte
	for {
		n, err := er.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			p.mu.Lock()
			p.ring = append(p.ring, chunk...)
			if over := len(p.ring) - stderrRingSize; over > 0 {
				p.ring = append(p.ring[:0], p.ring[over:]...)
			}
			p.mu.Unlock()
			if w != nil || onLine != nil {
				partial = emitLines(append(partial, chunk...), w, onLine)
				if len(partial) == 0 && cap(partial) > stderrReadBuf {
					partial = nil // a long line is over: let its buffer go
				}
				if len(partial) > stderrRingSize {
					// A line that never ends is still output: flush it.
					emitLine(partial, w, onLine)
					partial = partial[:0]
				}
			}
		}
		if err != nil {
			if len(partial) > 0 {
				emitLine(partial, w, onLine)
			}
			return
		}
	}
}

// emitLines hands every complete line of b on and returns the unfinished rest.
func emitLines(b []byte, w io.Writer, onLine func([]byte)) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return b
		}
		emitLine(b[:i+1], w, onLine)
		b = b[i+1:]
	}
}

func emitLine(line []byte, w io.Writer, onLine func([]byte)) {
	if w != nil {
		_, _ = w.Write(line)
	}
	if onLine != nil {
		onLine(engine.TrimEOL(line))
	}
}

// stderrTail returns the kept end of the agent's stderr.
func (p *process) stderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.ring)
}

// exitError describes how the process ended, or nil if it is still running.
func (p *process) exitError() *ExitError {
	select {
	case <-p.exited:
	default:
		return nil
	}
	p.mu.Lock()
	st, werr := p.state, p.waitErr
	p.mu.Unlock()
	e := &ExitError{ExitCode: -1, StderrTail: p.stderrTail()}
	switch {
	case st != nil:
		e.Status = st.String()
		e.ExitCode = st.ExitCode()
	case werr != nil:
		e.Status = werr.Error()
	default:
		e.Status = "exited"
	}
	return e
}

// awaitExit waits until the process has exited and its stderr has been
// read to the end of what it wrote (exitReader), so an error about its death
// can carry its last words; or until stop is closed.
func (p *process) awaitExit(stop <-chan struct{}) {
	select {
	case <-p.exited:
	case <-stop:
		return
	}
	select {
	case <-p.stderrDone:
	case <-stop:
	}
}

// kill ends the agent and its process group at once, skipping the staged
// shutdown, and returns when the agent has exited. It is for an agent that
// never became usable (Connect failed): it has no session to save, and the
// caller's deadline must hold. The shutdown that follows finds it gone.
func (p *process) kill() {
	// The agent leads its group, so it cannot setsid; it could still move to
	// another group of the session, which the group kill would miss.
	_ = p.cmd.Process.Kill()
	_ = p.group.Signal(syscall.SIGKILL)
	<-p.exited
}

// shutdown ends the process in stages; closeStdin has already been called.
// It returns once the process has exited and its group has been killed.
func (p *process) shutdown() {
	if !waitOrTimeout(p.exited, p.grace) {
		_ = p.group.Signal(syscall.SIGTERM)
		if !waitOrTimeout(p.exited, p.termGrace) {
			p.kill()
		}
	}
	// The leader is gone; its children (an npx wrapper's node process, a
	// shell's jobs) may not be. They are ours to end, and Close promises
	// they are gone when it returns, so wait for the kill to land.
	_ = p.group.Signal(syscall.SIGKILL)
	// The group's watchdog, our child, died with it; reaped (Close waits
	// for that), it leaves the group, so Alive's kill(-pgid, 0) can say
	// at once that nothing is left. Left a zombie, it made Alive read the
	// stat file of every process on the machine: a tenth of a short run's
	// CPU.
	p.group.Close()
	for wait := time.Millisecond; p.group.Alive() && wait < time.Second; wait *= 2 {
		time.Sleep(wait)
	}
	// Grandchildren can hold the stderr pipe open; do not wait for them.
	waitOrTimeout(p.stderrDone, 100*time.Millisecond)
}

func waitOrTimeout(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
