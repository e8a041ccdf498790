//go:build linux

package main

import (
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// On a terminal, --agent's first run shows the archive's download as one
// line redrawn in place, with bytes, percent and rate, ended with a
// newline before the agent's output. The archive comes in flushed chunks:
// the first at once, the rest only once the test has seen the first
// drawing, so the line is seen while the download is under way.
func TestDownloadProgressTerminal(t *testing.T) {
	isolateCache(t) // inherited by the command's process
	ch, release := releaseOnce(t)
	file, size := chunkedRegistry(t, 4, ch, false)
	total := formatBytes(int64(size))

	cmd, sc, _ := startPTY(t, "--cwd", t.TempDir(), "--permission", "reject", "-p", "hello", "--agent", "demo", "--registry", file)
	sc.expect(t, "acp: installing demo 1.0.0 from ")
	sc.expect(t, "\r\n\racp: downloading demo 1.0.0  0 B / "+total+"  0%\x1b[K")
	release()
	sc.expect(t, "\racp: downloading demo 1.0.0  "+total+" / "+total+"  100%")
	from := sc.mark()
	sc.expect(t, "\r\n") // the pty's rendering of "\n"
	end := regexp.MustCompile(`^  [0-9.]+ (B|KiB|MiB|GiB)/s\x1b\[K\r\n$`)
	if tail := sc.all()[from:sc.mark()]; !end.MatchString(tail) {
		t.Errorf("the line ends with %q, want the rate, clear to end of line and a newline", tail)
	}
	sc.expect(t, `You said: "hello"`)
	sc.expect(t, "[end_turn]")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// A download that fails midway ends its line with a newline before the
// error, which is not drawn over.
func TestDownloadFailsTerminal(t *testing.T) {
	isolateCache(t)
	ch, release := releaseOnce(t)
	file, _ := chunkedRegistry(t, 4, ch, true)
	cmd, sc, _ := startPTY(t, "--cwd", t.TempDir(), "-p", "hello", "--agent", "demo", "--registry", file)
	sc.expect(t, "\racp: downloading demo 1.0.0  0 B / ")
	release()
	from := sc.mark()
	sc.expect(t, "\x1b[K\r\nacp: ")
	if drawn := sc.all()[from:sc.mark()]; strings.Contains(drawn, "100%") {
		t.Errorf("a failed download drawn complete: %q", drawn)
	}
	if rest := sc.rest(); strings.Count(rest, "\r") != 1 || !strings.HasSuffix(rest, "\r\n") || strings.Contains(rest, "\x1b") {
		t.Errorf("after the line: %q, want one line: the error", rest)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
}
