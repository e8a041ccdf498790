package traceview

import (
	"errors"
	"fmt"
	"io"
)

// Defaults of [Options]; the zero value of each field selects them.
const (
	// DefaultMaxBytes bounds the trace bytes a page retains: 64 MiB, about
	// 300 000 typical updates. The page embeds each frame and its rendering,
	// so it is larger than the trace (1.3 times for 100 000 short updates).
	DefaultMaxBytes = 64 << 20
	// DefaultMaxLineBytes bounds one line: 16 MiB, room for a tool call
	// that carries a large file.
	DefaultMaxLineBytes = 16 << 20
	// DefaultMaxDiffBytes bounds the texts a diff is computed from: 1 MiB
	// (old and new text together); a larger edit shows its path and sizes.
	DefaultMaxDiffBytes = 1 << 20
	// DefaultMaxMalformed bounds the malformed lines the page lists:
	// 1000, each with at most 4 KiB of its text. The rest are counted.
	DefaultMaxMalformed = 1000
)

// keptLineBytes is how much of a malformed or over-long line the page
// shows: enough to recognise it, not enough to carry a second trace.
const keptLineBytes = 4 << 10

// Options configures [Render]. The zero value is ready to use.
type Options struct {
	// Title is the page's title; "" is "ACP trace".
	Title string
	// MaxBytes bounds the bytes of trace lines kept (0: DefaultMaxBytes).
	// Reading stops at the first line that would exceed it; the page is
	// still written, says where the trace was cut, and Render returns an
	// error wrapping ErrTruncated.
	MaxBytes int64
	// MaxLineBytes bounds one line (0: DefaultMaxLineBytes). A longer line
	// is reported on the page as malformed with its first 4 KiB, and
	// reading goes on with the next line.
	MaxLineBytes int
	// MaxDiffBytes bounds the old and new text a diff is computed from
	// (0: DefaultMaxDiffBytes). A larger edit is shown by path and sizes.
	MaxDiffBytes int
	// MaxMalformed bounds the malformed lines listed on the page (0:
	// DefaultMaxMalformed). The first ones are listed with their line
	// number, error and first 4 KiB; later ones are only counted (in
	// Stats.Malformed and on the page, which says how many it does not
	// list), so a trace of garbage costs no more than its count.
	MaxMalformed int
}

func (o Options) withDefaults() Options {
	if o.Title == "" {
		o.Title = "ACP trace"
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.MaxDiffBytes <= 0 {
		o.MaxDiffBytes = DefaultMaxDiffBytes
	}
	if o.MaxMalformed <= 0 {
		o.MaxMalformed = DefaultMaxMalformed
	}
	return o
}

// ErrTruncated is wrapped by the error Render returns when the trace was
// larger than Options.MaxBytes. The page was written completely and shows
// the trace up to the cut.
var ErrTruncated = errors.New("traceview: trace truncated")

// Stats says what a page holds.
type Stats struct {
	Lines     int   // lines read (blank ones included)
	Frames    int   // well-formed frames, each on the page
	Malformed int   // lines that are not trace frames (the first MaxMalformed listed on the page)
	Bytes     int64 // bytes of the lines kept
	Sessions  int
	Turns     int
	Updates   int  // session/update notifications
	Truncated bool // the trace was cut at MaxBytes (Render's error says where)
}

// Render reads a trace from r and writes its HTML page to w. Malformed
// lines do not fail it: they are counted in Stats, and the first
// Options.MaxMalformed are listed on the page. It fails when r or w fails, and returns an error wrapping
// ErrTruncated (after writing the whole page) when the trace exceeded
// Options.MaxBytes.
func Render(w io.Writer, r io.Reader, opts Options) (Stats, error) {
	opts = opts.withDefaults()
	p, tr, err := load(r, opts)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Lines: tr.lines, Frames: tr.frames, Malformed: tr.malformed, Bytes: tr.bytes,
		Sessions: len(p.Sessions), Turns: p.Stats.Turns, Updates: p.Stats.Updates, Truncated: tr.truncated}
	if err := writePage(w, p, opts); err != nil {
		return st, err
	}
	if tr.truncated {
		return st, fmt.Errorf("%w at line %d: more than %d bytes (Options.MaxBytes)", ErrTruncated, tr.cutLine, opts.MaxBytes)
	}
	return st, nil
}
