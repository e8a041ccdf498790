package acp_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestReadmeExampleIsCompiled keeps the README's example and readmeExample
// (readme_test.go, which the compiler checks against the current API) one
// text: the README block must be the function's body, dedented.
func TestReadmeExampleIsCompiled(t *testing.T) {
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "readme_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var body string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "readmeExample" {
			start := fset.Position(fd.Body.Lbrace).Offset + 1
			end := fset.Position(fd.Body.Rbrace).Offset
			body = string(src[start:end])
		}
	}
	if body == "" {
		t.Fatal("readmeExample not found in readme_test.go")
	}
	var want strings.Builder
	for _, line := range strings.Split(strings.Trim(body, "\n"), "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t"))
		want.WriteByte('\n')
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("\n## Example\n"))
	if !ok {
		t.Fatal(`README.md has no "## Example" section`)
	}
	_, block, ok := bytes.Cut(after, []byte("```go\n"))
	if !ok {
		t.Fatal("the README's Example section has no ```go block")
	}
	block, _, ok = bytes.Cut(block, []byte("```\n"))
	if !ok {
		t.Fatal("the README's example block is not closed")
	}
	if got := string(block); got != want.String() {
		t.Errorf("README.md's example differs from readmeExample in readme_test.go; copy the function body (dedented) into the README.\nREADME:\n%s\nreadme_test.go:\n%s", got, want.String())
	}
}
