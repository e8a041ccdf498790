package traceview

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The page's code and style, inlined into every page. They are files of
// their own so that they can be edited as what they are.
var (
	//go:embed assets/viewer.js
	viewerJS string
	//go:embed assets/viewer.css
	viewerCSS string
)

// csp allows the page's own script and style and nothing else: no
// network, no other script, even if something in the page were misread as
// markup. The hashes pin the inline code. They are computed on the first
// page, not at init, so that a program linking the package (the acp
// command does, for acp view) does not hash 20 KB at every start.
var csp = sync.OnceValue(func() string {
	return "default-src 'none'; img-src data:; style-src '" + hash(viewerCSS) + "'; script-src '" + hash(viewerJS) + "'"
})

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

// writeFrames writes `,"frames":[…]`: each frame's message as it was
// read (it is valid JSON: parseLine decoded it), HTML-escaped, without
// the cost of re-encoding a whole trace through reflection.
func writeFrames(bw *bufio.Writer, frames []rawFrame) {
	bw.WriteString(`,"frames":[`)
	var b []byte
	for i, f := range frames {
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"n":`...)
		b = strconv.AppendInt(b, int64(f.Line), 10)
		if f.T != nil && !math.IsNaN(*f.T) && !math.IsInf(*f.T, 0) {
			b = append(b, `,"t":`...)
			b = strconv.AppendFloat(b, *f.T, 'f', -1, 64)
		}
		b = append(b, `,"d":`...)
		b = appendString(b, f.Dir)
		if f.Msg != nil {
			b = append(b, `,"m":`...)
			bw.Write(b)
			b = b[:0]
			var esc bytes.Buffer
			json.HTMLEscape(&esc, f.Msg)
			bw.Write(esc.Bytes())
		} else {
			b = append(b, `,"note":`...)
			b = appendString(b, f.Note)
		}
		b = append(b, '}')
		bw.Write(b)
	}
	bw.WriteString("]")
}

// appendString appends s as an HTML-escaped JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func writePage(w io.Writer, p *page, opts Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"" + html.EscapeString(csp()) + "\">\n")
	bw.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	bw.WriteString("<meta name=\"generator\" content=\"github.com/acpclient/acp/traceview\">\n")
	bw.WriteString("<title>" + html.EscapeString(strings.ToValidUTF8(opts.Title, "\uFFFD")) + "</title>\n")
	bw.WriteString("<style>" + viewerCSS + "</style>\n</head>\n<body>\n")
	bw.WriteString("<noscript><p>This page renders the trace with JavaScript; without it, the trace is the JSON in the element with id \"trace-data\".</p></noscript>\n")
	bw.WriteString("<div id=\"app\"></div>\n")
	// The data is JSON in a non-executable script element. encoding/json
	// escapes '<', '>' and '&' (and U+2028, U+2029), so no string from the
	// trace can close the element or open a comment.
	bw.WriteString("<script type=\"application/json\" id=\"trace-data\">")
	if err := writeData(bw, p); err != nil {
		return err
	}
	bw.WriteString("</script>\n<script>" + viewerJS + "</script>\n</body>\n</html>\n")
	return bw.Flush()
}

// writeData writes the page's data, a piece at a time: marshalling the
// whole model at once would hold all of its JSON in memory (twice, with
// encoding/json's buffer) next to the model. Each piece is marshalled by
// encoding/json (which escapes HTML); the lists that grow with the trace
// (connection items, malformed lines, sessions, their segments and
// items, frames) are written element by element.
func writeData(bw *bufio.Writer, p *page) error {
	head := *p
	head.Conn, head.Bad, head.Sessions = nil, nil, nil // omitempty: written below
	if err := writeOpen(bw, head); err != nil {
		return err
	}
	if err := writeList(bw, `,"conn":`, p.Conn, func(it *item) error { return writeValue(bw, it) }); err != nil {
		return err
	}
	if err := writeList(bw, `,"bad":`, p.Bad, func(b badLine) error { return writeValue(bw, b) }); err != nil {
		return err
	}
	if err := writeList(bw, `,"sessions":`, p.Sessions, func(s *session) error {
		sh := *s
		sh.Segs = nil
		if err := writeOpen(bw, sh); err != nil {
			return err
		}
		if err := writeList(bw, `,"segs":`, s.Segs, func(g *segment) error {
			gh := *g
			gh.Items = nil
			if err := writeOpen(bw, gh); err != nil {
				return err
			}
			if err := writeList(bw, `,"items":`, g.Items, func(it *item) error { return writeValue(bw, it) }); err != nil {
				return err
			}
			return bw.WriteByte('}')
		}); err != nil {
			return err
		}
		return bw.WriteByte('}')
	}); err != nil {
		return err
	}
	writeFrames(bw, p.Frames)
	return bw.WriteByte('}')
}

// writeValue writes v as JSON.
func writeValue(bw *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = bw.Write(b)
	return err
}

// writeOpen writes the JSON object v without its closing brace, for the
// caller to append fields to.
func writeOpen(bw *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = bw.Write(b[:len(b)-1])
	return err
}

// writeList writes key (`,"name":`) and the JSON array of list, each
// element by one.
func writeList[T any](bw *bufio.Writer, key string, list []T, one func(T) error) error {
	bw.WriteString(key)
	bw.WriteByte('[')
	for i, v := range list {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := one(v); err != nil {
			return err
		}
	}
	return bw.WriteByte(']')
}
