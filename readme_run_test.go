// This file runs what the README tells a newcomer to run: its first
// program (main.go, built as written and run offline against the demo
// agent) and every command of its ```sh blocks, each either run here with
// what it must print or allowlisted with the reason it cannot run here.
package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildTimeout bounds one go build of a README program; a cold cache on a
// busy machine takes tens of seconds.
const buildTimeout = 5 * time.Minute

// goTool returns the go command that builds the README's programs.
func goTool(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the README's programs are built with the go command, which is not on PATH: %v", err)
	}
	return gobin
}

// TestReadmeMainRuns builds the README's main.go exactly as written, as a
// package of this module, runs it in an empty directory and checks that it
// printed a live turn: tool-call cards, the answer and the stop reason.
func TestReadmeMainRuns(t *testing.T) {
	m := mainMarker.FindStringSubmatch(readFile(t, "README.md"))
	if m == nil {
		t.Fatal("README.md has no <!-- main.go --> block")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	mainGo := filepath.Join(tmp, "main.go")
	writeFile(t, mainGo, m[1])
	replace := map[string]string{filepath.Join(root, "internal", "readmemain", "main.go"): mainGo}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "overlay.json"), string(overlay))

	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	bin := filepath.Join(tmp, "hello")
	build := exec.CommandContext(ctx, goTool(t), "build", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./internal/readmemain")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's main.go does not build: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, bin)
	run.Dir = t.TempDir()
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's main.go failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"[read] Read the workspace: completed\n",
		"[edit] Write acp-demo.txt: failed\n",
		"You said: \"hello\".\nstop: end_turn <nil>\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the README's main.go printed no %q:\n%s", want, out)
		}
	}
}

// readmeCommand is what the test does with one command of the README.
type readmeCommand struct {
	// want are strings the command's output must contain; the command
	// must exit 0 unless exitOK allows more.
	want   []string
	exitOK []int
	// skip, when set, is why the command is not run here; such a command
	// is still required to be listed.
	skip string
	// needsDemo: the command runs the demo agent of package acptest/demo,
	// which the acp command embeds once that package exists; before, the
	// embedded demo has neither v2 nor /kill.
	needsDemo bool
}

// readmeCommands lists every command of the README's ```sh blocks. A
// command added to the README fails TestReadmeCommands until it is here.
var readmeCommands = map[string]readmeCommand{
	`go run ./examples/acp -p "hello"`: {want: []string{
		"[tool] Read the workspace: completed", `You said: "hello".`}},
	`go run ./examples/acp --json -p "hello"`: {want: []string{
		`"event":"session"`, `{"event":"turn_end"`, `"stopReason":"end_turn"}`}},
	`go run ./examples/acp -p "hello" -- AGENT_CMD ARGS...`:          {skip: "AGENT_CMD is a placeholder for a real agent"},
	`go run ./examples/acp --agent codex-acp -p "hello"`:             {skip: "downloads codex-acp from the registry and needs a model account"},
	`go run ./examples/acp --url wss://HOST/acp -p "hello"`:          {skip: "HOST is a placeholder for a remote agent"},
	`go run github.com/acpclient/acp/examples/acp@latest -p "hello"`: {skip: "fetches the module from the network; the same command as the first, which runs"},
	`./test.sh`:                   {skip: "the whole test suite, which runs this test"},
	`go run ./examples/acp check`: {want: []string{"agent acp-demo", "graded [1 2]"}},
	// These two need the demo agent of package acptest/demo (v2, /kill,
	// sessions kept on disk); they run wherever that package is.
	`go run ./examples/acp --protocol 2 -p hello`: {needsDemo: true,
		want: []string{", ACP v2, session ", `You said: "hello".`}},
	`go run ./examples/acp --restart -p /kill -p "are you still there?"`: {needsDemo: true,
		want: []string{"restored session", `You said: "are you still there?".`}, exitOK: []int{1}}, // the interrupted turn failed
}

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```\n")

// readmeShellCommands returns the commands of the README's ```sh blocks,
// trailing comments cut.
func readmeShellCommands(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, b := range shBlock.FindAllStringSubmatch(readFile(t, "README.md"), -1) {
		for _, line := range strings.Split(b[1], "\n") {
			if line = strings.TrimSpace(cutComment(line)); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// cutComment drops a shell comment: a # at the start or after a blank,
// outside quotes.
func cutComment(line string) string {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// shellWords splits a command line as sh would for the README's commands:
// blanks separate words, quotes group them.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestReadmeCommands checks that every README command is listed in
// readmeCommands, and runs each that can run offline: the acp command,
// built once, against its built-in demo agent in an empty directory.
func TestReadmeCommands(t *testing.T) {
	cmds := readmeShellCommands(t)
	if len(cmds) == 0 {
		t.Fatal("README.md has no ```sh commands")
	}
	inReadme := map[string]bool{}
	for _, c := range cmds {
		inReadme[c] = true
		if _, ok := readmeCommands[c]; !ok {
			t.Errorf("README.md runs %q, which readmeCommands neither runs nor allowlists", c)
		}
	}
	for c := range readmeCommands {
		if !inReadme[c] {
			t.Errorf("readmeCommands lists %q, which README.md no longer shows", c)
		}
	}

	const prefix = "go run ./examples/acp "
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "acp")
	if out, err := exec.CommandContext(ctx, goTool(t), "build", "-o", bin, "./examples/acp").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/acp: %v\n%s", err, out)
	}
	_, err := os.Stat(filepath.Join("acptest", "demo"))
	haveDemo := err == nil
	ran := 0
	for _, c := range cmds {
		rc := readmeCommands[c]
		if rc.needsDemo && !haveDemo {
			t.Logf("not run, acptest/demo is not in this tree: %s", c)
			continue
		}
		if rc.skip != "" || !strings.HasPrefix(c, prefix) {
			if rc.skip == "" && rc.want != nil {
				t.Errorf("%q: only the acp command's lines run here; allowlist it with a reason", c)
			}
			continue
		}
		ran++
		t.Run(c, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, bin, shellWords(strings.TrimPrefix(c, prefix))...)
			cmd.Dir = t.TempDir()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok && slices.Contains(rc.exitOK, ee.ExitCode()) {
				err = nil
			}
			if err != nil {
				t.Fatalf("%s: %v\n%s", c, err, out.Bytes())
			}
			for _, w := range rc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("%s printed no %q:\n%s", c, w, out.Bytes())
				}
			}
		})
	}
	if ran == 0 {
		t.Error("no README command ran: the offline ones must")
	}
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
