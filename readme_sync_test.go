package acp_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// compiledMarker precedes each README code block that is kept compiling:
// <!-- compiled: readmeExample --> names the function in readme_test.go
// whose body the block must be, dedented.
var compiledMarker = regexp.MustCompile("<!-- compiled: (\\w+) -->\n```go\n((?s:.*?))```\n")

// TestReadmeCodeIsCompiled keeps the README's code and the functions in
// readme_test.go, which the compiler checks against the current API, one
// text. Every marked block is checked, and the Example section must have one.
func TestReadmeCodeIsCompiled(t *testing.T) {
	bodies := funcBodies(t, "readme_test.go")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := compiledMarker.FindAllStringSubmatch(string(readme), -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		name, got := b[1], b[2]
		seen[name] = true
		want, ok := bodies[name]
		if !ok {
			t.Errorf("README.md marks a block as %s, which readme_test.go does not define", name)
			continue
		}
		if got != want {
			t.Errorf("README.md's block %s differs from its body in readme_test.go; copy the body (dedented) into the README.\nREADME:\n%s\nreadme_test.go:\n%s", name, got, want)
		}
	}
	if !seen["readmeExample"] {
		t.Error("README.md's Example section has no <!-- compiled: readmeExample --> block")
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
