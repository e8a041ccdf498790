// This file keeps the README's Go code honest: each ```go block is either
// the first program (built and run by TestReadmeMainRuns) or the body of a
// function in readme_test.go, which the compiler checks against the
// current API. The docs pages that took the README's other snippets
// (docs/CLIENT.md, docs/REGISTRY.md) are held the same way.
package acp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// compiledMarker precedes each code block that is kept compiling:
// <!-- compiled: readmeRemote --> names the function in readme_test.go
// whose body the block must be, dedented.
var compiledMarker = regexp.MustCompile("<!-- compiled: (\\w+) -->\n```go\n((?s:.*?))```\n")

// mainMarker precedes the README's first program, a whole main.go.
var mainMarker = regexp.MustCompile("<!-- main.go -->\n```go\n((?s:.*?))```\n")

// goBlock is any fenced Go block, marked or not.
var goBlock = regexp.MustCompile("(?m)^```go\n")

// TestReadmeCodeIsCompiled checks that every Go block of the README is
// compiled: the marked ones equal their function bodies in readme_test.go,
// the first program is built by TestReadmeMainRuns, and there is no other.
// The docs pages' marked blocks are checked the same way.
func TestReadmeCodeIsCompiled(t *testing.T) {
	bodies := funcBodies(t, "readme_test.go")
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append([]string{"README.md"}, pages...) {
		text := readFile(t, page)
		blocks := compiledMarker.FindAllStringSubmatch(text, -1)
		for _, b := range blocks {
			name, got := b[1], b[2]
			want, ok := bodies[name]
			if !ok {
				t.Errorf("%s marks a block as %s, which readme_test.go does not define", page, name)
				continue
			}
			if got != want {
				t.Errorf("%s's block %s differs from its body in readme_test.go; copy the body (dedented) into the page.\npage:\n%s\nreadme_test.go:\n%s", page, name, got, want)
			}
		}
		if page != "README.md" {
			continue
		}
		mains := len(mainMarker.FindAllString(text, -1))
		if mains != 1 {
			t.Errorf("README.md has %d <!-- main.go --> blocks, want 1 (the first program)", mains)
		}
		if all := len(goBlock.FindAllString(text, -1)); all != len(blocks)+mains {
			t.Errorf("README.md has %d ```go blocks but only %d are compiled: mark each with <!-- compiled: NAME --> and its function in readme_test.go", all, len(blocks)+mains)
		}
	}
}

// funcBodies returns the dedented bodies of the file's functions by name.
func funcBodies(t *testing.T, file string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		body := string(src[fset.Position(fd.Body.Lbrace).Offset+1 : fset.Position(fd.Body.Rbrace).Offset])
		var b strings.Builder
		for _, line := range strings.Split(strings.Trim(body, "\n"), "\n") {
			b.WriteString(strings.TrimPrefix(line, "\t"))
			b.WriteByte('\n')
		}
		out[fd.Name.Name] = b.String()
	}
	return out
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
