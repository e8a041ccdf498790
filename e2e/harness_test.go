package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/internal/proctest"
	"github.com/acpclient/acp/schema"
)

// record rewrites ../testdata/transcripts/e2e-*.jsonl from this run's
// traces; the root package's TestE2ETranscripts replays them without Node.
var record = flag.Bool("record", false, "rewrite the e2e-* transcripts in ../testdata/transcripts")

// dump names a directory that receives, unsanitized, each SDK-driven
// agent's wire trace and stderr tail and the body of every request the
// model server got: what to read when an agent release changes behaviour.
var dump = flag.String("dump", "", "write each agent's trace and stderr, and each model request body, into this directory")

// run is one agent process under test, driven through the SDK.
type run struct {
	t      *testing.T
	ag     agent
	Model  *Model
	Dir    string // the session's working directory
	home   string
	trace  *bytes.Buffer
	tw     *acp.TraceWriter
	C      *acp.Client
	S      *acp.Session
	argv   []string
	env    []string
	pgid   int // the agent's process group
	diags  []acp.Diagnostic
	mu     sync.Mutex
	stderr bytes.Buffer
}

func (r *run) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.Write(p)
}

// start starts the agent against a fresh model with opts (Trace is set
// here), and opens a session in a fresh directory.
func start(t *testing.T, ag agent, opts *acp.ClientOptions) *run {
	t.Helper()
	m := newModel(t)
	r := &run{t: t, ag: ag, Model: m, Dir: t.TempDir(), trace: &bytes.Buffer{}}
	// Resolve symlinks so the paths agents report match ours.
	if d, err := filepath.EvalSymlinks(r.Dir); err == nil {
		r.Dir = d
	}
	r.argv, r.env = ag.setup(t, m)
	for _, kv := range r.env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			r.home = h
		}
	}
	if opts == nil {
		opts = &acp.ClientOptions{}
	}
	r.tw = acp.NewTraceWriter(r.trace)
	opts.Trace = r.tw
	// Everything the client tolerated is logged: an unknown update kind or
	// a junk line from a real agent is worth knowing about.
	opts.OnDiagnostic = func(d acp.Diagnostic) {
		r.mu.Lock()
		r.diags = append(r.diags, d)
		r.mu.Unlock()
	}
	r.connect(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := r.C.NewSession(ctx, &schema.NewSessionRequest{Cwd: r.Dir})
	if err != nil {
		t.Fatalf("%s: session/new: %v\nstderr:\n%s", ag.name, err, r.stderrTail())
	}
	r.S = s
	return r
}

// connect starts the agent again and connects to it with opts, offering
// the agent's version.
func (r *run) connect(opts *acp.ClientOptions) {
	t := r.t
	opts.ProtocolVersion = r.ag.version
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Env = r.env
	cmd.Dir = r.Dir
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := acp.Connect(ctx, &acp.CommandTransport{
		Command: cmd,
		// Both agents ignore stdin EOF: the staged close ends them.
		ShutdownGrace: 500 * time.Millisecond,
		Stderr:        r,
	}, opts)
	if err != nil {
		t.Fatalf("%s: connect: %v", r.ag.name, err)
	}
	r.C = c
	if want := max(1, r.ag.version); c.InitializeResponse().ProtocolVersion != want {
		c.Close()
		t.Fatalf("%s: negotiated ACP version %d, want %d", r.ag.name, c.InitializeResponse().ProtocolVersion, want)
	}
	pgid := cmd.Process.Pid
	r.pgid = pgid
	t.Cleanup(func() {
		c.Close()
		// Close ends the agent's whole process group.
		if alive := groupAlive(pgid); alive != "" {
			t.Errorf("%s: processes left after Close: %s", r.ag.name, alive)
		}
		// Nor any that left the group (a command the agent ran) in the
		// session's directory.
		if alive := inDirAfter(r.Dir, 5*time.Second); alive != "" {
			t.Errorf("%s: processes left in the session's directory after Close: %s", r.ag.name, alive)
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", r.ag.name, r.stderrTail())
		}
		if *dump != "" {
			name := filepath.Join(*dump, strings.ReplaceAll(t.Name(), "/", "_"))
			if err := os.WriteFile(name+".trace.jsonl", r.trace.Bytes(), 0o644); err != nil {
				t.Errorf("-dump: %v", err)
			}
			if err := os.WriteFile(name+".stderr", []byte(r.stderrTail()), 0o644); err != nil {
				t.Errorf("-dump: %v", err)
			}
		}
		r.mu.Lock()
		for _, d := range r.diags {
			t.Errorf("%s: diagnostic %s: %s %.300s", r.ag.name, d.Kind, d.Message, d.Line)
		}
		r.mu.Unlock()
	})
}

func (r *run) stderrTail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stderr.String()
	if len(s) > 8000 {
		s = s[len(s)-8000:]
	}
	return s
}

// groupAlive describes the live processes of process group pgid, "" when
// there are none.
func groupAlive(pgid int) string {
	return proctest.Describe(proctest.GroupMembers(pgid))
}

// inDir lists the live processes whose working directory is dir.
// inDirAfter is inDir once the processes it finds have had up to d to end.
// Such processes left the agent's process group on purpose (codex runs its
// shell-snapshot bash in a session of its own), so Close cannot end them
// (the README says what escapes the group); they are the agent's own short
// jobs, which end by themselves. The test holds that none stays: one still
// there after d fails it. /proc is polled, since an exit of a process that
// is not our child sends us nothing to wait on.
func inDirAfter(dir string, d time.Duration) string {
	return outsideGroupInDirAfter(dir, 0, d)
}

// outsideGroupInDirAfter is inDirAfter without the members of process
// group pgid (the live agent itself, while it runs); pgid 0 leaves none out.
func outsideGroupInDirAfter(dir string, pgid int, d time.Duration) string {
	deadline := time.Now().Add(d)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		alive := inDirOutside(dir, pgid)
		if alive == "" || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(wait)
	}
}

func inDir(dir string) string { return inDirOutside(dir, 0) }

func inDirOutside(dir string, pgid int) string {
	var out []string
	for _, p := range procsInDirOutside(dir, pgid) {
		out = append(out, fmt.Sprint(p.pid)+" "+p.cmdline)
	}
	return strings.Join(out, ", ")
}

// dirProc is a live process found by procsInDirOutside.
type dirProc struct {
	pid     int
	cmdline string
}

// procsInDirOutside lists the live processes whose working directory is
// dir, but for the members of process group pgid (0: none left out).
func procsInDirOutside(dir string, pgid int) []dirProc {
	group := map[int]bool{}
	if pgid != 0 {
		for _, pid := range proctest.GroupMembers(pgid) {
			group[pid] = true
		}
	}
	ents, _ := os.ReadDir("/proc")
	var out []dirProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || group[pid] {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || cwd != dir {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, dirProc{pid, strings.ReplaceAll(string(b), "\x00", " ")})
	}
	return out
}

// prompt runs one turn to its end.
func (r *run) prompt(text string) (*acp.Turn, schema.StopReason, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	turn, err := r.S.Prompt(ctx, schema.Text(text))
	if err != nil {
		r.t.Fatalf("%s: prompt: %v", r.ag.name, err)
	}
	stop, err := turn.Wait()
	return turn, stop, err
}

func (r *run) path(name string) string { return filepath.Join(r.Dir, name) }

// recording is the name of agent ag's recording of scenario name:
// <agent>-<name> in v1, v2-<agent>-<name> in v2 (TestV2RecordingsValid
// holds those to the v2 schema).
func recording(ag agent, name string) string {
	if ag.v2() {
		return "v2-" + ag.name + "-" + name
	}
	return ag.name + "-" + name
}

// save writes the sanitized trace as
// ../testdata/transcripts/e2e-<recording(agent, name)>.jsonl when -record is
// set. Call it after the client closed (or at the end of the test: it
// closes the client).
func (r *run) save(name string) {
	r.t.Helper()
	r.C.Close()
	if !*record {
		return
	}
	if r.t.Failed() {
		r.t.Logf("not recording %s: the test failed", name)
		return
	}
	saveTrace(r.t, recording(r.ag, name), r.trace.Bytes(), r.Dir, r.home, r.Model.URL)
}

// saveTrace writes a sanitized trace as ../testdata/transcripts/e2e-<name>.jsonl.
func saveTrace(t *testing.T, name string, trace []byte, dir, home, url string) {
	t.Helper()
	out := sanitize(trace, map[string]string{dir: "/tmp/e2e/work", home: "/tmp/e2e/home", url: "http://127.0.0.1:8000"})
	p := filepath.Join("..", "testdata", "transcripts", "e2e-"+name+".jsonl")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// sanitize makes a trace reproducible: paths named in repl are replaced,
// UUIDs (session ids) become id-1, id-2, … in order of appearance, notes
// (stderr lines) are dropped.
func sanitize(trace []byte, repl map[string]string) []byte {
	ids := map[string]string{}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var f struct {
			Dir string `json:"dir"`
		}
		if json.Unmarshal(line, &f) != nil || f.Dir == "!" {
			continue
		}
		s := string(line)
		for from, to := range repl {
			if from != "" {
				s = strings.ReplaceAll(s, from, to)
			}
		}
		s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
			if id, ok := ids[u]; ok {
				return id
			}
			id := fmt.Sprintf("00000000-0000-0000-0000-%012d", len(ids)+1)
			ids[u] = id
			return id
		})
		out.WriteString(s)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// messages returns the texts of a turn's messages.
func texts(ms []acp.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// frame is one traced message.
type frame struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// frames returns the traced messages in direction dir (">" sent, "<"
// received). Call it after the client has closed.
func (r *run) frames(dir string) []frame {
	var out []frame
	for _, line := range bytes.Split(r.trace.Bytes(), []byte("\n")) {
		var f struct {
			Dir string `json:"dir"`
			Msg frame  `json:"msg"`
		}
		if json.Unmarshal(line, &f) == nil && f.Dir == dir {
			out = append(out, f.Msg)
		}
	}
	return out
}
