package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/acpclient/acp/traceview"
)

const viewUsageHead = `usage: acp view [flags] [TRACE.jsonl | -]

Renders a wire trace (acp --trace FILE, an acptest transcript, a recording
of an agent; ACP v1 or v2) as one self-contained HTML page: a timeline per
session and turn, tool calls with their status changes and diffs,
permission requests with the answer and how long it took, errors, notes
and every raw frame. The page needs no network; open it in a browser.

The page goes to stdout, or to -o FILE. With no TRACE or "-" the trace is
read from stdin. Lines that are not trace frames are counted on stderr and
listed on the page (the first --max-malformed of them); the rest is shown.
See docs/VIEWER.md.

examples:
  acp --trace t.jsonl -p "hello" && acp view t.jsonl > t.html
  acp view -o t.html t.jsonl

exit status: 0 the page was written (also with malformed lines, or a trace
cut at --max-bytes: stderr says so); 1 the trace could not be read or the
page not written; 2 bad flags.

flags:
`

type viewConfig struct {
	out          string
	title        string
	json         bool
	maxBytes     int64
	maxLineBytes int
	maxMalformed int
	trace        string
}

func parseViewFlags(args []string, stderr io.Writer) (*viewConfig, error) {
	vc := &viewConfig{}
	fs := flag.NewFlagSet("acp view", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&vc.out, "o", "", "write the page to this file instead of stdout")
	fs.StringVar(&vc.title, "title", "", "the page's title (default: the trace's file name)")
	fs.BoolVar(&vc.json, "json", false, `with -o: print {"event":"view",...} (what the page holds) on stdout; failures as {"event":"error","message":...}`)
	fs.Int64Var(&vc.maxBytes, "max-bytes", 0, fmt.Sprintf("keep at most this many bytes of the trace; the page says where it was cut (default %d)", traceview.DefaultMaxBytes))
	fs.IntVar(&vc.maxLineBytes, "max-line-bytes", 0, fmt.Sprintf("a longer line is listed as malformed, not read (default %d)", traceview.DefaultMaxLineBytes))
	fs.IntVar(&vc.maxMalformed, "max-malformed", 0, fmt.Sprintf("list at most this many malformed lines on the page; the others are counted (default %d)", traceview.DefaultMaxMalformed))
	fs.Usage = func() {
		fmt.Fprint(stderr, viewUsageHead)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch fs.NArg() {
	case 0:
	case 1:
		vc.trace = fs.Arg(0)
	default:
		return nil, fmt.Errorf("view takes one trace, not %d", fs.NArg())
	}
	if vc.json && (vc.out == "" || vc.out == "-") {
		return nil, errors.New("view --json needs -o FILE: stdout is the page otherwise")
	}
	if vc.maxBytes < 0 || vc.maxLineBytes < 0 || vc.maxMalformed < 0 {
		return nil, errors.New("--max-bytes, --max-line-bytes and --max-malformed must not be negative")
	}
	return vc, nil
}

// viewEvent is the --json line of `acp view`.
type viewEvent struct {
	Event     string `json:"event"` // "view"
	Output    string `json:"output"`
	Lines     int    `json:"lines"`
	Frames    int    `json:"frames"`
	Malformed int    `json:"malformed"`
	Sessions  int    `json:"sessions"`
	Turns     int    `json:"turns"`
	Updates   int    `json:"updates"`
	Truncated bool   `json:"truncated"`
}

// view is `acp view`: it returns the exit status.
func view(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	vc, err := parseViewFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "acp:", err)
		return 2
	}
	fail := func(err error) int {
		if vc.json {
			b, _ := json.Marshal(map[string]string{"event": "error", "message": err.Error()})
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			fmt.Fprintln(stderr, "acp: view:", err)
		}
		return 1
	}
	in, title := stdin, vc.title
	if vc.trace != "" && vc.trace != "-" {
		f, err := os.Open(vc.trace)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		in = f
		if title == "" {
			title = filepath.Base(vc.trace)
		}
	}
	out := stdout
	var file *os.File
	if vc.out != "" && vc.out != "-" {
		if file, err = os.Create(vc.out); err != nil {
			return fail(err)
		}
		out = file
	}
	st, err := traceview.Render(out, in, traceview.Options{Title: title, MaxBytes: vc.maxBytes, MaxLineBytes: vc.maxLineBytes, MaxMalformed: vc.maxMalformed})
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	truncated := errors.Is(err, traceview.ErrTruncated)
	if err != nil && !truncated {
		return fail(err)
	}
	if vc.json {
		b, _ := json.Marshal(viewEvent{Event: "view", Output: vc.out, Lines: st.Lines, Frames: st.Frames,
			Malformed: st.Malformed, Sessions: st.Sessions, Turns: st.Turns, Updates: st.Updates, Truncated: st.Truncated})
		fmt.Fprintf(stdout, "%s\n", b)
	}
	if st.Malformed > 0 {
		if limit := cmp.Or(vc.maxMalformed, traceview.DefaultMaxMalformed); st.Malformed > limit {
			fmt.Fprintf(stderr, "acp: view: %d malformed lines, the first %d listed on the page (--max-malformed)\n", st.Malformed, limit)
		} else {
			fmt.Fprintf(stderr, "acp: view: %d malformed lines, listed on the page\n", st.Malformed)
		}
	}
	if truncated {
		fmt.Fprintf(stderr, "acp: view: %v; the page shows the trace up to there (raise --max-bytes)\n", err)
	}
	return 0
}
