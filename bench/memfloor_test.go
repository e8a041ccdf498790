package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextFloorWritesWhatACPWrites keeps the text floor a floor of the acp
// command's text mode: on a turn of plain, escaped and long texts between
// updates that are not message text, memfloor -text writes to stdout the
// same bytes as the acp command does (and so does at least the work of
// finding and writing them), and the newline floor writes only its count.
// The agent is this test binary as the benchmark's writer, mode texts.
func TestTextFloorWritesWhatACPWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the acp command")
	}
	dir := t.TempDir()
	build := func(wd, pkg string) string {
		bin := filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = wd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		return bin
	}
	floor, acp := build(".", "./memfloor"), build("..", "./examples/acp")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(argv ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(argv[0], append(argv[1:], "-p", "texts", "--", self)...)
		cmd.Env = append(os.Environ(), envMode+"=texts")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", argv, err, e.Bytes())
		}
		return o.String(), e.String()
	}
	want := strings.Join(textsTurn, "") + "\n"
	acpOut, _ := run(acp)
	if acpOut != want {
		t.Fatalf("acp wrote …%q, want the texts and a newline, …%q", acpOut[max(0, len(acpOut)-40):], want[len(want)-40:])
	}
	textOut, textErr := run(floor, "-text")
	if textOut != acpOut {
		t.Errorf("the text floor wrote %q…, want acp's %q…", textOut[:min(len(textOut), 40)], acpOut[:40])
	}
	const lines = "8\n" // three answers, five updates
	if textErr != lines {
		t.Errorf("the text floor's stderr = %q, want its count %q", textErr, lines)
	}
	if out, _ := run(floor); out != lines {
		t.Errorf("the newline floor wrote %q, want its count %q", out, lines)
	}
}
