package traceview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// frame is one well-formed line of a trace.
type frame struct {
	line int      // 1-based line number in the trace
	t    *float64 // milliseconds since the trace began; nil when absent
	dir  string   // ">", "<" or "!"
	msg  json.RawMessage
	note string
}

// badLine is a line that is not a trace object, kept for the page.
type badLine struct {
	Line int    `json:"line"`
	Err  string `json:"err"`
	Text string `json:"text"`
	More int    `json:"more,omitempty"` // bytes of the line not kept
}

// trace is what reading a trace leaves besides its frames, which go to
// the builder one at a time as they are read: a frame is folded and its
// decoded form dropped at once, so the model never holds a trace twice.
type trace struct {
	frames    int       // well-formed frames, each handed to onFrame
	bad       []badLine // the first MaxMalformed malformed lines
	malformed int       // all of them, listed or not
	lines     int
	bytes     int64 // bytes of lines kept
	truncated bool
	cutLine   int // the first line not read, when truncated
}

// addBad records a malformed line. Only the first MaxMalformed are kept
// for the page; the rest are counted. Without that bound every one-byte
// line of garbage became some 50 bytes of page and 300 of memory.
func (tr *trace) addBad(max int, mk func() badLine) {
	tr.malformed++
	if len(tr.bad) < max {
		tr.bad = append(tr.bad, mk())
	}
}

// readTrace reads the JSONL trace, keeping at most MaxBytes of lines, and
// hands each well-formed frame to onFrame in order.
func readTrace(r io.Reader, opts Options, onFrame func(frame)) (*trace, error) {
	tr := &trace{}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, over, err := readLine(br, opts.MaxLineBytes)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(line) == 0 && over == 0 && errors.Is(err, io.EOF) {
			return tr, nil
		}
		tr.lines = n
		if over > 0 {
			size := opts.MaxLineBytes + over
			tr.addBad(opts.MaxMalformed, func() badLine {
				return badLine{Line: n, Err: fmt.Sprintf("a line of %d bytes, longer than MaxLineBytes (%d): not read", size, opts.MaxLineBytes), Text: string(line), More: size - len(line)}
			})
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			if tr.bytes+int64(len(t)) > opts.MaxBytes {
				tr.truncated, tr.cutLine = true, n
				return tr, nil
			}
			tr.bytes += int64(len(t))
			if f, perr := parseLine(t); perr != nil {
				tr.addBad(opts.MaxMalformed, func() badLine {
					k := keep(t)
					return badLine{Line: n, Err: perr.Error(), Text: k, More: len(t) - len(k)}
				})
			} else {
				f.line = n
				tr.frames++
				onFrame(f)
			}
		}
		if errors.Is(err, io.EOF) {
			return tr, nil
		}
	}
}

// readLine returns the next line without its end, at most max bytes of
// it; over counts the bytes of a longer line that were read and dropped,
// and only its first keptLineBytes are returned then.
func readLine(br *bufio.Reader, max int) (line []byte, over int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		data := chunk
		if err == nil {
			data = chunk[:len(chunk)-1]
		}
		if room := max - len(line); len(data) <= room {
			line = append(line, data...)
		} else {
			line = append(line, data[:room]...)
			over += len(data) - room
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if over > 0 {
			line = line[:min(len(line), keptLineBytes)]
		}
		return line, over, err
	}
}

func parseLine(b []byte) (frame, error) {
	var w struct {
		T    *float64        `json:"t"`
		Dir  *string         `json:"dir"`
		Msg  json.RawMessage `json:"msg"`
		Note *string         `json:"note"`
	}
	if b[0] != '{' {
		return frame{}, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(b, &w); err != nil {
		// Say it in the trace's terms, not Go's.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return frame{}, fmt.Errorf("%q is a JSON %s, of the wrong type", te.Field, te.Value)
		}
		return frame{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if w.Dir == nil {
		return frame{}, errors.New(`no "dir"`)
	}
	f := frame{t: w.T, dir: *w.Dir}
	switch f.dir {
	case ">", "<":
		if len(w.Msg) == 0 || w.Msg[0] != '{' {
			return frame{}, fmt.Errorf(`"dir":%q without a "msg" object`, f.dir)
		}
		f.msg = w.Msg
	case "!":
		if w.Note == nil {
			return frame{}, errors.New(`"dir":"!" without a "note"`)
		}
		f.note = *w.Note
	default:
		return frame{}, fmt.Errorf(`"dir" is %q, not ">", "<" or "!"`, f.dir)
	}
	return f, nil
}

// keep returns at most keptLineBytes of b as text (a rune cut in two
// becomes U+FFFD in the page's JSON).
func keep(b []byte) string {
	return string(b[:min(len(b), keptLineBytes)])
}
