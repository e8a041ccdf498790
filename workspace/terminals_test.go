//go:build unix

package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"

	"github.com/acpclient/acp"
	"github.com/google/go-cmp/cmp"
)

// newTM returns a manager confined to a fresh temporary root, closed (and
// checked to have left no process behind) when the test ends.
func newTM(t *testing.T) (*Terminals, string) {
	t.Helper()
	root := t.TempDir()
	m := &Terminals{Roots: []string{root}}
	t.Cleanup(func() { closeAndCheck(t, m) })
	return m, root
}

// closeAndCheck closes m and verifies that none of its process groups has
// a live member.
func closeAndCheck(t *testing.T, m *Terminals) {
	t.Helper()
	m.mu.Lock()
	var pgids []int
	for _, tt := range m.terms {
		pgids = append(pgids, tt.tree.Pid())
	}
	m.mu.Unlock()
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pgid := range pgids {
		waitGroupGone(t, pgid)
	}
}

func startTerm(t *testing.T, m *Terminals, sessionID string, command string, args ...string) string {
	t.Helper()
	resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: sessionID, Command: command, Args: args})
	if err != nil {
		t.Fatalf("create %s %q: %v", command, args, err)
	}
	return resp.TerminalID
}

func waitTerm(t *testing.T, m *Terminals, sessionID, id string) *schema.WaitForTerminalExitResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: sessionID, TerminalID: id})
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return resp
}

func outputOf(t *testing.T, m *Terminals, sessionID, id string) *schema.TerminalOutputResponse {
	t.Helper()
	resp, err := m.TerminalOutput(context.Background(), &schema.TerminalOutputRequest{SessionID: sessionID, TerminalID: id})
	if err != nil {
		t.Fatalf("output %s: %v", id, err)
	}
	return resp
}

func pgidOf(t *testing.T, m *Terminals, id string) int {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	tt := m.terms[id]
	if tt == nil {
		t.Fatalf("no terminal %s", id)
	}
	return tt.tree.Pid()
}

// Process helpers (Linux only in effect: /proc).

func alive(pid int) bool          { return proctest.Alive(pid) }
func groupMembers(pgid int) []int { return proctest.GroupMembers(pgid) }
func waitGroupGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	proctest.WaitGroupGone(t, pgid, pids...)
}

// lineWatcher signals when the terminal's output has at least n lines, using
// OnOutput rather than polling.
type lineWatcher struct {
	mu    sync.Mutex
	out   map[string]*bytes.Buffer
	ready map[string]chan struct{}
	want  int
}

func newLineWatcher(want int) *lineWatcher {
	return &lineWatcher{out: map[string]*bytes.Buffer{}, ready: map[string]chan struct{}{}, want: want}
}

func (w *lineWatcher) chans(id string) (*bytes.Buffer, chan struct{}) {
	if w.out[id] == nil {
		w.out[id] = new(bytes.Buffer)
		w.ready[id] = make(chan struct{})
	}
	return w.out[id], w.ready[id]
}

func (w *lineWatcher) onOutput(id string, chunk []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf, ready := w.chans(id)
	buf.Write(chunk)
	if bytes.Count(buf.Bytes(), []byte("\n")) >= w.want && !isClosed(ready) {
		close(ready)
	}
}

func (w *lineWatcher) wait(t *testing.T, id string) string {
	t.Helper()
	w.mu.Lock()
	_, ready := w.chans(id)
	w.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("terminal %s: output never reached %d lines", id, w.want)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out[id].String()
}

func pidsIn(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a pid: %q in %q", f, out)
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestTerminalExitStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string // for sh -c
		kill bool
		want *schema.WaitForTerminalExitResponse
	}{
		{name: "success", args: []string{"exit 0"}, want: &schema.WaitForTerminalExitResponse{ExitCode: ptr[uint32](0)}},
		{name: "exit code", args: []string{"echo out; echo err >&2; exit 3"}, want: &schema.WaitForTerminalExitResponse{ExitCode: ptr[uint32](3)}},
		{name: "self SIGTERM", args: []string{"kill -TERM $$"}, want: &schema.WaitForTerminalExitResponse{Signal: ptr("SIGTERM")}},
		{name: "killed", args: []string{"echo ready; exec sleep 300"}, kill: true, want: &schema.WaitForTerminalExitResponse{Signal: ptr("SIGKILL")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lw := newLineWatcher(1)
			m, _ := newTM(t)
			m.OnOutput = lw.onOutput
			id := startTerm(t, m, "s", "sh", append([]string{"-c"}, tt.args...)...)
			if tt.kill {
				lw.wait(t, id)
				if _, err := m.KillTerminal(context.Background(), &schema.KillTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
					t.Fatal(err)
				}
			}
			got := waitTerm(t, m, "s", id)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("wait_for_exit (-want +got):\n%s", diff)
			}
			// terminal/output reports the same status, nested.
			out := outputOf(t, m, "s", id)
			wantStatus := &schema.TerminalExitStatus{ExitCode: tt.want.ExitCode, Signal: tt.want.Signal}
			if diff := cmp.Diff(wantStatus, out.ExitStatus); diff != "" {
				t.Errorf("output exitStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerminalOutputMergesStreams(t *testing.T) {
	m, _ := newTM(t)
	id := startTerm(t, m, "s", "sh", "-c", "echo one; echo two >&2; echo three")
	waitTerm(t, m, "s", id)
	got := outputOf(t, m, "s", id)
	want := &schema.TerminalOutputResponse{Output: "one\ntwo\nthree\n", ExitStatus: &schema.TerminalExitStatus{ExitCode: ptr[uint32](0)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestTerminalOutputCapUTF8(t *testing.T) {
	// 1-, 2-, 3- and 4-byte characters, so every limit cuts somewhere
	// awkward.
	unit := "aé€😀"
	full := strings.Repeat(unit, 300)
	for _, limit := range []uint64{0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 100, 1001, 2999, uint64(len(full)), uint64(len(full)) + 1} {
		t.Run(strconv.FormatUint(limit, 10), func(t *testing.T) {
			m, _ := newTM(t)
			resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{
				SessionID: "s", Command: "sh", Args: []string{"-c", `printf '%s' "$1"`, "sh", full}, OutputByteLimit: &limit,
			})
			if err != nil {
				t.Fatal(err)
			}
			waitTerm(t, m, "s", resp.TerminalID)
			out := outputOf(t, m, "s", resp.TerminalID)
			checkTail(t, full, out.Output, out.Truncated, int(limit))
		})
	}
}

// checkTail checks the retained output of full under limit.
func checkTail(t *testing.T, full, got string, truncated bool, limit int) {
	t.Helper()
	if !utf8.ValidString(got) {
		t.Errorf("output is not valid UTF-8: %q", got[:min(len(got), 12)])
	}
	if len(got) > limit {
		t.Errorf("output is %d bytes, over the limit %d", len(got), limit)
	}
	if len(got) < limit-(utf8.UTFMax-1) && len(got) < len(full) {
		t.Errorf("output is %d bytes; more than a partial character under the limit %d was dropped", len(got), limit)
	}
	if !strings.HasSuffix(full, got) {
		t.Errorf("output is not the tail of what was written")
	}
	if wantTrunc := len(full) > limit; truncated != wantTrunc {
		t.Errorf("truncated = %v, want %v", truncated, wantTrunc)
	}
}

func TestTerminalBufferChunkings(t *testing.T) {
	// The cut must be right however reads split characters. Mid-stream the
	// buffer may end in a partial character (the rest is not read yet);
	// TerminalOutput holds it back, so the check applies to what it serves.
	full := strings.Repeat("x€😀é", 50)
	for _, limit := range []int{0, 1, 3, 4, 6, 13, 64} {
		for _, chunk := range []int{1, 2, 3, 5, 7, 64} {
			b := &tailBuffer{limit: limit}
			for i := 0; i < len(full); i += chunk {
				end := min(i+chunk, len(full))
				b.Write([]byte(full[i:end]))
				written := full[:end]
				got := b.String(false)
				complete := string(trimPartialRune([]byte(written)))
				if !utf8.ValidString(got) || len(b.ring) > limit || !strings.HasSuffix(complete, got) {
					t.Fatalf("limit %d chunk %d after %d bytes: got %q", limit, chunk, end, got)
				}
				// Only the cut's partial character and the unread partial
				// tail may be missing.
				if len(got) < min(limit, len(written))-2*(utf8.UTFMax-1) {
					t.Fatalf("limit %d chunk %d after %d bytes: only %d bytes kept", limit, chunk, end, len(got))
				}
				if b.truncated != (len(written) > limit) {
					t.Fatalf("limit %d chunk %d after %d bytes: truncated = %v", limit, chunk, end, b.truncated)
				}
			}
			checkTail(t, full, b.String(true), b.truncated, limit)
		}
	}
}

func TestTrimPartialRune(t *testing.T) {
	euro := "€" // 3 bytes
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"ab" + euro[:1], "ab"},
		{"ab" + euro[:2], "ab"},
		{"ab" + euro, "ab" + euro},
		{"ab\xff", "ab\xff"}, // invalid bytes are not held back forever
	}
	for _, tt := range tests {
		if got := string(trimPartialRune([]byte(tt.in))); got != tt.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerminalKillEndsGrandchildren(t *testing.T) {
	tests := []struct {
		name    string
		release bool // release instead of kill
	}{{name: "kill"}, {name: "release", release: true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lw := newLineWatcher(2)
			m, _ := newTM(t)
			m.OnOutput = lw.onOutput
			// sh and two sleeps; the sleeps are the command's children.
			id := startTerm(t, m, "s", "sh", "-c", "sleep 300 & echo $!; sleep 300 & echo $!; wait")
			pids := pidsIn(t, lw.wait(t, id))
			pgid := pgidOf(t, m, id)
			for _, p := range pids {
				if !alive(p) {
					t.Fatalf("pid %d is not running before the kill", p)
				}
			}
			ctx := context.Background()
			if tt.release {
				if _, err := m.ReleaseTerminal(ctx, &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := m.KillTerminal(ctx, &schema.KillTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
					t.Fatal(err)
				}
				got := waitTerm(t, m, "s", id)
				if diff := cmp.Diff(&schema.WaitForTerminalExitResponse{Signal: ptr("SIGKILL")}, got); diff != "" {
					t.Errorf("wait (-want +got):\n%s", diff)
				}
				// Still valid after kill.
				if out := outputOf(t, m, "s", id); !strings.HasPrefix(out.Output, fmt.Sprint(pids[0])) {
					t.Errorf("output after kill = %q", out.Output)
				}
			}
			waitGroupGone(t, pgid, pids...)
		})
	}
}

func TestTerminalKillExactBriefCommand(t *testing.T) {
	// The shape agents really send: no pids echoed, found through /proc.
	m, _ := newTM(t)
	id := startTerm(t, m, "s", "sh", "-c", "sleep 300 & sleep 300")
	pgid := pgidOf(t, m, id)
	want := 3 // sh and both sleeps
	m.mu.Lock()
	if m.terms[id].tree.Watched() {
		want++ // and the watchdog
	}
	m.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	var members []int
	for len(members) < want {
		if time.Now().After(deadline) {
			t.Fatalf("group %d has members %v, want %d", pgid, members, want)
		}
		time.Sleep(5 * time.Millisecond) // no signal exists for "exec done"
		members = groupMembers(pgid)
	}
	if _, err := m.KillTerminal(context.Background(), &schema.KillTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
		t.Fatal(err)
	}
	waitTerm(t, m, "s", id)
	waitGroupGone(t, pgid, members...)
}

func TestTerminalWaitAfterExit(t *testing.T) {
	m, _ := newTM(t)
	id := startTerm(t, m, "s", "sh", "-c", "echo done; exit 7")
	want := &schema.WaitForTerminalExitResponse{ExitCode: ptr[uint32](7)}
	for i := range 3 { // the first wait blocks, later ones return at once
		if diff := cmp.Diff(want, waitTerm(t, m, "s", id)); diff != "" {
			t.Errorf("wait #%d (-want +got):\n%s", i, diff)
		}
	}
	if out := outputOf(t, m, "s", id); out.Output != "done\n" {
		t.Errorf("output = %q", out.Output)
	}
	// Kill after exit is harmless.
	if _, err := m.KillTerminal(context.Background(), &schema.KillTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
		t.Errorf("kill after exit: %v", err)
	}
}

func TestTerminalWaitConcurrentWithOutputAndKill(t *testing.T) {
	lw := newLineWatcher(1)
	m, _ := newTM(t)
	m.OnOutput = lw.onOutput
	id := startTerm(t, m, "s", "sh", "-c", "echo started; exec sleep 300")
	lw.wait(t, id)

	// A wait whose ctx ends returns the ctx error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: id}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait = %v, want context.Canceled", err)
	}

	waited := make(chan *schema.WaitForTerminalExitResponse)
	go func() {
		resp, err := m.WaitForTerminalExit(context.Background(), &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: id})
		if err != nil {
			t.Error(err)
		}
		waited <- resp
	}()
	// The agent's timeout recipe: output and kill while the wait blocks.
	out := outputOf(t, m, "s", id)
	if out.Output != "started\n" || out.ExitStatus != nil {
		t.Errorf("output while running = %+v", out)
	}
	if _, err := m.KillTerminal(context.Background(), &schema.KillTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&schema.WaitForTerminalExitResponse{Signal: ptr("SIGKILL")}, <-waited); diff != "" {
		t.Errorf("wait (-want +got):\n%s", diff)
	}
}

func TestTerminalReleaseRunning(t *testing.T) {
	lw := newLineWatcher(1)
	m, _ := newTM(t)
	m.OnOutput = lw.onOutput
	id := startTerm(t, m, "s", "sh", "-c", "echo $$; exec sleep 300")
	pid := pidsIn(t, lw.wait(t, id))[0]
	pgid := pgidOf(t, m, id)

	waited := make(chan error, 1)
	go func() {
		_, err := m.WaitForTerminalExit(context.Background(), &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: id})
		waited <- err
	}()
	ctx := context.Background()
	if _, err := m.ReleaseTerminal(ctx, &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
		t.Fatal(err)
	}
	// Release reaps before returning, so the process is gone already.
	if alive(pid) {
		t.Errorf("pid %d alive after release", pid)
	}
	waitGroupGone(t, pgid, pid)
	// A wait that was pending returns the status; one that started only
	// after the release (nothing orders the two here) finds the id gone.
	// Either way it does not hang.
	if err := <-waited; err != nil {
		wantCode(t, err, schema.CodeResourceNotFound)
	}

	// The id is unknown from now on, for every method.
	_, err := m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: "s", TerminalID: id})
	wantCode(t, err, schema.CodeResourceNotFound)
	_, err = m.ReleaseTerminal(ctx, &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id})
	wantCode(t, err, schema.CodeResourceNotFound)
}

func TestTerminalUnknownID(t *testing.T) {
	m, _ := newTM(t)
	other := startTerm(t, m, "other-session", "true")
	ctx := context.Background()
	for _, id := range []string{"term_nope", "", other} {
		calls := map[string]func() error{
			"output": func() error {
				_, err := m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: "s", TerminalID: id})
				return err
			},
			"wait": func() error {
				_, err := m.WaitForTerminalExit(ctx, &schema.WaitForTerminalExitRequest{SessionID: "s", TerminalID: id})
				return err
			},
			"kill": func() error {
				_, err := m.KillTerminal(ctx, &schema.KillTerminalRequest{SessionID: "s", TerminalID: id})
				return err
			},
			"release": func() error {
				_, err := m.ReleaseTerminal(ctx, &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id})
				return err
			},
		}
		for name, call := range calls {
			t.Run(name+"/"+id, func(t *testing.T) {
				e := wantCode(t, call(), schema.CodeResourceNotFound)
				if !strings.Contains(e.Message, "unknown terminal") {
					t.Errorf("message = %q", e.Message)
				}
			})
		}
	}
	// Another session's terminal is untouched by those calls.
	waitTerm(t, m, "other-session", other)
}

func TestTerminalCwd(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	mustMkdir(t, filepath.Join(root, "sub"))
	mustMkdir(t, filepath.Join(base, "ws-evil"))
	mustMkdir(t, outside)
	mustSymlink(t, outside, filepath.Join(root, "out"))
	mustSymlink(t, "sub", filepath.Join(root, "insub"))
	mustWrite(t, filepath.Join(root, "file"), "")
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		roots   []string
		cwd     string
		wantDir string // pwd -P
		code    int64
	}{
		{name: "default is first root", roots: []string{root}, wantDir: realRoot},
		{name: "inside", roots: []string{root}, cwd: root + "/sub", wantDir: realRoot + "/sub"},
		{name: "inside via link", roots: []string{root}, cwd: root + "/insub", wantDir: realRoot + "/sub"},
		{name: "second root", roots: []string{base + "/nope", outside, root}, cwd: root, wantDir: realRoot},
		{name: "outside", roots: []string{root}, cwd: outside, code: schema.CodeInvalidParams},
		{name: "sibling prefix", roots: []string{root}, cwd: base + "/ws-evil", code: schema.CodeInvalidParams},
		{name: "link leading out", roots: []string{root}, cwd: root + "/out", code: schema.CodeInvalidParams},
		{name: "dotdot", roots: []string{root}, cwd: root + "/sub/../../outside", code: schema.CodeInvalidParams},
		{name: "relative", roots: []string{root}, cwd: "sub", code: schema.CodeInvalidParams},
		{name: "missing", roots: []string{root}, cwd: root + "/missing", code: schema.CodeResourceNotFound},
		{name: "a file", roots: []string{root}, cwd: root + "/file", code: schema.CodeInvalidParams},
		{name: "no roots", code: schema.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Terminals{Roots: tt.roots}
			t.Cleanup(func() { closeAndCheck(t, m) })
			resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "pwd", Args: []string{"-P"}, Cwd: tt.cwd})
			if tt.code != 0 {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			waitTerm(t, m, "s", resp.TerminalID)
			if got := outputOf(t, m, "s", resp.TerminalID).Output; got != tt.wantDir+"\n" {
				t.Errorf("pwd = %q, want %q", got, tt.wantDir)
			}
		})
	}
}

func TestTerminalRootsFromContext(t *testing.T) {
	root := t.TempDir()
	var m Terminals // zero value
	t.Cleanup(func() { closeAndCheck(t, &m) })
	ctx := acp.ContextWithRoots(context.Background(), []string{root})
	resp, err := m.CreateTerminal(ctx, &schema.CreateTerminalRequest{SessionID: "s", Command: "pwd", Args: []string{"-P"}})
	if err != nil {
		t.Fatal(err)
	}
	waitTerm(t, &m, "s", resp.TerminalID)
	real, _ := filepath.EvalSymlinks(root)
	if got := outputOf(t, &m, "s", resp.TerminalID).Output; got != real+"\n" {
		t.Errorf("pwd = %q, want %q", got, real)
	}
	_, err = m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{SessionID: "s", Command: "true"})
	wantCode(t, err, schema.CodeInvalidParams)
}

func TestTerminalEnvAndCommand(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	mustMkdir(t, bin)
	if err := os.WriteFile(filepath.Join(bin, "hello"), []byte("#!/bin/sh\necho hello A=$A B=$B C=$C\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := &Terminals{Roots: []string{root}, Env: []string{"PATH=/usr/bin:/bin", "A=1", "B=2"}}
	t.Cleanup(func() { closeAndCheck(t, m) })
	ctx := context.Background()

	run := func(req *schema.CreateTerminalRequest) string {
		t.Helper()
		resp, err := m.CreateTerminal(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		waitTerm(t, m, "s", resp.TerminalID)
		return outputOf(t, m, "s", resp.TerminalID).Output
	}
	// The request's PATH decides where the command is found.
	got := run(&schema.CreateTerminalRequest{SessionID: "s", Command: "hello", Env: []schema.EnvVariable{
		{Name: "PATH", Value: bin + ":/usr/bin:/bin"}, {Name: "B", Value: "3"}, {Name: "C", Value: "4"},
	}})
	if want := "hello A=1 B=3 C=4\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	// Relative commands are relative to the working directory.
	if got := run(&schema.CreateTerminalRequest{SessionID: "s", Command: "./bin/hello"}); got != "hello A=1 B=2 C=\n" {
		t.Errorf("relative command output = %q", got)
	}
	// Each variable appears once.
	got = run(&schema.CreateTerminalRequest{SessionID: "s", Command: "env", Env: []schema.EnvVariable{{Name: "A", Value: "x"}}})
	if diff := cmp.Diff([]string{"PATH=/usr/bin:/bin", "A=x", "B=2"}, strings.Fields(got)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	// No shell: metacharacters are plain arguments.
	if got := run(&schema.CreateTerminalRequest{SessionID: "s", Command: "echo", Args: []string{"$A", ";", "`id`"}}); got != "$A ; `id`\n" {
		t.Errorf("echo output = %q", got)
	}

	bad := []struct {
		name string
		req  *schema.CreateTerminalRequest
		code int64
	}{
		{name: "not found", req: &schema.CreateTerminalRequest{Command: "no-such-command-acp"}, code: schema.CodeResourceNotFound},
		{name: "relative PATH entries skipped", req: &schema.CreateTerminalRequest{Command: "hello", Env: []schema.EnvVariable{{Name: "PATH", Value: "bin"}}}, code: schema.CodeResourceNotFound},
		{name: "empty command", req: &schema.CreateTerminalRequest{}, code: schema.CodeInvalidParams},
		{name: "NUL in arg", req: &schema.CreateTerminalRequest{Command: "echo", Args: []string{"a\x00b"}}, code: schema.CodeInvalidParams},
		{name: "bad env name", req: &schema.CreateTerminalRequest{Command: "echo", Env: []schema.EnvVariable{{Name: "A=B", Value: "x"}}}, code: schema.CodeInvalidParams},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.CreateTerminal(ctx, tt.req)
			wantCode(t, err, tt.code)
		})
	}
}

func TestTerminalManyAtOnce(t *testing.T) {
	m, _ := newTM(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			session := fmt.Sprintf("s%d", i%3)
			resp, err := m.CreateTerminal(context.Background(), &schema.CreateTerminalRequest{
				SessionID: session, Command: "sh", Args: []string{"-c", `echo "terminal $1"; exit $1`, "sh", strconv.Itoa(i)},
			})
			if err != nil {
				t.Error(err)
				return
			}
			// Polling output concurrently with the wait, as UIs do.
			go m.TerminalOutput(context.Background(), &schema.TerminalOutputRequest{SessionID: session, TerminalID: resp.TerminalID})
			got := waitTerm(t, m, session, resp.TerminalID)
			if got.ExitCode == nil || *got.ExitCode != uint32(i) {
				t.Errorf("terminal %d: exit = %+v", i, got)
			}
			if out := outputOf(t, m, session, resp.TerminalID).Output; out != fmt.Sprintf("terminal %d\n", i) {
				t.Errorf("terminal %d: output = %q", i, out)
			}
			if _, err := m.ReleaseTerminal(context.Background(), &schema.ReleaseTerminalRequest{SessionID: session, TerminalID: resp.TerminalID}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(m.terms); n != 0 {
		t.Errorf("%d terminals left after release", n)
	}
}

func TestTerminalCloseSessionAndClose(t *testing.T) {
	lw := newLineWatcher(1)
	root := t.TempDir()
	m := &Terminals{Roots: []string{root}, OnOutput: lw.onOutput}
	ctx := context.Background()
	type proc struct {
		session, id string
		pgid, pid   int
	}
	var procs []proc
	for _, s := range []string{"a", "a", "b"} {
		id := startTerm(t, m, s, "sh", "-c", "sleep 300 & echo $!; wait")
		procs = append(procs, proc{session: s, id: id, pgid: pgidOf(t, m, id)})
	}
	for i := range procs {
		procs[i].pid = pidsIn(t, lw.wait(t, procs[i].id))[0]
	}

	m.CloseSession("a")
	for _, p := range procs[:2] {
		waitGroupGone(t, p.pgid, p.pid)
		_, err := m.TerminalOutput(ctx, &schema.TerminalOutputRequest{SessionID: "a", TerminalID: p.id})
		wantCode(t, err, schema.CodeResourceNotFound)
	}
	b := procs[2]
	if !alive(b.pid) {
		t.Fatal("session b's command died with session a")
	}
	if out := outputOf(t, m, "b", b.id); out.ExitStatus != nil {
		t.Errorf("session b's terminal exited: %+v", out)
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, b.pgid, b.pid)
	if err := m.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	_, err := m.CreateTerminal(ctx, &schema.CreateTerminalRequest{SessionID: "b", Command: "true"})
	wantCode(t, err, schema.CodeInternalError)
}

func TestTerminalConcurrentClose(t *testing.T) {
	m, _ := newTM(t)
	var ids []string
	for range 5 {
		ids = append(ids, startTerm(t, m, "s", "sleep", "300"))
	}
	var pgids []int
	for _, id := range ids {
		pgids = append(pgids, pgidOf(t, m, id))
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := m.Close(); err != nil {
				t.Error(err)
			}
			// Every Close returns only once everything is gone.
			for _, pgid := range pgids {
				if len(groupMembers(pgid)) != 0 {
					t.Errorf("group %d alive after Close returned", pgid)
				}
			}
		})
	}
	wg.Wait()
}

func TestTerminalOnOutputSeesAll(t *testing.T) {
	var mu sync.Mutex
	chunks := map[string]*bytes.Buffer{}
	m, _ := newTM(t)
	m.OnOutput = func(id string, chunk []byte) {
		mu.Lock()
		defer mu.Unlock()
		if chunks[id] == nil {
			chunks[id] = new(bytes.Buffer)
		}
		chunks[id].Write(chunk)
	}
	// Plenty of output from both streams, more than one read's worth.
	id := startTerm(t, m, "s", "sh", "-c", `i=0; while [ $i -lt 3000 ]; do echo "line $i ✓"; echo "err $i" >&2; i=$((i+1)); done`)
	waitTerm(t, m, "s", id)
	out := outputOf(t, m, "s", id)
	mu.Lock()
	seen := chunks[id].String()
	mu.Unlock()
	if seen != out.Output {
		t.Errorf("OnOutput saw %d bytes, output has %d", len(seen), len(out.Output))
	}
	if n := strings.Count(seen, "\n"); n != 6000 {
		t.Errorf("OnOutput saw %d lines, want 6000", n)
	}
}

func TestTerminalDefaultOutputLimit(t *testing.T) {
	m, _ := newTM(t)
	m.DefaultOutputLimit = 10
	id := startTerm(t, m, "s", "printf", "0123456789abcdef")
	waitTerm(t, m, "s", id)
	out := outputOf(t, m, "s", id)
	if out.Output != "6789abcdef" || !out.Truncated {
		t.Errorf("output = %q truncated=%v", out.Output, out.Truncated)
	}
}

func TestTerminalNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	m := &Terminals{Roots: []string{t.TempDir()}}
	for range 5 {
		startTerm(t, m, "s", "sleep", "300")
	}
	done := startTerm(t, m, "s", "true")
	waitTerm(t, m, "s", done)
	if _, err := m.ReleaseTerminal(context.Background(), &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: done}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Goroutines end just after signalling; give the scheduler a moment.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTerminalLeftoverBackgroundProcess(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		// The leftover keeps the output pipe open: the exit is reported
		// after a short grace instead of never.
		{name: "holding the pipe", script: "sleep 300 & echo $!"},
		// The leftover let go of the pipe: nothing but the process group
		// still ties it to the terminal.
		{name: "detached from the pipe", script: "sleep 300 >/dev/null 2>&1 & echo $!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newTM(t)
			id := startTerm(t, m, "s", "sh", "-c", tt.script)
			pgid := pgidOf(t, m, id)
			if diff := cmp.Diff(&schema.WaitForTerminalExitResponse{ExitCode: ptr[uint32](0)}, waitTerm(t, m, "s", id)); diff != "" {
				t.Errorf("wait (-want +got):\n%s", diff)
			}
			pid := pidsIn(t, outputOf(t, m, "s", id).Output)[0]
			if !alive(pid) {
				t.Fatalf("background pid %d is not running", pid)
			}
			if _, err := m.ReleaseTerminal(context.Background(), &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: id}); err != nil {
				t.Fatal(err)
			}
			waitGroupGone(t, pgid, pid)
		})
	}
}

func TestTerminalTypesJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{
			name: "create request",
			v: &schema.CreateTerminalRequest{SessionID: "s", Command: "npm", Args: []string{"test"},
				Env: []schema.EnvVariable{{Name: "NODE_ENV", Value: "test"}}, Cwd: "/p", OutputByteLimit: ptr[uint64](1048576)},
			want: `{"sessionId":"s","command":"npm","args":["test"],"env":[{"name":"NODE_ENV","value":"test"}],"cwd":"/p","outputByteLimit":1048576}`,
		},
		{name: "create minimal", v: &schema.CreateTerminalRequest{SessionID: "s", Command: "ls"}, want: `{"sessionId":"s","command":"ls"}`},
		{name: "create response", v: &schema.CreateTerminalResponse{TerminalID: "term_1"}, want: `{"terminalId":"term_1"}`},
		{name: "output running", v: &schema.TerminalOutputResponse{Output: ""}, want: `{"output":"","truncated":false}`},
		{
			name: "output exited",
			v:    &schema.TerminalOutputResponse{Output: "ok\n", Truncated: true, ExitStatus: &schema.TerminalExitStatus{ExitCode: ptr[uint32](0)}},
			want: `{"output":"ok\n","truncated":true,"exitStatus":{"exitCode":0}}`,
		},
		{name: "wait is flat", v: &schema.WaitForTerminalExitResponse{Signal: ptr("SIGKILL")}, want: `{"signal":"SIGKILL"}`},
		{name: "wait exit 0", v: &schema.WaitForTerminalExitResponse{ExitCode: ptr[uint32](0)}, want: `{"exitCode":0}`},
		{name: "kill response", v: &schema.KillTerminalResponse{}, want: `{}`},
		{name: "release request", v: &schema.ReleaseTerminalRequest{SessionID: "s", TerminalID: "t"}, want: `{"sessionId":"s","terminalId":"t"}`},
		{name: "read request", v: &schema.ReadTextFileRequest{SessionID: "s", Path: "/a", Line: u32(0), Limit: u32(5)}, want: `{"sessionId":"s","path":"/a","line":0,"limit":5}`},
		{name: "read request plain", v: &schema.ReadTextFileRequest{SessionID: "s", Path: "/a"}, want: `{"sessionId":"s","path":"/a"}`},
		{name: "read response empty", v: &schema.ReadTextFileResponse{}, want: `{"content":""}`},
		{name: "write request", v: &schema.WriteTextFileRequest{SessionID: "s", Path: "/a", Content: ""}, want: `{"sessionId":"s","path":"/a","content":""}`},
		{name: "write response", v: &schema.WriteTextFileResponse{Meta: json.RawMessage(`{"x":1}`)}, want: `{"_meta":{"x":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("marshal (-want +got):\n%s", diff)
			}
			// And back: decoding the wire form gives the same value.
			back := reflect.New(reflect.TypeOf(tt.v).Elem()).Interface()
			if err := json.Unmarshal(b, back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.v, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
