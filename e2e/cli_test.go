package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
	cliDir  string
)

// parallel is how many scenarios run at once unless -test.parallel is
// given. Each mostly waits on the agents (Node starting, Claude Code's and
// codex's native binaries, the model server's round trips): at the default
// of GOMAXPROCS, 2 on the CI machine, a quiet run kept about one core of
// two busy, and every scenario now runs in both ACP versions. 4 halves the
// wall time there (measured: 207 s at 2, 89 s at 4, both versions, load
// average 4 to 11; e2e/README.md "Time") and stays bounded, so a loaded
// machine is not swamped with agents; every wait in the scenarios is on a
// condition, bounded.
const parallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// acpCLI builds examples/acp once per test binary.
func acpCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		cliDir, cliErr = os.MkdirTemp("", "acp-e2e-cli")
		if cliErr != nil {
			return
		}
		cliPath = filepath.Join(cliDir, "acp")
		out, err := exec.Command("go", "build", "-o", cliPath, "../examples/acp").CombinedOutput()
		if err != nil {
			cliErr = &buildError{err, out}
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build ../examples/acp: " + e.err.Error() + "\n" + string(e.out)
}

// event is one line of `acp --json`.
type event map[string]any

// runCLI runs the acp command against the agent and returns its events.
func runCLI(t *testing.T, env []string, dir string, args ...string) []event {
	t.Helper()
	cmd := exec.Command(acpCLI(t), args...)
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var evs []event
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Errorf("acp --json printed a line that is not JSON: %q", sc.Text())
			continue
		}
		evs = append(evs, ev)
	}
	if err != nil {
		t.Fatalf("acp %q: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	return evs
}

func eventsOf(evs []event, name string) []event {
	var out []event
	for _, ev := range evs {
		if ev["event"] == name {
			out = append(out, ev)
		}
	}
	return out
}

// TestCLI drives each agent with `acp --json`: a turn with a permission
// and a second turn in one run, then `--list` finds the session and
// `--session` continues it in a new process, with the model seeing the
// earlier conversation.
func TestCLI(t *testing.T) {
	eachAgent(t, func(t *testing.T, ag agent) {
		m := newModel(t)
		argv, env := ag.setup(t, m)
		dir := t.TempDir()
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		m.Script(
			Reply{Text: []string{"Creating ", "it."}, Tool: shell(ag, "call_make", "echo made > made.txt")},
			Reply{Text: []string{"Created."}},
			Reply{Text: []string{"Second ", "turn."}},
			Reply{Text: []string{"Continued."}},
		)
		trace := filepath.Join(t.TempDir(), "trace.jsonl")
		// --protocol offers the version (the flag's default is 1).
		agentArgs := append([]string{"--protocol", fmt.Sprint(ag.version), "--"}, argv...)
		evs := runCLI(t, env, dir, append([]string{"--json", "--permission", "allow", "--cwd", dir, "--trace", trace,
			"-p", "create made.txt", "-p", "and again"}, agentArgs...)...)

		sess := eventsOf(evs, "session")
		if len(sess) != 1 {
			t.Fatalf("%d session events, want 1", len(sess))
		}
		id, _ := sess[0]["sessionId"].(string)
		if v := sess[0]["protocolVersion"]; v != float64(ag.version) {
			t.Errorf("session event protocolVersion %v, want %d", v, ag.version)
		}
		perms := eventsOf(evs, "permission")
		if len(perms) != 1 || perms[0]["toolCallId"] != "call_make" || perms[0]["outcome"].(map[string]any)["outcome"] != "selected" {
			t.Errorf("permission events %v, want one selected for call_make", perms)
		}
		ends := eventsOf(evs, "turn_end")
		if len(ends) != 2 {
			t.Fatalf("%d turn_end events, want 2", len(ends))
		}
		for i, want := range []string{"Created.", "Second turn."} {
			st, _ := json.Marshal(ends[i]["state"])
			if ends[i]["stopReason"] != "end_turn" || !strings.Contains(string(st), want) {
				t.Errorf("turn %d: %v, state %s; want end_turn with %q", i+1, ends[i]["stopReason"], st, want)
			}
		}
		st, _ := json.Marshal(ends[0]["state"])
		if !strings.Contains(string(st), `"toolCallId":"call_make"`) || !strings.Contains(string(st), `"status":"completed"`) {
			t.Errorf("first turn's state lacks the completed call_make: %s", st)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made\n" {
			t.Errorf("made.txt %q, %v", b, err)
		}

		// --list, from another process, finds the session.
		evs = runCLI(t, env, dir, append([]string{"--json", "--list", "--cwd", dir}, agentArgs...)...)
		found := false
		for _, ev := range eventsOf(evs, "session_info") {
			if s, _ := ev["session"].(map[string]any); s["sessionId"] == id {
				found = true
			}
		}
		if !found {
			t.Errorf("--list did not list session %s: %v", id, evs)
		}

		// --session continues it.
		trace2 := filepath.Join(t.TempDir(), "trace.jsonl")
		evs = runCLI(t, env, dir, append([]string{"--json", "--cwd", dir, "--trace", trace2, "--session", id, "-p", "continue"}, agentArgs...)...)
		if s := eventsOf(evs, "session"); len(s) != 1 || s[0]["sessionId"] != id {
			t.Errorf("--session opened %v, want %s", s, id)
		}
		ends = eventsOf(evs, "turn_end")
		if len(ends) != 1 || ends[0]["stopReason"] != "end_turn" {
			t.Fatalf("continued turn: %v", ends)
		}
		reqs := m.Requests(true)
		if len(reqs) != 4 {
			t.Fatalf("%d model requests, want 4", len(reqs))
		}
		if body := string(reqs[3].Raw); !strings.Contains(body, "create made.txt") || !strings.Contains(body, "Second turn.") {
			t.Errorf("the continued session's request lacks the earlier conversation")
		}
		if alive := inDir(dir); alive != "" {
			t.Errorf("processes left after acp exited: %s", alive)
		}
		if *record && !t.Failed() {
			home := ""
			for _, kv := range env {
				if h, ok := strings.CutPrefix(kv, "HOME="); ok {
					home = h
				}
			}
			for name, p := range map[string]string{"cli": trace, "cli-continue": trace2} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				saveTrace(t, recording(ag, name), b, dir, home, m.URL)
			}
		}
	})
}

// TestCLIPermissionRefused: `acp --permission reject` and `--permission
// cancel` keep the command from running; the run still exits 0 with one
// turn_end carrying the stop reason the agent gave.
func TestCLIPermissionRefused(t *testing.T) {
	for _, ag := range agents {
		for _, mode := range []string{"reject", "cancel"} {
			for _, v := range versions {
				ag := ag.in(v)
				t.Run(fmt.Sprintf("%s/%s/v%d", ag.name, mode, v), func(t *testing.T) {
					t.Parallel()
					m := newModel(t)
					argv, env := ag.setup(t, m)
					dir := t.TempDir()
					m.Script(Reply{Tool: shell(ag, "call_make", "echo made > made.txt")}, Reply{Text: []string{"Not made."}})
					evs := runCLI(t, env, dir, append([]string{"--json", "--protocol", fmt.Sprint(ag.version), "--permission", mode, "--cwd", dir, "-p", "create made.txt", "--"}, argv...)...)
					perms := eventsOf(evs, "permission")
					if len(perms) != 1 {
						t.Fatalf("%d permission events, want 1", len(perms))
					}
					out, _ := perms[0]["outcome"].(map[string]any)
					switch mode {
					case "reject":
						if out["outcome"] != "selected" || !strings.Contains(out["optionId"].(string), map[string]string{"codex": "cancel", "claude": "reject"}[ag.name]) {
							t.Errorf("outcome %v, want the reject option", out)
						}
					case "cancel":
						if out["outcome"] != "cancelled" {
							t.Errorf("outcome %v, want cancelled", out)
						}
					}
					ends := eventsOf(evs, "turn_end")
					if len(ends) != 1 {
						t.Fatalf("%d turn_end events, want 1", len(ends))
					}
					// codex ends the turn itself when refused; Claude Code tells
					// the model and finishes the turn.
					want := map[string]string{"codex": "cancelled", "claude": "end_turn"}[ag.name]
					if ends[0]["stopReason"] != want {
						t.Errorf("stopReason %v, want %s", ends[0]["stopReason"], want)
					}
					if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
						t.Errorf("made.txt exists (%v): the refused command ran", err)
					}
				})
			}
		}
	}
}
