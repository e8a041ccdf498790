package otelacp

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every method the protocol packages (schema, nes) define is known here, so that its
// requests' spans are named after it: a method missing from methods
// would be traced as _OTHER.
func TestMethodsKnown(t *testing.T) {
	var files []string
	for _, dir := range []string{"..", "../schema", "../nes"} {
		fs, err := filepath.Glob(dir + "/*.go")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	decl := regexp.MustCompile(`(?m)^\s*(Method[A-Z]\w*)\s*(?:string\s*)?=\s*"([^"]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			n++
			if !methods[m[2]] {
				t.Errorf("%s (%q) is not in otelacp's methods", m[1], m[2])
			}
			if name, _ := method(m[2]); name != m[2] {
				t.Errorf("the span of %q is named %q", m[2], name)
			}
		}
	}
	if n < 40 || n != len(methods) {
		t.Errorf("%d Method constants in the module's packages, %d methods known", n, len(methods))
	}
	if name, attrs := method("_x/" + strings.Repeat("m", 5000)); name != methodOther || len(attrs) != 3 || len(attrs[2].Value.AsString()) > MaxAttributeBytes {
		t.Errorf("an unknown method: %q %v", name, attrs[:2])
	}
}

// clip cuts at MaxAttributeBytes, on a rune boundary, and says so.
func TestClip(t *testing.T) {
	if s := strings.Repeat("x", MaxAttributeBytes); clip(s) != s {
		t.Error("a value of exactly MaxAttributeBytes was cut")
	}
	for _, s := range []string{strings.Repeat("x", MaxAttributeBytes+1), strings.Repeat("é", MaxAttributeBytes), strings.Repeat("😀", 1<<20)} {
		c := clip(s)
		if len(c) > MaxAttributeBytes || !utf8.ValidString(c) || !strings.HasSuffix(c, "…") || !strings.HasPrefix(s, strings.TrimSuffix(c, "…")) {
			t.Errorf("clip of %d bytes: %d bytes, valid %v, %q…", len(s), len(c), utf8.ValidString(c), c[len(c)-8:])
		}
	}
}

// A value outside a known set is "other" (error codes: _OTHER).
func TestKnownValues(t *testing.T) {
	if known("edit", toolKinds) != "edit" || known("kind 7", toolKinds) != "other" || known("end_turn", stopReasons) != "end_turn" || known("", stopReasons) != "other" {
		t.Error("known")
	}
	if errorCode(-32603) != "-32603" || errorCode(770001) != "_OTHER" {
		t.Errorf("errorCode: %s %s", errorCode(-32603), errorCode(770001))
	}
}

// The zero MaxOpenToolSpans is the default; a value is kept.
func TestMaxOpenToolSpansDefault(t *testing.T) {
	if n := (&Instrumentation{}).maxOpenTools(); n != DefaultMaxOpenToolSpans {
		t.Errorf("zero Options: %d open tool spans, want %d", n, DefaultMaxOpenToolSpans)
	}
	if n := (&Instrumentation{opts: Options{MaxOpenToolSpans: 7}}).maxOpenTools(); n != 7 {
		t.Errorf("MaxOpenToolSpans 7: %d", n)
	}
}
