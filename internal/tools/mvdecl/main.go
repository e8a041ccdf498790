// Command mvdecl moves top-level declarations, with their doc comments,
// from one Go file to another file of the same package, and fixes both
// files' imports. It is how the wire types were gathered out of the root
// package's feature files before the package was cut in two (see
// mvschema): a move inside one package changes no reference.
//
// Usage:
//
//	go run ./mvdecl -to protocol_models.go models.go:SessionModelState models.go:Session.setModel …
//
// A name selects the declaration that declares it (a whole const or var
// group, or a type, or a function); Type.Method selects a method. A new
// -to file is created with the source file's package clause.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"

	"golang.org/x/tools/imports"
)

func main() {
	to := flag.String("to", "", "destination file")
	flag.Parse()
	if err := run(*to, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mvdecl:", err)
		os.Exit(1)
	}
}

type span struct{ start, end int }

func run(to string, args []string) error {
	bySrc := map[string][]string{}
	var order []string
	for _, a := range args {
		f, name, ok := strings.Cut(a, ":")
		if !ok {
			return fmt.Errorf("want file:Name, got %q", a)
		}
		if _, seen := bySrc[f]; !seen {
			order = append(order, f)
		}
		bySrc[f] = append(bySrc[f], name)
	}
	var moved bytes.Buffer
	pkgName := ""
	for _, src := range order {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, src, b, parser.ParseComments)
		if err != nil {
			return err
		}
		pkgName = f.Name.Name
		var spans []span
		for _, name := range bySrc[src] {
			d := find(f, name)
			if d == nil {
				return fmt.Errorf("%s: no declaration of %s", src, name)
			}
			start := d.Pos()
			switch x := d.(type) {
			case *ast.GenDecl:
				if x.Doc != nil {
					start = x.Doc.Pos()
				}
			case *ast.FuncDecl:
				if x.Doc != nil {
					start = x.Doc.Pos()
				}
			}
			sp := span{fset.Position(start).Offset, fset.Position(d.End()).Offset}
			// Take the rest of the last line (a trailing comment) too.
			for sp.end < len(b) && b[sp.end] != '\n' {
				sp.end++
			}
			dup := false
			for _, s := range spans {
				if s == sp {
					dup = true
				}
			}
			if !dup {
				spans = append(spans, sp)
			}
		}
		sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
		var rest bytes.Buffer
		last := 0
		for _, s := range spans {
			rest.Write(b[last:s.start])
			moved.WriteString("\n")
			moved.Write(b[s.start:s.end])
			moved.WriteString("\n")
			last = s.end
		}
		rest.Write(b[last:])
		out, err := imports.Process(src, rest.Bytes(), nil)
		if err != nil {
			return fmt.Errorf("%s after the cut: %v", src, err)
		}
		if err := os.WriteFile(src, out, 0o644); err != nil {
			return err
		}
	}
	dst, err := os.ReadFile(to)
	if os.IsNotExist(err) {
		dst = []byte("package " + pkgName + "\n")
	} else if err != nil {
		return err
	}
	dst = append(dst, moved.Bytes()...)
	out, err := imports.Process(to, dst, nil)
	if err != nil {
		return fmt.Errorf("%s: %v", to, err)
	}
	return os.WriteFile(to, out, 0o644)
}

func find(f *ast.File, name string) ast.Decl {
	recv, meth, isMethod := strings.Cut(name, ".")
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if isMethod {
				if x.Recv != nil && x.Name.Name == meth && recvName(x) == recv {
					return x
				}
			} else if x.Recv == nil && x.Name.Name == name {
				return x
			}
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, s := range x.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return x
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return x
						}
					}
				}
			}
		}
	}
	return nil
}

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
