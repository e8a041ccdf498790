package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

var seeds = []string{
	`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"\u00e9\"x"}`, `"\ud800"`, `-0.5e+3`, `01`, `1.`,
	`{"a":}`, `{"a" 1}`, `[1,]`, `"unterminated`, `tru`, `{"a":"b"}x`, "\"\x01\"", `{"k\u0061":2,"ka":3}`,
}

// ValidValue accepts exactly what encoding/json accepts.
func FuzzValidValue(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		end := -1
		if i := SkipWS(b, 0); i < len(b) {
			if e := ValidValue(b, i, 0); e >= 0 {
				end = SkipWS(b, e)
			}
		}
		if got, want := end == len(b) && len(b) > 0, json.Valid(b); got != want {
			t.Errorf("ValidValue(%q) accepts: %v, encoding/json: %v", b, got, want)
		}
	})
}

// On valid JSON, Skip ends where ValidValue ends; on valid objects, FindKey
// finds what encoding/json finds for a key that occurs once, and on any
// other valid value it reports ErrNotObject.
func FuzzFindKeyAndSkip(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		i := SkipWS(b, 0)
		if !json.Valid(b) || i >= len(b) {
			return
		}
		if got, want := Skip(b, i), ValidValue(b, i, 0); got != want {
			t.Errorf("Skip(%q) = %d, ValidValue = %d", b, got, want)
		}
		if b[i] != '{' {
			// encoding/json unmarshals null into a map as a no-op, but null
			// is no object (RFC 8259 section 4), and FindKey's callers (the
			// union decoders) need to tell it from {}: a null union value
			// is an error, not a variant with every field absent.
			if _, found, err := FindKey(b, key); found || !errors.Is(err, ErrNotObject) {
				t.Fatalf("FindKey(%q, %q) = found %v, %v; want ErrNotObject", b, key, found, err)
			}
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		count := 0
		for o := NewObj(b, true); ; {
			k, _, _, ok := o.Next()
			if !ok {
				break
			}
			if u, _ := Unquote(append(append([]byte{'"'}, k...), '"')); u == key {
				count++
			}
		}
		v, found, err := FindKey(b, key)
		want, ok := m[key]
		if err != nil || found != ok {
			t.Fatalf("FindKey(%q, %q) = found %v, %v; encoding/json found %v", b, key, found, err, ok)
		}
		if found && count == 1 && string(v) != string(want) {
			t.Errorf("FindKey(%q, %q) = %s, encoding/json %s", b, key, v, want)
		}
	})
}

// A value that is not an object has no keys, whatever encoding/json does
// with it: null, above all, is not {}.
func TestFindKeyNotObject(t *testing.T) {
	for _, in := range []string{`null`, ` null `, `[]`, `[{"a":1}]`, `"a"`, `1`, `true`} {
		if v, found, err := FindKey([]byte(in), "a"); found || !errors.Is(err, ErrNotObject) {
			t.Errorf("FindKey(%q) = %q, %v, %v; want ErrNotObject", in, v, found, err)
		}
		if HasKey([]byte(in), "a") {
			t.Errorf("HasKey(%q) = true", in)
		}
	}
}

// Plain takes only literals that need no decoding, and what it takes is
// what Unquote (and encoding/json) decodes.
func TestPlainAgreesWithUnquote(t *testing.T) {
	for _, tc := range []struct {
		in    string
		plain bool
	}{
		{`"abc"`, true}, {`""`, true}, {`"héllo"`, true},
		{`"a\"b"`, false}, {`"a\nb"`, false}, {"\"a\tb\"", false}, {"\"\xff\"", false},
		{`"abc`, false}, {`abc"`, false}, {`"`, false}, {``, false}, {`5`, false},
	} {
		got, ok := Plain([]byte(tc.in))
		if ok != tc.plain {
			t.Errorf("Plain(%q) ok = %v, want %v", tc.in, ok, tc.plain)
			continue
		}
		if ok {
			if want, _ := Unquote([]byte(tc.in)); string(got) != want {
				t.Errorf("Plain(%q) = %q, Unquote gives %q", tc.in, got, want)
			}
		}
	}
}

// AppendUnquote decodes as Unquote does (itself checked against
// encoding/json in schema), after whatever dst held.
func FuzzAppendUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"\n\t\\\/\"\'"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800x"`, "\"\xff\xfe\"", "\"é\"", `"\u0000"`, `"\u12"`, `"\x"`, `"a`, "\"\x01\"", `"\ud800\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, wok := Unquote(s)
		got, gok := AppendUnquote([]byte("pre"), s)
		if gok != wok || string(got[:3]) != "pre" || (wok && string(got[3:]) != want) || (!wok && len(got) != 3) {
			t.Fatalf("AppendUnquote(%q) = %q, %v; Unquote %q, %v", s, got, gok, want, wok)
		}
	})
}

// SkipString ends a valid string where ValidString ends it, and Plain
// (whose ASCII short cut skips the UTF-8 check) reads a literal as the
// byte-by-byte check reads it.
func FuzzSkipStringPlain(f *testing.F) {
	for _, s := range []string{`"abc"`, `"abcdefghijklmnop"`, `"a\"b"`, `"a\\"`, `"caf` + "\xc3\xa9" + `"`, "\"\xff\"", `"\u0041"`, `"x`, `""`, "\"a\tb\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == '"' {
			if end := ValidString(b, 0); end > 0 {
				if got := SkipString(b, 0); got != end {
					t.Fatalf("SkipString(%q) = %d, ValidString %d", b, got, end)
				}
			}
		}
		got, ok := Plain(b)
		var want []byte
		wok := len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"'
		if wok {
			want, wok = plainSlow(b[1 : len(b)-1])
		}
		if ok != wok || !bytes.Equal(got, want) {
			t.Fatalf("Plain(%q) = %q, %v; want %q, %v", b, got, ok, want, wok)
		}
	})
}
