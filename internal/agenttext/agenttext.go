// Package agenttext cuts text the agent chose down to a size fit for an
// error message or a diagnostic.
package agenttext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text the agent chose — ids, names, lists of them, the message of a
// decoding error that quotes its JSON — reaches error strings and
// diagnostics only through these helpers, which cut it short: the agent
// controls its length (up to Limits.MaxLineBytes), while an error string is
// built whole, logged, printed, and often kept. An agent that offers 200 000
// models must not turn a typo in a model id into a megabyte of error text.
// The values themselves stay whole where they are part of the API
// (SessionState, Error.Message, Diagnostic.Line, which is cut on its own).
const (
	MaxListItems = 8   // items of an agent-chosen list named in a message
	MaxItemBytes = 128 // bytes of one agent-chosen id or name
	MaxTextBytes = 512 // bytes of one agent-chosen text (an error message)
)

// Quote quotes an id the agent sent for a message, cut to
// MaxItemBytes.
func Quote(s string) string {
	if len(s) > MaxItemBytes {
		return strconv.Quote(Cut(s, MaxItemBytes)) + "..."
	}
	return strconv.Quote(s)
}

// Item is an id the agent sent, for a message that lists it bare (as
// "valid: a, b" does): cut to MaxItemBytes, and quoted when it holds
// anything but printable text, so no control byte or terminal escape
// reaches a log or a terminal through it.
func Item(s string) string {
	cut := false
	if len(s) > MaxItemBytes {
		s, cut = Cut(s, MaxItemBytes), true
	}
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }) >= 0 {
		s = strconv.Quote(s)
	}
	if cut {
		s += "..."
	}
	return s
}

// List returns the first MaxListItems of n items (item(i) is
// the i-th) through Item, then, when there are more, one last element
// "and N more". Joined with ", " or printed with %v, it names a few of the
// agent's choices and how many it left out. It reads only the items it
// shows, so a caller need not collect all n first.
func List(n int, item func(i int) string) []string {
	shown := min(n, MaxListItems)
	out := make([]string, 0, shown+1)
	for i := range shown {
		out = append(out, Item(item(i)))
	}
	if rest := n - shown; rest > 0 {
		out = append(out, "and "+strconv.Itoa(rest)+" more")
	}
	return out
}

// Text is a text the agent chose (an error message, an error that
// quotes its JSON), cut to MaxTextBytes; it is shown as is otherwise.
func Text(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	return Cut(s, MaxTextBytes) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Cut returns s cut to at most n bytes, not inside a UTF-8 sequence.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// A rune is at most utf8.UTFMax bytes: step back at most that far, so
	// invalid input (continuation bytes only) is still cut near n.
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// Error wraps err, whose text quotes what the agent sent (encoding/json
// puts a whole number literal in an UnmarshalTypeError), so that its
// message is cut by Text; errors.Is and errors.As still see err.
func Error(err error) error {
	if err == nil {
		return nil
	}
	return cutError{err}
}

type cutError struct{ err error }

func (e cutError) Error() string { return Text(e.err.Error()) }
func (e cutError) Unwrap() error { return e.err }
