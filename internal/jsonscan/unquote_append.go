package jsonscan

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnquote appends the decoding of the JSON string literal s (quotes
// included) to dst, exactly as Unquote decodes it, and returns the
// extended slice: a caller with a buffer of its own (the client's fold, on
// the stack) decodes an escaped text without allocating. ok is false when
// s is not a valid literal; dst is then returned as it came.
func AppendUnquote(dst, s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return dst, false
	}
	start := len(dst)
	s = s[1 : len(s)-1]
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return dst[:start], false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				dst = append(dst, s[r])
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return dst[:start], false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						dst = utf8.AppendRune(dst, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default:
				return dst[:start], false
			}
			r++
		case c == '"', c < ' ':
			return dst[:start], false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst, true
}
