//go:build linux

package workspace

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"
)

// An agent asking to retain 2^62 bytes of a command that writes without end
// gets the manager's ceiling: the retained output, and the memory behind
// it, stay at 1 MiB while the command writes many times that.
func TestTerminalOutputCeiling(t *testing.T) {
	const seen = 16 << 20
	var total atomic.Int64
	enough := make(chan struct{})
	var once sync.Once
	m, _ := newTM(t)
	m.OnOutput = func(_ string, chunk []byte) {
		if total.Add(int64(len(chunk))) >= seen {
			once.Do(func() { close(enough) })
		}
	}
	huge := uint64(1) << 62
	resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "yes", Args: []string{"0123456789abcdef"}, OutputByteLimit: &huge})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatalf("yes wrote only %d bytes", total.Load())
	}
	out := outputOf(t, m, "s", resp.TerminalID)
	t.Logf("yes wrote %d bytes; terminal/output returned %d", total.Load(), len(out.Output))
	if len(out.Output) > defaultOutputLimit || len(out.Output) < defaultOutputLimit-utf8Max {
		t.Errorf("retained %d bytes after %d written; want the 1 MiB ceiling", len(out.Output), total.Load())
	}
	if !out.Truncated {
		t.Error("truncated = false after the ceiling was passed")
	}
	if !strings.Contains(out.Output, "\n0123456789abcdef\n") {
		t.Errorf("output is not yes's: %q…", out.Output[:min(len(out.Output), 40)])
	}
	m.mu.Lock()
	tt := m.terms[resp.TerminalID]
	m.mu.Unlock()
	tt.mu.Lock()
	held := cap(tt.out.ring)
	tt.mu.Unlock()
	if held > defaultOutputLimit {
		t.Errorf("the output buffer holds %d bytes of memory, over the 1 MiB ceiling", held)
	}
}

const utf8Max = 4

// MaxOutputBytes lowers the agent's outputByteLimit and DefaultOutputLimit;
// a smaller request is kept, and truncation starts at a character.
func TestTerminalMaxOutputBytes(t *testing.T) {
	full := strings.Repeat("aé€😀", 100) // 1000 bytes
	for _, tt := range []struct {
		name     string
		max, def int64
		req      *uint64
		want     int
	}{
		{name: "request over the ceiling", max: 100, req: ptr[uint64](1 << 40), want: 100},
		{name: "default over the ceiling", max: 100, def: 500, want: 100},
		{name: "request under the ceiling", max: 100, req: ptr[uint64](50), want: 50},
		{name: "zero request", max: 100, req: ptr[uint64](0), want: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newTM(t)
			m.MaxOutputBytes, m.DefaultOutputLimit = tt.max, tt.def
			resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{
				SessionID: "s", Command: "printf", Args: []string{"%s", full}, OutputByteLimit: tt.req,
			})
			if err != nil {
				t.Fatal(err)
			}
			waitTerm(t, m, "s", resp.TerminalID)
			out := outputOf(t, m, "s", resp.TerminalID)
			checkTail(t, full, out.Output, out.Truncated, tt.want)
		})
	}
}

// The manager refuses terminals past MaxTerminals (64 by default) with an
// error naming the limit, and a release frees a slot.
func TestTerminalMaxTerminals(t *testing.T) {
	m, _ := newTM(t)
	var ids []string
	for range defaultMaxTerminals {
		ids = append(ids, startTerm(t, m, "s", "sleep", "300"))
	}
	_, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "true"})
	if !errors.Is(err, schema.ErrLimitExceeded) {
		t.Fatalf("create past the cap: err = %v, want schema.ErrLimitExceeded", err)
	}
	e := wantCode(t, err, schema.CodeInternalError)
	if !strings.Contains(e.Message, "MaxTerminals") || !strings.Contains(e.Message, "64") {
		t.Errorf("error does not name the limit: %q", e.Message)
	}
	// An exited but unreleased terminal still counts: its process is a
	// zombie the manager holds.
	if _, err := m.ReleaseTerminal(context.Background(), &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: ids[0]}); err != nil {
		t.Fatal(err)
	}
	done := startTerm(t, m, "s", "true")
	waitTerm(t, m, "s", done)
	if _, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "true"}); !errors.Is(err, schema.ErrLimitExceeded) {
		t.Errorf("create with an exited, unreleased terminal at the cap: err = %v, want schema.ErrLimitExceeded", err)
	}
}

// Concurrent creates cannot overshoot the cap.
func TestTerminalMaxTerminalsConcurrent(t *testing.T) {
	m, _ := newTM(t)
	m.MaxTerminals = 5
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "sleep", Args: []string{"300"}})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, schema.ErrLimitExceeded):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 5 || refused.Load() != 15 {
		t.Errorf("%d created and %d refused, want 5 and 15", ok.Load(), refused.Load())
	}
}

// Running commands must not hold an OS thread each: Go aborts the whole
// program at 10 000 threads.
func TestTerminalWaitHoldsNoThread(t *testing.T) {
	const n = 200
	m, _ := newTM(t)
	m.MaxTerminals = n
	before := osThreads(t)
	for range n {
		startTerm(t, m, "s", "sleep", "300")
	}
	// Each watcher is either in a system call (holding a thread of its
	// own while there) or parked in the poller. Count them once all have
	// got that far.
	deadline := time.Now().Add(60 * time.Second)
	for waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d exit watchers are waiting", waiters(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	grew := osThreads(t) - before
	t.Logf("%d running terminals added %d OS threads", n, grew)
	if grew > n/4 {
		t.Errorf("%d running terminals added %d OS threads", n, grew)
	}
}

// waiters counts goroutines waiting for a terminal's command to exit.
func waiters() int {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("workspace.waitNoReap")) && (bytes.Contains(g, []byte("[syscall")) || bytes.Contains(g, []byte("[IO wait"))) {
			count++
		}
	}
	return count
}

func osThreads(t *testing.T) int { return proctest.Threads(t) }

// OnOutput may end the terminal it reports on, or the whole manager,
// without deadlocking; no call starts once Close has returned.
func TestTerminalCloseFromOnOutput(t *testing.T) {
	for _, how := range []string{"Close", "ReleaseTerminal", "CloseSession"} {
		t.Run(how, func(t *testing.T) {
			m, _ := newTM(t)
			returned := make(chan struct{})
			var once sync.Once
			var after atomic.Int32
			var closed atomic.Bool
			created := make(chan struct{})
			m.OnOutput = func(id string, _ []byte) {
				<-created // else Close may run before the create finished
				if closed.Load() {
					after.Add(1)
				}
				once.Do(func() {
					defer close(returned)
					switch how {
					case "Close":
						m.Close()
					case "ReleaseTerminal":
						m.ReleaseTerminal(context.Background(), &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id})
					case "CloseSession":
						m.CloseSession("s")
					}
					closed.Store(true)
				})
			}
			id := startTerm(t, m, "s", "yes")
			pgid := pgidOf(t, m, id)
			close(created)
			select {
			case <-returned:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s called from OnOutput did not return", how)
			}
			waitGroupGone(t, pgid)
			if n := after.Load(); n != 0 {
				t.Errorf("%d OnOutput calls after %s returned", n, how)
			}
		})
	}
}

// A root with ".." means the same directory to both handlers: cleaned
// lexically, as a session's cwd is, before symlinks are evaluated.
func TestHandlersCleanRootsAlike(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, filepath.Join(base, "deep", "x", "y"))
	mustMkdir(t, filepath.Join(base, "ws"))
	mustSymlink(t, filepath.Join(base, "deep", "x", "y"), filepath.Join(base, "ws", "a"))
	mustWrite(t, filepath.Join(base, "top.txt"), "top\n")
	root := filepath.Join(base, "ws", "a") + "/../.." // lexically base; through the link, base/deep

	fsys := &FS{Roots: []string{root}}
	_, fsErr := fsys.ReadTextFile(context.Background(), &schema.ReadTextFileRequest{Path: filepath.Join(base, "top.txt")})

	m := &Terminals{Roots: []string{root}}
	t.Cleanup(func() { closeAndCheck(t, m) })
	id := startTerm(t, m, "s", "pwd", "-P")
	waitTerm(t, m, "s", id)
	dir := strings.TrimSpace(outputOf(t, m, "s", id).Output)

	if fsErr != nil || dir != base {
		t.Errorf("root %s: FS read of %s/top.txt: %v; Terminals ran in %s; want both to take the root as %s", root, base, fsErr, dir, base)
	}
}
