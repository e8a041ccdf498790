package traceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The text the page shows of what a trace holds: a content block's text,
// one-line summaries, raw JSON compacted or indented up to a bound, and
// durations. The ones that cut (pretty, clip, firstLine) take their bound
// from the caller (maxRawBytes, maxNameBytes in build.go).

// blocksText is the text of a list of content blocks.
func blocksText(raw json.RawMessage) string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return blockText(raw)
	}
	var sb strings.Builder
	for i, r := range list {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(blockText(r))
	}
	return sb.String()
}

// blockText is a content block as text: its text, or a bracketed
// description of what it is (links and images are described, never
// loaded).
func blockText(raw json.RawMessage) string {
	var c struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
		Name     string `json:"name"`
		Resource struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil {
		return ""
	}
	switch c.Type {
	case "text", "":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s]", c.Type, c.MimeType)
	case "resource_link":
		return fmt.Sprintf("[link %s %s]", c.Name, c.URI)
	case "resource":
		s := fmt.Sprintf("[resource %s]", c.Resource.URI)
		if c.Resource.Text != "" {
			s += "\n" + c.Resource.Text
		}
		return s
	}
	return "[" + c.Type + "]"
}

// summary is a short one-line rendering of a JSON object, without the
// named field.
func summary(raw json.RawMessage, drop string) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var m map[string]json.RawMessage
	if drop != "" && json.Unmarshal(raw, &m) == nil {
		delete(m, drop)
		if len(m) == 0 {
			return ""
		}
		raw, _ = json.Marshal(m)
	}
	return clip(compact(raw), 300)
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// pretty indents raw as json.Indent(dst, raw, "", "  ") does, but writes
// at most n bytes and says so when it stops. json.Indent would first
// build the whole indented text, and that is quadratic in the nesting:
// 20 KB of "[[[[…" a few thousand deep indents to some 100 MB, to be cut
// to n afterwards. raw is valid JSON (it was decoded), so a scan that
// tracks strings and nesting is enough.
func pretty(raw json.RawMessage, n int) string {
	out := make([]byte, 0, min(n, 2*len(raw))+64)
	depth, inStr, esc, opened := 0, false, false, false
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(raw); i++ {
		if len(out) > n {
			return fmt.Sprintf("%s… (cut at %d bytes; the value is %d bytes as sent)", out[:n], n, len(raw))
		}
		c := raw[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if opened && c != '}' && c != ']' {
			newline() // the first member of a non-empty object or array
		}
		switch c {
		case '{', '[':
			out = append(out, c)
			depth++
			opened = true
			continue
		case '}', ']':
			depth--
			if !opened { // an empty one stays {} or []
				newline()
			}
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		case '"':
			inStr = true
			out = append(out, c)
		default:
			out = append(out, c)
		}
		opened = false
	}
	if len(out) > n {
		return fmt.Sprintf("%s… (cut at %d bytes; the value is %d bytes as sent)", out[:n], n, len(raw))
	}
	return string(out)
}

// clip cuts s to n bytes, saying how much was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes more)", s[:n], len(s)-n)
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return clip(s, n)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func since(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	d := *b - *a
	return &d
}

func duration(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}
