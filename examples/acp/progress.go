package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/acpclient/acp/registry"
)

// downloadBar reports an agent archive's download (--agent on first use).
// On a terminal (stderr is one, and no --json) it is one line on stderr,
// redrawn in place at most every redrawEvery and once more at the end,
// then ended with a newline:
//
//	acp: downloading codex-acp 0.16.0  12.3 MiB / 49.0 MiB  25%  4.1 MiB/s
//
// With --json it is two events on stdout, {"event":"download",
// "phase":"start",...} when the response arrives and "phase":"end" when the
// download ends (also when it failed; the error event follows). Otherwise
// it shows nothing: the "installing" line says what is happening.
//
// The registry calls report from the goroutine that installs, never
// concurrently for one download; every write takes the output's lock so
// that the line never interleaves with the command's other output.
type downloadBar struct {
	o    *output
	live bool             // redraw a line on stderr
	now  func() time.Time // the clock, for tests

	active   bool // a download has started and not ended
	url      string
	id, ver  string // as the registry says, unescaped
	start    time.Time
	lastDraw time.Time
	drawn    int64 // the Done last drawn, -1 when nothing is
	done     int64
	total    int64
	ended    map[string]bool // URLs whose download ended: late reports are dropped
}

// redrawEvery bounds the redraws to about ten a second: a fast download
// reports every chunk, and a terminal need not see each one.
const redrawEvery = 100 * time.Millisecond

func newDownloadBar(o *output) *downloadBar {
	return &downloadBar{o: o, live: !o.json && isTerminal(o.stderr), now: time.Now, ended: map[string]bool{}}
}

// report is the registry's Options.Progress.
func (b *downloadBar) report(p registry.Progress) {
	b.o.mu.Lock()
	defer b.o.mu.Unlock()
	if b.ended[p.URL] {
		return
	}
	now := b.now()
	if !b.active || b.url != p.URL {
		b.endLocked()
		b.active, b.url, b.start, b.drawn = true, p.URL, now, -1
		b.id, b.ver = "", ""
		if p.Agent != nil {
			b.id, b.ver = p.Agent.ID, p.Agent.Version
		}
		b.done, b.total = p.Done, p.Total
		if b.o.json {
			b.emitLocked("start")
		}
	}
	b.done, b.total = p.Done, p.Total
	complete := p.Total >= 0 && p.Done >= p.Total
	if b.live && (b.drawn < 0 || complete || now.Sub(b.lastDraw) >= redrawEvery) {
		b.drawLocked(now)
	}
	if complete {
		b.endLocked()
	}
}

// end ends the line (or emits the end event) of a download that has not
// said it is complete: one of unknown size, or one that failed. It is
// called when the install returns, whatever its outcome.
func (b *downloadBar) end() {
	b.o.mu.Lock()
	defer b.o.mu.Unlock()
	b.endLocked()
}

func (b *downloadBar) endLocked() {
	if !b.active {
		return
	}
	b.active = false
	b.ended[b.url] = true
	if b.o.json {
		b.emitLocked("end")
		return
	}
	if !b.live || b.drawn < 0 {
		return
	}
	if b.drawn != b.done {
		b.drawLocked(b.now())
	}
	fmt.Fprintln(b.o.stderr)
}

// drawLocked redraws the line. o.mu is held.
func (b *downloadBar) drawLocked(now time.Time) {
	o := b.o
	if o.reading > 0 {
		return // a prompt waits for input: do not draw over it
	}
	if o.last != "" { // stdout is mid-line (it may be this terminal too)
		fmt.Fprintln(o.stdout)
		o.last = ""
	}
	fmt.Fprintf(o.stderr, "\r%s\033[K", downloadLine(b.id, b.ver, b.done, b.total, now.Sub(b.start)))
	o.spinning = false // drawn over
	o.lastDraw = now
	b.lastDraw, b.drawn = now, b.done
}

func (b *downloadBar) emitLocked(phase string) {
	b.o.emit(map[string]any{"event": "download", "phase": phase, "agent": b.id, "version": b.ver,
		"url": b.url, "done": b.done, "total": b.total})
}

// downloadLine is the progress line without its terminal controls. id and
// version are the registry's and are escaped here.
func downloadLine(id, version string, done, total int64, elapsed time.Duration) string {
	var s strings.Builder
	fmt.Fprintf(&s, "acp: downloading %s %s  %s", cleanLine(id), cleanLine(version), formatBytes(done))
	if total >= 0 {
		pct := int64(100)
		if total > 0 {
			pct = min(done, total) * 100 / total
		}
		fmt.Fprintf(&s, " / %s  %d%%", formatBytes(total), pct)
	}
	if elapsed > 0 {
		rate := float64(done) / elapsed.Seconds()
		fmt.Fprintf(&s, "  %s/s", formatBytes(int64(rate)))
	}
	return s.String()
}

// formatBytes writes n bytes in binary units, with one decimal above a
// KiB: 512 B, 1.5 KiB, 12.3 MiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for v >= unit-0.05 && i < len(units)-1 { // 1023.96 KiB prints as 1.0 MiB

		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
