// Package jsonscan is the client's one JSON scanner: a checking walk
// (ValidValue and friends), a skipping walk (Skip) for input validated
// already or next, an object walk on either (Obj, and FindKey on it), and a
// streaming form (IDScanner) for lines too large to hold. It allocates
// nothing on its fast paths; the decoders and the wire build on it.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The scanner serves the reader's hot path (wire envelope, session/update
// params, text chunks, union discriminators). encoding/json costs a full
// validation pass plus a reflective decode per Unmarshal, and the nested
// decoders call it once per level; here a line is validated once and its
// parts are taken as slices of it.
//
// The scanners are deliberately conservative: they recognise a narrow set of
// exact shapes, and anything else — a key that differs from a known one only
// by case (encoding/json matches those), a duplicate key, an escaped key, an
// unexpected member — makes them report "not handled", and the caller falls
// back to the encoding/json path. So the fast path can only ever produce what
// the general path would have produced.

// maxDepth matches encoding/json's nesting limit: deeper input is left
// to the general path, which rejects it the same way.
const maxDepth = 10000

// ValidValue returns the index just past the valid JSON value that
// starts at data[i] (no leading whitespace), or -1 when the value is not
// valid JSON as encoding/json's scanner defines it.
func ValidValue(data []byte, i, depth int) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; c {
	case '"':
		return ValidString(data, i)
	case '{':
		if depth >= maxDepth {
			return -1
		}
		i = SkipWS(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return -1
			}
			if i = ValidString(data, i); i < 0 {
				return -1
			}
			i = SkipWS(data, i)
			if i >= len(data) || data[i] != ':' {
				return -1
			}
			i = SkipWS(data, i+1)
			if i = ValidValue(data, i, depth+1); i < 0 {
				return -1
			}
			i = SkipWS(data, i)
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case ',':
				i = SkipWS(data, i+1)
			case '}':
				return i + 1
			default:
				return -1
			}
		}
	case '[':
		if depth >= maxDepth {
			return -1
		}
		i = SkipWS(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for {
			if i = ValidValue(data, i, depth+1); i < 0 {
				return -1
			}
			i = SkipWS(data, i)
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case ',':
				i = SkipWS(data, i+1)
			case ']':
				return i + 1
			default:
				return -1
			}
		}
	case 't':
		return literal(data, i, "true")
	case 'f':
		return literal(data, i, "false")
	case 'n':
		return literal(data, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return ValidNumber(data, i)
		}
		return -1
	}
}

func literal(data []byte, i int, lit string) int {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// ValidNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func ValidNumber(data []byte, i int) int {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// ValidString returns the index just past the valid string starting at
// data[i] (a '"'), or -1. Like encoding/json's scanner it accepts any byte
// from 0x20 up, invalid UTF-8 included (decoding coerces it later).
func ValidString(data []byte, i int) int {
	end, _, _ := validStringFlags(data, i)
	return end
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Skip returns the index just past the value starting at data[i], or
// -1 when it is cut short. It checks only what it must to find the value's
// end (strings are skipped with IndexByte), so it is for input that was
// validated already or is validated next; ValidValue is the checking
// twin.
func Skip(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return SkipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := SkipString(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: it runs to the next delimiter.
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			if j == i {
				return -1
			}
			return j
		}
		j++
	}
	return j
}

// SkipString returns the index just past the string starting at data[i]
// (a '"'), or -1 when it is unterminated.
func SkipString(data []byte, i int) int {
	j := i + 1
	// Most strings are short and plain (keys, ids, kinds): stepped over
	// eight bytes, then one byte, at a time, with no call, to the first
	// byte that needs a look; the closing quote is the usual one.
	for j+8 <= len(data) && !wordNeedsLook(binary.LittleEndian.Uint64(data[j:])) {
		j += 8
	}
	for j < len(data) && strPlain[data[j]] {
		j++
	}
	if j < len(data) && data[j] == '"' {
		return j + 1
	}
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && data[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// Obj walks the members of one JSON object. With validate set, every
// value is checked as it is skipped; otherwise the input must already have
// been validated. Keys are returned as written, without their quotes;
// keyPlain reports a key without escapes.
type Obj struct {
	data     []byte
	i        int
	validate bool
	first    bool
	bad      bool // not an object, or invalid JSON
	done     bool
}

func NewObj(data []byte, validate bool) Obj {
	s := Obj{data: data, validate: validate, first: true}
	s.i = SkipWS(data, 0)
	if s.i >= len(data) || data[s.i] != '{' {
		s.bad = true
		return s
	}
	s.i = SkipWS(data, s.i+1)
	if s.i < len(data) && data[s.i] == '}' {
		s.i++
		s.done = true
	}
	return s
}

// next returns the next member. ok is false at the end of the object or on
// error (then s.bad is set).
func (s *Obj) Next() (key []byte, keyPlain bool, val []byte, ok bool) {
	if s.bad || s.done {
		return nil, false, nil, false
	}
	d, i := s.data, s.i
	if !s.first {
		if i >= len(d) {
			s.bad = true
			return nil, false, nil, false
		}
		switch d[i] {
		case ',':
			i = SkipWS(d, i+1)
		case '}':
			s.i, s.done = i+1, true
			return nil, false, nil, false
		default:
			s.bad = true
			return nil, false, nil, false
		}
	}
	s.first = false
	if i >= len(d) || d[i] != '"' {
		s.bad = true
		return nil, false, nil, false
	}
	var kend int
	if s.validate {
		kend = ValidString(d, i)
	} else {
		kend = SkipString(d, i)
	}
	if kend < 0 {
		s.bad = true
		return nil, false, nil, false
	}
	key = d[i+1 : kend-1]
	keyPlain = bytes.IndexByte(key, '\\') < 0
	i = SkipWS(d, kend)
	if i >= len(d) || d[i] != ':' {
		s.bad = true
		return nil, false, nil, false
	}
	i = SkipWS(d, i+1)
	var vend int
	if s.validate {
		vend = ValidValue(d, i, 1)
	} else {
		vend = Skip(d, i)
	}
	if vend < 0 {
		s.bad = true
		return nil, false, nil, false
	}
	val = d[i:vend]
	s.i = SkipWS(d, vend)
	return key, keyPlain, val, true
}

// Bad reports whether the walk met something that is not an object or not
// valid JSON.
func (s *Obj) Bad() bool { return s.bad }

// Rest reports whether only whitespace follows the object (after next has
// returned false without error).
func (s *Obj) Rest() bool {
	return !s.bad && s.done && SkipWS(s.data, s.i) == len(s.data)
}

var (
	// ErrNotObject: FindKey was given something other than an object,
	// null included (which encoding/json would read into a map as nil).
	ErrNotObject = errors.New("not a JSON object")
	// ErrSyntax: FindKey met invalid JSON before it found the key.
	ErrSyntax = errors.New("invalid JSON")
)

// FindKey returns the raw value of the first occurrence of key at the top
// level of the JSON object data, skipping over other values without decoding
// them. (encoding/json keeps the last duplicate; the first is used here, the
// same on every decode, which is all round-tripping needs.) The members
// before the key are checked only as far as needed to find their ends; the
// decoder that runs next validates.
func FindKey(data []byte, key string) (val []byte, found bool, err error) {
	s := NewObj(data, false)
	if s.bad {
		return nil, false, ErrNotObject
	}
	for {
		k, plain, v, ok := s.Next()
		if !ok {
			if s.bad {
				return nil, false, ErrSyntax
			}
			return nil, false, nil
		}
		// A plain key compares as written unless it holds invalid UTF-8,
		// which encoding/json reads as U+FFFD: then it goes through Unquote.
		if plain && utf8.Valid(k) {
			if string(k) == key {
				return v, true, nil
			}
		} else if u, ok := Unquote(append(append([]byte{'"'}, k...), '"')); ok && u == key {
			return v, true, nil
		}
	}
}

// HasKey reports whether the JSON object data has key at its top level;
// false when data is not an object.
func HasKey(data []byte, key string) bool {
	_, found, _ := FindKey(data, key)
	return found
}

func SkipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// FoldsLike reports whether key matches name the way encoding/json matches
// a struct field (case-insensitively, Unicode folding included: "ſ" is
// "s", "\u212a" is "k") without being name itself: such a key sends the
// fast path back to encoding/json. A folded rune is at most three bytes
// per byte of the ASCII names it is used with.
func FoldsLike(key []byte, name string) bool {
	return len(key) >= len(name) && len(key) <= 3*len(name) && string(key) != name && bytes.EqualFold(key, []byte(name))
}

// Plain returns the inside of the JSON string literal s when it needs no
// unescaping (no backslash, no control byte, valid UTF-8), without copying:
// the common case of ids, method names and discriminators. ok is false for
// any other literal, which Unquote decodes.
func Plain(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return nil, false
	}
	in := s[1 : len(s)-1]
	for _, c := range in {
		if !strPlain[c] {
			return plainSlow(in)
		}
	}
	return in, true // ASCII: valid UTF-8
}

// plainSlow is Plain for the inside of a literal that is not all plain
// ASCII.
func plainSlow(in []byte) ([]byte, bool) {
	for _, c := range in {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	if !utf8.Valid(in) {
		return nil, false
	}
	return in, true
}

// Unquote decodes a JSON string literal (quotes included) exactly as
// encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD. The
// result is a new string. ok is false when s is not a valid literal.
func Unquote(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	s = s[1 : len(s)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return string(s), true
	}
	b := make([]byte, len(s)+2*utf8.UTFMax)
	w := copy(b, s[:r])
	for r < len(s) {
		if w >= len(b)-2*utf8.UTFMax {
			nb := make([]byte, (len(b)+utf8.UTFMax)*2)
			copy(nb, b[:w])
			b = nb
		}
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return "", false
			}
			switch s[r] {
			default:
				return "", false
			case '"', '\\', '/', '\'':
				b[w] = s[r]
				r++
				w++
			case 'b':
				b[w] = '\b'
				r++
				w++
			case 'f':
				b[w] = '\f'
				r++
				w++
			case 'n':
				b[w] = '\n'
				r++
				w++
			case 'r':
				b[w] = '\r'
				r++
				w++
			case 't':
				b[w] = '\t'
				r++
				w++
			case 'u':
				r--
				rr := getu4(s[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						w += utf8.EncodeRune(b[w:], dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				w += utf8.EncodeRune(b[w:], rr)
			}
		case c == '"', c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b[w] = c
			r++
			w++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			w += utf8.EncodeRune(b[w:], rr)
		}
	}
	if w == 0 {
		return "", true
	}
	// b is ours alone and never written again: no second copy.
	return unsafe.String(&b[0], w), true
}

func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// IDScanner recovers the top-level "id" and "method" of a JSON-RPC message
// from a stream of bytes without keeping the message: it is how a line too
// large to hold is still matched to the call it answers. It tracks only
// nesting depth, string state and the current top-level key; it never fails,
// and on malformed input it simply finds nothing.
type IDScanner struct {
	depth  int
	inStr  bool
	esc    bool
	keyPos bool // at depth 1, the next string is a key
	valPos bool // at depth 1, after the key's colon

	mode   int // 0: nothing, 1: reading a key, 2: capturing a string value, 3: capturing a scalar
	cur    []byte
	curCut bool // cur reached ScanCap and lost bytes
	key    string

	ID     []byte
	IDCut  bool // ID is a cut-off prefix, not the id as written
	Method string
}

const ScanCap = 256 // longer ids or methods are not worth recovering

func (s *IDScanner) Feed(b []byte) {
	for _, c := range b {
		if s.inStr {
			if s.mode != 0 {
				if len(s.cur) < ScanCap {
					s.cur = append(s.cur, c)
				} else {
					s.curCut = true
				}
			}
			if s.esc {
				s.esc = false
				continue
			}
			switch c {
			case '\\':
				s.esc = true
			case '"':
				s.inStr = false
				s.endString()
			}
			continue
		}
		if s.mode == 3 {
			switch c {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				s.endScalar()
			default:
				if len(s.cur) < ScanCap {
					s.cur = append(s.cur, c)
				} else {
					s.curCut = true
				}
				continue
			}
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.keyPos {
				s.mode, s.cur, s.curCut = 1, s.cur[:0], false
			} else if s.depth == 1 && s.valPos && (s.key == "id" || s.key == "method") {
				s.mode, s.cur, s.curCut = 2, append(s.cur[:0], '"'), false
			}
		case '{', '[':
			s.valPos = false
			s.depth++
			s.keyPos = s.depth == 1 && c == '{'
		case '}', ']':
			s.depth--
		case ':':
			if s.depth == 1 {
				s.keyPos, s.valPos = false, true
			}
		case ',':
			if s.depth == 1 {
				s.keyPos, s.valPos = true, false
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.depth == 1 && s.valPos && s.key == "id" {
				s.mode, s.cur, s.curCut = 3, append(s.cur[:0], c), false
			}
		}
	}
}

func (s *IDScanner) endString() {
	switch s.mode {
	case 1:
		if n := len(s.cur); n > 0 {
			s.key = string(s.cur[:n-1]) // drop the closing quote
		}
	case 2:
		if s.key == "id" {
			s.ID, s.IDCut = append([]byte(nil), s.cur...), s.curCut
		} else if n := len(s.cur); n >= 2 {
			s.Method = string(s.cur[1 : n-1])
		}
		s.valPos = false
	}
	s.mode = 0
}

func (s *IDScanner) endScalar() {
	if v := string(s.cur); v != "null" && v != "true" && v != "false" {
		s.ID, s.IDCut = append([]byte(nil), s.cur...), s.curCut
	}
	s.mode = 0
	s.valPos = false
}
