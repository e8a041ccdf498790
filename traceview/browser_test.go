package traceview

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The browser tests load rendered pages in headless Chromium (see
// cdp_test.go) and check what the DOM shows, not what the data says.

var docsScreenshot = flag.Bool("docs-screenshot", false, "also write the screenshot to ../docs/viewer.png")

// artifacts is where screenshots go: $ACP_VIEWER_ARTIFACTS (CI keeps it),
// else a temporary directory of the test.
func artifacts(t *testing.T) string {
	if d := os.Getenv("ACP_VIEWER_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// writePageFile renders trace into a file and returns its file:// URL.
func writePageFile(t *testing.T, dir, name string, trace []byte, opts Options) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Render(&buf, bytes.NewReader(trace), opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: path}).String()
}

// JavaScript helpers evaluated in the page.
const (
	jsRendered = `document.documentElement.getAttribute('data-rendered') === 'true'`
	// jsNodes counts the elements the page built (the two script elements
	// and their text are not the page's rendering).
	jsNodes = `document.getElementById('app').getElementsByTagName('*').length`
	// jsOpenTurns clicks the header of every turn not open (the last one
	// is at load) and returns the number of turns open with at least one
	// item rendered.
	jsOpenTurns = `(() => {
		const turns = [...document.querySelectorAll('section.turn')];
		turns.filter(s => !s.classList.contains('open')).forEach(s => s.querySelector(':scope > button.head').click());
		return turns.filter(s => s.classList.contains('open') && s.querySelector(':scope > .body .item')).length;
	})()`
)

// TestBrowserTranscripts loads the page of every recording in Chromium:
// its script runs to the end, it shows each session and turn, the last
// turn open and no other, and opening the turns renders their items. A
// screenshot of each page as it loads goes to the artifacts.
func TestBrowserTranscripts(t *testing.T) {
	tb := chrome(t).newTab(t, 1200, 900) // one tab for all: a page each
	dir := t.TempDir()
	for _, path := range transcripts(t) {
		name := filepath.Base(filepath.Dir(path)) + "-" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			trace, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, p := render(t, trace, Options{})
			tb.t = t
			tb.navigate(writePageFile(t, dir, name, trace, Options{}))
			var ok bool
			if tb.eval(jsRendered, &ok); !ok {
				t.Fatal("the page's script did not finish rendering")
			}
			var sessions, turns int
			tb.eval(`document.querySelectorAll('section.session').length`, &sessions)
			tb.eval(`document.querySelectorAll('section.turn').length`, &turns)
			if sessions != len(p.Sessions) || turns != p.Stats.Turns {
				t.Errorf("page shows %d sessions, %d turns; the trace has %d, %d", sessions, turns, len(p.Sessions), p.Stats.Turns)
			}
			var open []string
			tb.eval(`[...document.querySelectorAll('section.turn.open')].map(s => s.closest('section.session').getAttribute('data-session') + ' ' + s.getAttribute('data-turn'))`, &open)
			if want := lastTurn(p); fmt.Sprint(open) != fmt.Sprint(want) {
				t.Errorf("turns open at load: %q, want %q (the last)", open, want)
			}
			writeArtifact(t, "transcript-"+strings.TrimSuffix(strings.TrimPrefix(name, "transcripts-"), ".jsonl")+".png", tb.screenshot())
			var opened int
			if tb.eval(jsOpenTurns, &opened); opened != p.Stats.Turns {
				t.Errorf("%d of %d turns show items when opened", opened, p.Stats.Turns)
			}
		})
	}
}

// TestBrowserEdit opens the turn of a real recording (Claude editing a
// file with permission) and checks the DOM: the prompt, the tool call
// titles, a diff with its removed and added lines, the permission's
// answer with its time; then the raw frames of an item, on demand. It
// writes a screenshot as an artifact (and, with -docs-screenshot, as
// docs/viewer.png).
func TestBrowserEdit(t *testing.T) {
	c := chrome(t)
	trace, err := os.ReadFile("../testdata/transcripts/e2e-claude-edit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, p := render(t, trace, Options{})
	tb := c.open(t, writePageFile(t, t.TempDir(), "edit", trace, Options{Title: "e2e-claude-edit.jsonl"}), 1100, 1500)
	var n int
	tb.eval(jsOpenTurns, &n)
	if n != 1 {
		t.Fatalf("opened %d turns, want 1", n)
	}
	var got struct {
		Prompt  string
		Titles  []string
		Add     []string
		Del     []string
		Answer  string
		Options []string
		Raw     int
	}
	tb.eval(`(() => {
		const q = s => [...document.querySelectorAll(s)].map(e => e.textContent);
		return {
			Prompt: q('section.turn .k-user pre.text')[0] || '',
			Titles: q('section.turn .tool-title'),
			Add: q('section.turn .diff .l.add'),
			Del: q('section.turn .diff .l.del'),
			Answer: q('section.turn .k-perm .answer')[0] || '',
			Options: q('section.turn .k-perm .opts li.chosen'),
			Raw: document.querySelectorAll('.rawframes').length,
		};
	})()`, &got)
	var wantTitles []string
	for _, it := range find(p, "tool") {
		wantTitles = append(wantTitles, it.Tool.Title)
	}
	if got.Prompt == "" || fmt.Sprint(got.Titles) != fmt.Sprint(wantTitles) {
		t.Errorf("prompt %q, tool titles %q; want titles %q", got.Prompt, got.Titles, wantTitles)
	}
	if !contains(got.Add, "+hello there") || !contains(got.Del, "-hello world") {
		t.Errorf("diff lines: added %q, removed %q", got.Add, got.Del)
	}
	pm := find(p, "perm")[0].Perm
	wantAnswer := fmt.Sprintf("answer: %s after %s", pm.Name, durationJS(*pm.MS))
	if got.Answer != wantAnswer || len(got.Options) != 1 {
		t.Errorf("permission answer %q (chosen %q); want %q", got.Answer, got.Options, wantAnswer)
	}
	if got.Raw != 0 {
		t.Errorf("%d raw frame lists rendered before any was asked for", got.Raw)
	}
	png := tb.screenshot()
	writeArtifact(t, "viewer-edit.png", png)
	if *docsScreenshot {
		if err := os.WriteFile("../docs/viewer.png", png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var raw string
	tb.eval(`(() => {
		const b = [...document.querySelectorAll('section.turn .k-perm button.link')].find(b => b.textContent.startsWith('raw'));
		b.click();
		return b.closest('.item').querySelector('.rawframes').textContent;
	})()`, &raw)
	if !bytes.Contains([]byte(raw), []byte(`"session/request_permission"`)) || !bytes.Contains([]byte(raw), []byte(pm.Option)) {
		t.Errorf("raw frames of the permission item: %.300s", raw)
	}
}

// lastTurn is the turn the page opens at load, as "session n", or none.
func lastTurn(p *page) []string {
	var out []string
	for _, s := range p.Sessions {
		for _, g := range s.Segs {
			if g.Open {
				out = append(out, fmt.Sprintf("%s %d", s.ID, g.N))
			}
		}
	}
	return out
}

// durationJS is viewer.js's dur().
func durationJS(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeArtifact(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, len(b))
}

// TestBrowserOpenAll: the page opens with the last turn open; "open all
// turns" renders every turn (of the first paged sessions), "close all
// turns" hides them again.
func TestBrowserOpenAll(t *testing.T) {
	c := chrome(t)
	trace, err := os.ReadFile("../testdata/transcripts/e2e-claude-second-turn.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, p := render(t, trace, Options{})
	tb := c.open(t, writePageFile(t, t.TempDir(), "two", trace, Options{}), 1200, 900)
	var before []string
	var open, closed int
	tb.eval(`[...document.querySelectorAll('section.turn.open')].map(s => s.getAttribute('data-turn'))`, &before)
	tb.eval(`(() => { [...document.querySelectorAll('button.link')].find(b => b.textContent === 'open all turns').click();
		return document.querySelectorAll('section.turn.open > .body .item').length > 0 ? document.querySelectorAll('section.turn.open').length : -1; })()`, &open)
	tb.eval(`(() => { [...document.querySelectorAll('button.link')].find(b => b.textContent === 'close all turns').click();
		return document.querySelectorAll('section.turn.open').length; })()`, &closed)
	if fmt.Sprint(before) != fmt.Sprintf("[%d]", p.Stats.Turns) || open != p.Stats.Turns || p.Stats.Turns < 2 || closed != 0 {
		t.Errorf("open turns: %q at load (want the last, %d), %d after open all (want %d), %d after close all", before, p.Stats.Turns, open, p.Stats.Turns, closed)
	}
}

// TestBrowserNoTimestamps: a trace without "t" shows no times, says so
// at the top, and says why a permission's answer has no time.
func TestBrowserNoTimestamps(t *testing.T) {
	c := chrome(t)
	trace, err := os.ReadFile("../testdata/transcripts/e2e-claude-edit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`"t":[0-9.]+,`).ReplaceAll(trace, nil)
	tb := c.open(t, writePageFile(t, t.TempDir(), "notime", stripped, Options{}), 1200, 900)
	type shown struct {
		Warn, Answer string
		Times        int
	}
	look := func() (got shown) {
		tb.eval(jsOpenTurns, nil)
		tb.eval(`(() => ({
			Warn: [...document.querySelectorAll('.warn')].map(e => e.textContent).join('|'),
			Answer: document.querySelector('section.turn .k-perm .answer').textContent,
			Times: [...document.querySelectorAll('#app *')].filter(e => e.children.length === 0 && /^\+[0-9.]+ s$/.test(e.textContent)).length,
		}))()`, &got)
		return got
	}
	if got := look(); !strings.Contains(got.Warn, "no timestamps") || !strings.Contains(got.Answer, "time not shown: the trace has no timestamps") || got.Times != 0 {
		t.Errorf("without timestamps: %+v", got)
	}
	// The same trace with its timestamps shows them.
	tb.navigate(writePageFile(t, t.TempDir(), "time", trace, Options{}))
	if got := look(); strings.Contains(got.Warn, "no timestamps") || strings.Contains(got.Answer, "not shown") || got.Times == 0 {
		t.Errorf("with timestamps: %+v", got)
	}
}
