package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpclient/acp/registry"
)

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0:                     "0 B",
		1023:                  "1023 B",
		1024:                  "1.0 KiB",
		1536:                  "1.5 KiB",
		1024*1024 - 1:         "1.0 MiB", // not "1024.0 KiB"
		12*1024*1024 + 314573: "12.3 MiB",
		49 * 1024 * 1024:      "49.0 MiB",
		3 << 30:               "3.0 GiB",
		1<<63 - 1:             "8.0 EiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDownloadLine(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{0, 49 * mib, 0, "acp: downloading codex-acp 0.16.0  0 B / 49.0 MiB  0%"},
		{12*mib + 314573, 49 * mib, 3 * time.Second, "acp: downloading codex-acp 0.16.0  12.3 MiB / 49.0 MiB  25%  4.1 MiB/s"},
		{49 * mib, 49 * mib, 10 * time.Second, "acp: downloading codex-acp 0.16.0  49.0 MiB / 49.0 MiB  100%  4.9 MiB/s"},
		{0, 0, time.Second, "acp: downloading codex-acp 0.16.0  0 B / 0 B  100%  0 B/s"},
		// The size unknown: bytes and rate only.
		{5 * mib, -1, 2 * time.Second, "acp: downloading codex-acp 0.16.0  5.0 MiB  2.5 MiB/s"},
		{512, -1, 0, "acp: downloading codex-acp 0.16.0  512 B"},
	} {
		if got := downloadLine("codex-acp", "0.16.0", c.done, c.total, c.elapsed); got != c.want {
			t.Errorf("downloadLine(%d, %d, %v)\n got %q\nwant %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
	// The registry's strings cannot drive the terminal.
	got := downloadLine("evil\r\x1b[2J", "1.0\n\u009b", 0, -1, 0)
	if want := `acp: downloading evil\r\x1b[2J 1.0\n\u009b  0 B`; got != want {
		t.Errorf("escaped: %q, want %q", got, want)
	}
}

// fakeBar is a live bar writing to a buffer, on a clock the test moves.
func fakeBar(json bool) (*downloadBar, *bytes.Buffer, *bytes.Buffer, *time.Time) {
	var stdout, stderr bytes.Buffer
	o := newOutput(&config{json: json}, &stdout, &stderr)
	b := newDownloadBar(o)
	b.live = !json
	clock := time.Unix(1e9, 0)
	b.now = func() time.Time { return clock }
	return b, &stdout, &stderr, &clock
}

// The line is redrawn at most every redrawEvery, by the registry's
// reports and the clock, always once more at completion, and then ended
// with a newline.
func TestDownloadBarThrottle(t *testing.T) {
	b, _, stderr, clock := fakeBar(false)
	a := &registry.Agent{ID: "demo", Version: "1.0.0"}
	p := func(done int64) {
		b.report(registry.Progress{Agent: a, URL: "https://h/a.zip", Done: done, Total: 10240})
	}
	p(0)    // drawn: the first report
	p(1024) // not: no time has passed
	*clock = clock.Add(50 * time.Millisecond)
	p(2048) // not yet
	*clock = clock.Add(50 * time.Millisecond)
	p(3072) // drawn: 100 ms since the last draw
	*clock = clock.Add(10 * time.Millisecond)
	p(10240) // drawn: complete, and the line ends
	b.end()  // nothing more: the bar ended at completion
	p(10240) // a late report of an ended download: dropped
	want := "\racp: downloading demo 1.0.0  0 B / 10.0 KiB  0%\x1b[K" +
		"\racp: downloading demo 1.0.0  3.0 KiB / 10.0 KiB  30%  30.0 KiB/s\x1b[K" +
		"\racp: downloading demo 1.0.0  10.0 KiB / 10.0 KiB  100%  90.9 KiB/s\x1b[K\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr\n got %q\nwant %q", got, want)
	}
}

// A download that fails, or whose size is unknown, ends its line when the
// install returns, drawing the last state first if it was not drawn.
func TestDownloadBarEndsOnFailure(t *testing.T) {
	b, _, stderr, clock := fakeBar(false)
	a := &registry.Agent{ID: "demo", Version: "1.0.0"}
	b.report(registry.Progress{Agent: a, URL: "https://h/a.zip", Done: 0, Total: -1})
	b.report(registry.Progress{Agent: a, URL: "https://h/a.zip", Done: 2048, Total: -1})
	*clock = clock.Add(time.Second)
	b.end()
	want := "\racp: downloading demo 1.0.0  0 B\x1b[K" +
		"\racp: downloading demo 1.0.0  2.0 KiB  2.0 KiB/s\x1b[K\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr\n got %q\nwant %q", got, want)
	}
	b.end() // once only
	if got := stderr.String(); got != want {
		t.Errorf("a second end wrote %q", got[len(want):])
	}
}

// With --json: a start and an end event on stdout, nothing on stderr.
func TestDownloadBarJSON(t *testing.T) {
	b, stdout, stderr, _ := fakeBar(true)
	a := &registry.Agent{ID: "demo", Version: "1.0.0"}
	for _, done := range []int64{0, 100, 200} {
		b.report(registry.Progress{Agent: a, URL: "https://h/a.zip", Done: done, Total: -1})
	}
	b.end()
	want := `{"agent":"demo","done":0,"event":"download","phase":"start","total":-1,"url":"https://h/a.zip","version":"1.0.0"}` + "\n" +
		`{"agent":"demo","done":200,"event":"download","phase":"end","total":-1,"url":"https://h/a.zip","version":"1.0.0"}` + "\n"
	if got := stdout.String(); got != want {
		t.Errorf("stdout\n got %s\nwant %s", got, want)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr %q", stderr)
	}
}

// chunkedRegistry serves a registry whose demo agent's archive (this test
// binary, see zipOfSelf) is sent with its Content-Length in chunks, each
// flushed: the first at once, the others once release is closed; or, with
// fail, the connection is cut instead of the second. It returns the
// registry file and the archive's size.
func chunkedRegistry(t *testing.T, chunks int, release <-chan struct{}, fail bool) (file string, size int) {
	t.Helper()
	platform := registry.Platform(runtime.GOOS, runtime.GOARCH)
	if platform == "" {
		t.Skipf("the registry has no platform name for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	exe := "demo-agent"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	archive := zipOfSelf(t, "demo/"+exe)
	sum := sha256.Sum256(archive)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		step := len(archive)/chunks + 1
		for i := 0; i < len(archive); i += step {
			if i > 0 {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				if fail {
					panic(http.ErrAbortHandler) // cut the connection mid-body
				}
			}
			w.Write(archive[i:min(i+step, len(archive))])
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	file = writeRegistry(t, registry.Agent{ID: "demo", Name: "Demo", Version: "1.0.0", Description: "the demo agent", Distribution: registry.Distribution{
		Binary: map[string]registry.BinaryTarget{platform: {
			Archive: srv.URL + "/demo.zip", SHA256: hex.EncodeToString(sum[:]),
			Cmd: "./demo/" + exe, Env: map[string]string{demoEnv: "1"},
		}}}})
	return file, len(archive)
}

// releaseOnce closes a channel once, from the test or its cleanup.
func releaseOnce(t *testing.T) (ch chan struct{}, release func()) {
	ch = make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return ch, release
}

// Not on a terminal: no redrawn line, the "installing" line as before;
// with --json a download event at the start and one at the end, before the
// session event.
func TestDownloadNotTerminal(t *testing.T) {
	isolateCache(t)
	ch, release := releaseOnce(t)
	release()
	file, size := chunkedRegistry(t, 4, ch, false)

	_, errOut, code := runCLI(t, "", "--cwd", t.TempDir(), "--permission", "reject", "-p", "hello", "--agent", "demo", "--registry", file)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	if !strings.Contains(errOut, "acp: installing demo 1.0.0 from ") || strings.Contains(errOut, "\r") || strings.Contains(errOut, "downloading") {
		t.Errorf("stderr %q", errOut)
	}

	isolateCache(t) // download again
	out, errOut, code := runCLI(t, "", "--json", "--cwd", t.TempDir(), "-p", "hello", "--agent", "demo", "--registry", file)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	if !strings.Contains(errOut, "acp: installing demo 1.0.0 from ") || strings.Contains(errOut, "\r") {
		t.Errorf("--json stderr %q", errOut)
	}
	evs := parseEvents(t, out)
	if ks := kinds(evs); len(ks) < 3 || ks[0] != "download" || ks[1] != "download" || ks[2] != "session" {
		t.Fatalf("events %v", ks)
	}
	for i, want := range []struct {
		phase string
		done  int
	}{{"start", 0}, {"end", size}} {
		e := evs[i]
		if e["phase"] != want.phase || e["agent"] != "demo" || e["version"] != "1.0.0" || e["done"] != float64(want.done) || e["total"] != float64(size) {
			t.Errorf("event %d: %v, want phase %s done %d total %d", i, e, want.phase, want.done, size)
		}
	}
}

// A download cut off midway: with --json the end event still comes, with
// the bytes received, then the error; nothing is redrawn on stderr.
func TestDownloadFailsJSON(t *testing.T) {
	isolateCache(t)
	ch, release := releaseOnce(t)
	release()
	file, size := chunkedRegistry(t, 4, ch, true)
	out, errOut, code := runCLI(t, "", "--json", "--cwd", t.TempDir(), "-p", "hello", "--agent", "demo", "--registry", file)
	if code != 1 {
		t.Fatalf("exit %d; stdout %s", code, out)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("stderr %q", errOut)
	}
	evs := parseEvents(t, out)
	if ks := kinds(evs); fmt.Sprint(ks) != "[download download error]" {
		t.Fatalf("events %v", ks)
	}
	if done := evs[1]["done"].(float64); evs[1]["phase"] != "end" || done <= 0 || done >= float64(size) {
		t.Errorf("end event %v, want some of %d bytes", evs[1], size)
	}
}
