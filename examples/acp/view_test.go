package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// acp --trace, then acp view: the page of a real session with the demo
// agent (two turns, a tool call, a permission answered), and --json's
// summary line.
func TestViewTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if _, errOut, code := runCLI(t, "", "--trace", trace, "--permission", "allow", "--cwd", dir, "-p", "first", "-p", "second"); code != 0 {
		t.Fatalf("acp --trace: exit %d, stderr %s", code, errOut)
	}
	page := filepath.Join(dir, "t.html")
	out, errOut, code := runCLI(t, "", "view", "--json", "-o", page, trace)
	if code != 0 || errOut != "" {
		t.Fatalf("acp view: exit %d, stderr %q", code, errOut)
	}
	var ev viewEvent
	if err := json.Unmarshal([]byte(out), &ev); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if ev.Event != "view" || ev.Output != page || ev.Sessions != 1 || ev.Turns != 2 || ev.Malformed != 0 || ev.Frames == 0 || ev.Truncated {
		t.Errorf("view event %+v", ev)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>t.jsonl</title>", `id="trace-data"`, `"session/request_permission"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Without -o the page goes to stdout; "-" reads stdin.
	f, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, code := runCLI(t, string(f)+"not a frame\n", "view", "--title", "from stdin", "-")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.Contains(stdout, "<title>from stdin</title>") {
		t.Errorf("acp view - : exit %d, page %.100q", code, stdout)
	}
}

// Malformed lines and a cut trace still give a page, exit 0, and say so
// on stderr.
func TestViewWarnings(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	lines := `{"t":1,"dir":"!","note":"one"}` + "\nnot JSON\n" + `{"t":2,"dir":"!","note":"two"}` + "\n"
	if err := os.WriteFile(trace, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", "view", "--max-bytes", "40", trace)
	if code != 0 || !strings.Contains(out, "</html>") {
		t.Fatalf("exit %d, page %.80q", code, out)
	}
	for _, want := range []string{"1 malformed lines", "trace truncated at line 3", "--max-bytes"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}

// Past --max-malformed the malformed lines are counted, not listed, and
// stderr says how many of them the page lists.
func TestViewMaxMalformed(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(strings.Repeat("garbage\n", 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "", "view", "--max-malformed", "2", trace)
	if code != 0 || !strings.Contains(errOut, "5 malformed lines, the first 2 listed on the page (--max-malformed)") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := strings.Count(out, `"err":"not a JSON object"`); n != 2 {
		t.Errorf("the page lists %d malformed lines, want 2", n)
	}
	if _, _, code := runCLI(t, "", "view", "--max-malformed", "-1", trace); code != 2 {
		t.Errorf("--max-malformed -1: exit %d, want 2", code)
	}
}

func TestViewErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"view", filepath.Join(dir, "missing.jsonl")}, 1, "no such file"},
		{[]string{"view", "--json", "x.jsonl"}, 2, "needs -o"},
		{[]string{"view", "a.jsonl", "b.jsonl"}, 2, "one trace"},
		{[]string{"view", "--max-bytes", "-1", "a.jsonl"}, 2, "negative"},
		{[]string{"view", "-o", filepath.Join(dir, "no", "dir", "x.html"), filepath.Join(dir, "missing.jsonl")}, 1, "no such file"},
	} {
		_, errOut, code := runCLI(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	// Under --json a failure is an error event on stdout.
	out, _, code := runCLI(t, "", "view", "--json", "-o", filepath.Join(dir, "x.html"), filepath.Join(dir, "missing.jsonl"))
	if code != 1 || !strings.Contains(out, `"event":"error"`) {
		t.Errorf("--json failure: exit %d, stdout %q", code, out)
	}
}
