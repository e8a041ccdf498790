// Package apilist writes the exported API of a Go package as sorted lines,
// one per exported identifier, in the spirit of the Go project's api/*.txt
// files, so that every change to the API this module promises shows up as a
// diff of a checked-in file that a reviewer reads (see api_test.go).
//
// Unstable lists, in the same format, only the identifiers whose doc says
// "Unstable:" (the module's mark for what follows schema.unstable.json or
// no schema, and may change in any release), so that promoting a feature to
// stable, or adding an unstable one, is a diff of api/unstable.txt.
//
// The listing is made from syntax alone (go/ast), not from type-checking:
// types are printed as written in the source, parameter names dropped. That
// keeps it fast and free of dependencies, at the cost of not expanding
// promoted fields and methods of embedded types (the embedding itself is
// listed, so a change to it still shows).
package apilist

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Package lists the exported API of the Go package in dir, every line
// prefixed with "pkg name, ". Test files and files of every build
// constraint are read (an identifier declared for one platform only is
// still API); identical lines are listed once.
func Package(dir, name string) ([]string, error) {
	return list(dir, name, func(...*ast.CommentGroup) bool { return true })
}

// UnstableMarker is the text an identifier's doc holds when it may change
// in any release.
const UnstableMarker = "Unstable:"

// Unstable lists, as Package does, the exported identifiers of the package
// in dir whose own doc holds UnstableMarker: a declaration's doc (a
// grouped declaration's group doc included), a struct field's or interface
// method's doc or line comment. A field or method of an unstable type is
// not listed unless its own doc says so: the type's line stands for it.
func Unstable(dir, name string) ([]string, error) {
	return list(dir, name, func(docs ...*ast.CommentGroup) bool {
		for _, d := range docs {
			if d != nil && strings.Contains(d.Text(), UnstableMarker) {
				return true
			}
		}
		return false
	})
}

// keepFunc says, from an identifier's doc comments, whether it is listed.
type keepFunc func(docs ...*ast.CommentGroup) bool

func list(dir, name string, keep keepFunc) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f.Name.Name, "_test") || f.Name.Name == "main" {
			continue
		}
		for _, l := range fileAPI(f, keep) {
			seen["pkg "+name+", "+l] = true
		}
	}
	lines := make([]string, 0, len(seen))
	for l := range seen {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return lines, nil
}

func fileAPI(f *ast.File, keep keepFunc) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || !keep(d.Doc) {
				continue
			}
			if d.Recv == nil {
				out = append(out, "func "+d.Name.Name+typeParams(d.Type.TypeParams)+signature(d.Type))
				continue
			}
			recv, base := receiver(d.Recv.List[0].Type)
			if !ast.IsExported(base) {
				continue
			}
			out = append(out, fmt.Sprintf("method (%s) %s%s", recv, d.Name.Name, signature(d.Type)))
		case *ast.GenDecl:
			out = append(out, genDecl(d, keep)...)
		}
	}
	return out
}

func genDecl(d *ast.GenDecl, keep keepFunc) []string {
	var out []string
	var constType ast.Expr // a const spec without type or values repeats the previous one's
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ValueSpec:
			kw, typ := "var", s.Type
			if d.Tok == token.CONST {
				kw = "const"
				if typ == nil && len(s.Values) == 0 {
					typ = constType
				}
				constType = typ
			}
			for _, n := range s.Names {
				if !n.IsExported() || !keep(d.Doc, s.Doc, s.Comment) {
					continue
				}
				l := kw + " " + n.Name
				if typ != nil {
					l += " " + expr(typ)
				}
				out = append(out, l)
			}
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			typeKept := keep(d.Doc, s.Doc, s.Comment)
			head := "type " + s.Name.Name + typeParams(s.TypeParams)
			if s.Assign.IsValid() {
				if typeKept {
					out = append(out, head+" = "+expr(s.Type))
				}
				continue
			}
			switch t := s.Type.(type) {
			case *ast.StructType:
				if typeKept {
					out = append(out, head+" struct")
				}
				for _, fl := range t.Fields.List {
					if !keep(fl.Doc, fl.Comment) {
						continue
					}
					if len(fl.Names) == 0 {
						out = append(out, head+" struct, embedded "+expr(fl.Type))
						continue
					}
					for _, n := range fl.Names {
						if n.IsExported() {
							out = append(out, head+" struct, "+n.Name+" "+expr(fl.Type))
						}
					}
				}
			case *ast.InterfaceType:
				if typeKept {
					out = append(out, head+" interface")
				}
				for _, m := range t.Methods.List {
					if !keep(m.Doc, m.Comment) {
						continue
					}
					if len(m.Names) == 0 {
						out = append(out, head+" interface, embedded "+expr(m.Type))
						continue
					}
					for _, n := range m.Names {
						if n.IsExported() {
							out = append(out, head+" interface, "+n.Name+signature(m.Type.(*ast.FuncType)))
						}
					}
				}
			default:
				if typeKept {
					out = append(out, head+" "+expr(s.Type))
				}
			}
		}
	}
	return out
}

// receiver returns a method's receiver as written ("*T", "T[K]") and the
// name of its base type.
func receiver(x ast.Expr) (string, string) {
	s := expr(x)
	base := strings.TrimPrefix(s, "*")
	if i := strings.IndexByte(base, '['); i >= 0 {
		base = base[:i]
	}
	return s, base
}

func typeParams(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		names := make([]string, len(f.Names))
		for i, n := range f.Names {
			names[i] = n.Name
		}
		parts = append(parts, strings.Join(names, ", ")+" "+expr(f.Type))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature prints a function type's parameters and results, types only.
func signature(t *ast.FuncType) string {
	s := "(" + fieldTypes(t.Params) + ")"
	if t.Results == nil || len(t.Results.List) == 0 {
		return s
	}
	r := fieldTypes(t.Results)
	if len(t.Results.List) == 1 && len(t.Results.List[0].Names) <= 1 {
		return s + " " + r
	}
	return s + " (" + r + ")"
}

func fieldTypes(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			parts = append(parts, expr(f.Type))
		}
	}
	return strings.Join(parts, ", ")
}

// expr prints a type expression, with the names of the parameters of any
// function type in it dropped.
func expr(x ast.Expr) string {
	ast.Inspect(x, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			for _, fl := range []*ast.FieldList{ft.Params, ft.Results} {
				if fl == nil {
					continue
				}
				var flat []*ast.Field
				for _, f := range fl.List {
					for range max(len(f.Names), 1) {
						flat = append(flat, &ast.Field{Type: f.Type})
					}
				}
				fl.List = flat
			}
		}
		return true
	})
	return types.ExprString(x)
}
