package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Every string the agent (or the registry) chooses passes through cleanText
// or cleanLine before it reaches a terminal in text mode: a hostile agent
// must not be able to move the cursor, erase what is shown
// ("rm -rf /\r\x1b[Kls" would read as "ls" in the permission dialog),
// retitle the window or write the clipboard (OSC 0, OSC 52). --json needs
// none of this: JSON escapes control characters already.
//
// What is escaped, visibly and in Go's notation: C0 controls as \r, \x1b
// and so on (text keeps \n and \t), DEL as \x7f, C1 controls (U+0080 to
// U+009F, which some terminals obey as ESC-sequences) and the bidirectional
// overrides and isolates (U+202A to U+202E, U+2066 to U+2069, which can
// make text read in another order than it runs) as \u009b, and bytes that
// are not UTF-8 as \xNN. A backslash is left as it is, so an agent can
// print something that looks like an escape, but never a control.

// cleanText makes multi-line agent text (a message, a thought, an error, a
// stderr tail) safe for a terminal: newlines and tabs are kept.
func cleanText(s string) string { return sanitize(s, true) }

// cleanLine makes a one-line agent string (a title, a name, an id, a plan
// entry) safe for a terminal and for the line it is printed on: newlines
// and tabs are escaped too.
func cleanLine(s string) string { return sanitize(s, false) }

func sanitize(s string, multiline bool) string {
	if isClean(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports the runes above ASCII that are escaped: C1 controls
// and bidirectional overrides and isolates.
func unsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isClean is the fast path: most agent text needs no escaping.
func isClean(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return cleanUTF8(s[i:])
		}
		if c == 0x7f || (c < 0x20 && !(multiline && (c == '\n' || c == '\t'))) {
			return false
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) || r < 0x20 || r == 0x7f {
			return false
		}
		i += size
	}
	return true
}

// cleanWriter passes the agent's live stderr (--stderr) through cleanText.
// A rune split between two writes is held back until it is whole, so that
// it is not taken for bytes that are not UTF-8. mu is the output's: the
// agent's lines and the command's own are written one at a time.
type cleanWriter struct {
	w     io.Writer
	mu    *sync.Mutex
	carry []byte
}

func (c *cleanWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := append(c.carry, p...)
	cut := len(b)
	// The last rune's first byte: at most 3 bytes back.
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		if b[i] < 0x80 || b[i] >= 0xc0 {
			if b[i] >= 0xc0 && !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	c.carry = append([]byte(nil), b[cut:]...)
	if _, err := io.WriteString(c.w, cleanText(string(b[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes what is held back: a rune that never became whole.
func (c *cleanWriter) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.carry) > 0 {
		io.WriteString(c.w, cleanText(string(c.carry)))
		c.carry = nil
	}
}
