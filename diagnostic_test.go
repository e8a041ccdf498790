package acp_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

// A permission answer that names no offered option is answered -32603 to
// the agent and reported to the integrator as a diagnostic, since the bug is
// theirs and the agent's error reply is not something they see.
func TestInvalidPermissionAnswerIsDiagnosed(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  schema.PermissionOutcome
		want string
	}{
		{"unoffered option", acp.SelectedOutcome("made-up"), `"made-up", which is not an offered option`},
		{"unknown outcome", schema.PermissionOutcome{Kind: "maybe"}, `outcome "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := make(chan acp.Diagnostic, 10)
			agentErr := make(chan error, 1)
			c, _ := acptest.Connect(t, &acptest.Options{
				OnPrompt: func(t *acptest.Turn) (schema.StopReason, error) {
					_, err := t.RequestPermission(acptest.ToolCallSpec{ID: "tc1", Title: "Edit"}, nil)
					agentErr <- err
					t.Junk("") // a blank_line diagnostic after the answer: a barrier
					return schema.StopReasonEndTurn, nil
				},
			}, &acp.ClientOptions{
				Permission: func(context.Context, *acp.PermissionRequest) (schema.PermissionOutcome, error) {
					return tc.out, nil
				},
				OnDiagnostic: func(d acp.Diagnostic) { diags <- d },
			})
			s, err := c.NewSession(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Prompt(context.Background(), schema.Text("go"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := turn.Wait(); err != nil {
				t.Fatal(err)
			}
			var e *acptest.Error
			if err := <-agentErr; !errors.As(err, &e) || e.Code != acptest.CodeInternalError {
				t.Errorf("the agent got %v, want a -32603 error", err)
			}
			// Diagnostics arrive in order, and the blank line was written
			// after the agent had the error reply.
			var got []acp.Diagnostic
			for d := range diags {
				if d.Kind == acp.DiagBlankLine {
					break
				}
				got = append(got, d)
			}
			if len(got) != 1 || got[0].Kind != acp.DiagInvalidPermissionAnswer || !strings.Contains(got[0].Message, tc.want) {
				t.Errorf("diagnostics before the barrier = %+v, want one of kind %q mentioning %s", got, acp.DiagInvalidPermissionAnswer, tc.want)
			}
		})
	}
}

// Every kind the package passes to diag has a documented DiagnosticKind
// constant, so that a consumer can switch over them.
func TestEveryDiagnosticKindHasAConstant(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "diagnostic.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Doc == nil {
				t.Errorf("%s has no doc comment", vs.Names[0])
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					consts[s] = true
				}
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	engineFiles, _ := filepath.Glob(filepath.Join("internal", "engine", "*.go")) // the wire reports its own kinds
	files = append(files, engineFiles...)
	used := regexp.MustCompile(`diag\("([a-z_]+)"`)
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range used.FindAllStringSubmatch(string(src), -1) {
			n++
			if !consts[m[1]] {
				t.Errorf("%s reports kind %q, which has no DiagnosticKind constant", name, m[1])
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d diag calls; the pattern no longer matches the code", n)
	}
}
