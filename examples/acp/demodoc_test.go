package main

// docs/DEMO.md's walk-throughs are run: each fenced block marked
// "console test" is a shell transcript whose commands run the command
// (in-process, with the demo agent a real subprocess), and whose output
// lines must appear, in order, in what they print.

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docBlock is one "console test" block: commands and the output lines
// each expects.
type docBlock struct {
	line int // where the block starts in the file, for messages
	cmds []docCmd
}

type docCmd struct {
	text string   // the command as written, after "$ "
	want []string // the output lines shown below it
}

func readDocBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []docBlock
	var cur *docBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```console test":
			cur = &docBlock{line: n}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(line, "$ "):
			cur.cmds = append(cur.cmds, docCmd{text: strings.TrimPrefix(line, "$ ")})
		case cur != nil && len(cur.cmds) > 0:
			c := &cur.cmds[len(cur.cmds)-1]
			c.want = append(c.want, line)
		case cur != nil:
			t.Fatalf("%s:%d: output before any command", path, n)
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated block", path, cur.line)
	}
	return blocks
}

// shellWords splits a command line as a shell would for the commands of
// the docs: words, "double" and 'single' quoted strings.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

var (
	docPID       = regexp.MustCompile(`pid \d+`)
	docSessionID = regexp.MustCompile(`demo-[0-9a-f]{16}`)
)

// normalize makes a line comparable: pids and session ids vary by run.
func normalize(s string) string {
	s = docPID.ReplaceAllString(s, "pid N")
	s = docSessionID.ReplaceAllString(s, "demo-ID")
	return strings.TrimSpace(s)
}

func TestDemoDocCommands(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "DEMO.md")
	blocks := readDocBlocks(t, path)
	if len(blocks) < 4 {
		t.Fatalf("%s has %d test blocks; the walk-throughs are gone?", path, len(blocks))
	}
	for _, b := range blocks {
		t.Run("line"+strconv.Itoa(b.line), func(t *testing.T) {
			state, cwd := t.TempDir(), t.TempDir()
			ids := map[string]string{} // the doc's session ids → this run's
			status := -1
			for _, c := range b.cmds {
				words := shellWords(t, c.text)
				var args []string
				switch {
				case c.text == "go build -o acp ./examples/acp":
					continue // the test binary is the command
				case c.text == "echo $?":
					if status < 0 || len(c.want) != 1 || c.want[0] != strconv.Itoa(status) {
						t.Errorf("%q: the status was %d, the doc shows %q", c.text, status, c.want)
					}
					continue
				case words[0] == "./acp":
					args = words[1:]
				case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./examples/acp":
					args = words[3:]
				default:
					t.Fatalf("%s:%d: %q is no command this test can run", path, b.line, c.text)
				}
				for i := range args {
					for doc, real := range ids {
						args[i] = strings.ReplaceAll(args[i], doc, real)
					}
				}
				out, errOut, code := runCLI(t, "", append([]string{"--demo-state-dir", state, "--cwd", cwd}, args...)...)
				status = code
				checkDocOutput(t, c, out, errOut, ids)
			}
		})
	}
}

// checkDocOutput finds each line the doc shows in stdout or stderr, in
// order within each, and learns the session ids it names.
func checkDocOutput(t *testing.T, c docCmd, out, errOut string, ids map[string]string) {
	t.Helper()
	streams := [][]string{strings.Split(out, "\n"), strings.Split(errOut, "\n")}
	at := []int{0, 0}
next:
	for _, want := range c.want {
		for s, lines := range streams {
			for i := at[s]; i < len(lines); i++ {
				if normalize(lines[i]) == normalize(want) {
					at[s] = i + 1
					if doc, real := docSessionID.FindString(want), docSessionID.FindString(lines[i]); doc != "" {
						ids[doc] = real
					}
					continue next
				}
			}
		}
		t.Errorf("$ %s: the output lacks %q (in order)\nstdout:\n%s\nstderr:\n%s", c.text, want, out, errOut)
		return
	}
}
