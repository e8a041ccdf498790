package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is package acp, two levels up.
const root = "../.."

// TestGeneratedFileIsFresh fails when protocol_gen.go is not what `go
// generate ./...` would write: after a change to the schema copy, to the Go
// types it reads, or to this generator.
func TestGeneratedFileIsFresh(t *testing.T) {
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, outFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `go generate ./...` in the repository root and commit the result\n%s",
			outFile, firstDiff(got, want))
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n committed: " + gl + "\n generated: " + wl
		}
	}
	return ""
}

// TestEveryDefCovered checks that every $defs entry of the stable schema is
// decoded by a generated decoder or is on the notGenerated list with a
// reason, and that every Go type the lists name exists where they say.
func TestEveryDefCovered(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := loadPackage(root, outFile)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]string{}
	for _, g := range generated {
		if pkg.types[g.Go] == nil {
			t.Errorf("generated type %s is not declared in package acp", g.Go)
		}
		for _, d := range g.Defs {
			if prev, dup := covered[d]; dup {
				t.Errorf("$defs %s is generated for both %s and %s", d, prev, g.Go)
			}
			covered[d] = g.Go
			if s.stable.Defs[d] == nil && !(g.Unstable && s.unstable.Defs[d] != nil) {
				t.Errorf("%s names $defs %s, which the schema does not have", g.Go, d)
			}
		}
	}
	for d, sk := range notGenerated {
		if s.stable.Defs[d] == nil {
			t.Errorf("notGenerated lists %s, which the stable schema does not have", d)
		}
		if g, dup := covered[d]; dup {
			t.Errorf("$defs %s is both generated (%s) and listed as not generated", d, g)
		}
		if strings.TrimSpace(sk.Why) == "" {
			t.Errorf("notGenerated[%s] gives no reason", d)
		}
		if sk.Go != "" {
			decl := pkg.types[sk.Go]
			switch {
			case decl == nil:
				t.Errorf("notGenerated[%s]: type %s is not declared in package acp", d, sk.Go)
			case decl.file != sk.File:
				t.Errorf("notGenerated[%s]: type %s is declared in %s, not %s", d, sk.Go, decl.file, sk.File)
			}
		}
	}
	var missing []string
	for d := range s.stable.Defs {
		if _, ok := covered[d]; ok {
			continue
		}
		if _, ok := notGenerated[d]; !ok {
			missing = append(missing, d)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("$defs with no Go decoder and no reason in notGenerated: %s", strings.Join(missing, ", "))
	}
}

// TestMarksDriveDecoding flips the schema's marks on a few properties and
// checks that the generated decoder follows: leniency comes from the marks,
// not from a list kept by hand.
func TestMarksDriveDecoding(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := loadPackage(root, outFile)
	if err != nil {
		t.Fatal(err)
	}
	gen := func(typ string) string {
		t.Helper()
		for _, g := range generated {
			if g.Go == typ {
				out, err := render(s, pkg, "", []genType{g})
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
		}
		t.Fatalf("%s is not generated", typ)
		return ""
	}
	contains := func(out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("generated code lacks %q:\n%s", want, out)
		}
	}

	caps := s.stable.Defs["AgentCapabilities"].Properties["loadSession"]
	contains(gen("AgentCapabilities"), "LoadSession         wireOpt[bool]")
	caps.DefaultOnError = false
	contains(gen("AgentCapabilities"), "LoadSession         wireStrict[bool]")
	contains(gen("AgentCapabilities"), `errField("agent capabilities", "loadSession"`)
	caps.DefaultOnError = true

	modes := s.stable.Defs["SessionModeState"].Properties["availableModes"]
	contains(gen("SessionModeState"), "wireList[SessionMode]")
	modes.SkipInvalid = false
	contains(gen("SessionModeState"), "wireOpt[[]SessionMode]")
	modes.DefaultOnError = false
	contains(gen("SessionModeState"), "wireStrict[[]SessionMode]")
	modes.SkipInvalid, modes.DefaultOnError = true, true

	impl := s.stable.Defs["Implementation"]
	contains(gen("Implementation"), `errMissing("implementation", "version")`)
	impl.Required = []string{"name"}
	if out := gen("Implementation"); strings.Contains(out, `errMissing("implementation", "version")`) {
		t.Errorf("version still required after the schema dropped it:\n%s", out)
	}
	impl.Required = []string{"name", "version"}

	// A property the Go type lacks stops the generator.
	impl.Properties["website"] = &node{Type: []byte(`"string"`)}
	for _, g := range generated {
		if g.Go == "Implementation" {
			if _, err := render(s, pkg, "", []genType{g}); err == nil || !strings.Contains(err.Error(), "website") {
				t.Errorf("a schema property without a Go field was not reported: %v", err)
			}
		}
	}
	delete(impl.Properties, "website")
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"McpServerHTTP":       "mcp server http",
		"HTTPHeader":          "http header",
		"Implementation":      "implementation",
		"ListSessionsRequest": "list sessions request",
	} {
		if got := words(in); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}
