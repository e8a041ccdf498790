// Command figures prints the shape of a package, the figures the cut of
// the root package was planned and judged by: non-test files, lines (and
// generated lines), exported identifiers (types, fields, methods, funcs,
// consts, vars) and top-level ones, and for the biggest types their
// fields (exported), methods (exported) and the files the methods live in;
// for the client package, the climbs back of one update's path (see
// climbs.go; -v lists them).
//
//	go run ./figures [-v] ../.. ../../schema ../../nes
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list each climb back")
	flag.Parse()
	for _, dir := range flag.Args() {
		if err := figures(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := climbs(dir, *verbose); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

type typeFig struct {
	fields, all, methods, exported int // exported fields, all fields
	files                          map[string]bool
}

func figures(dir string) error {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	var files, lines, genLines, exported, top int
	types := map[string]*typeFig{}
	ty := func(n string) *typeFig {
		if types[n] == nil {
			types[n] = &typeFig{files: map[string]bool{}}
		}
		return types[n]
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		n := bytes.Count(src, []byte("\n"))
		lines += n
		if ast.IsGenerated(f) {
			genLines += n
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					tn := recv(d)
					t := ty(tn)
					t.methods++
					t.files[filepath.Base(name)] = true
					if d.Name.IsExported() {
						t.exported++
						if ast.IsExported(tn) {
							exported++
						}
					}
				} else if d.Name.IsExported() {
					exported++
					top++
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								ty(s.Name.Name).all += max(len(fl.Names), 1)
							}
						}
						exported++
						top++
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, fn := range fl.Names {
									if fn.IsExported() {
										exported++
										ty(s.Name.Name).fields++
									}
								}
								if len(fl.Names) == 0 {
									exported++ // an embedded field
									ty(s.Name.Name).fields++
								}
							}
						}
					case *ast.ValueSpec:
						for _, vn := range s.Names {
							if vn.IsExported() {
								exported++
								top++
							}
						}
					}
				}
			}
		}
	}
	fmt.Printf("%s: %d non-test files, %d lines (%d generated), %d exported identifiers, %d top-level\n", dir, files, lines, genLines, exported, top)
	var tn []string
	for n := range types {
		if ast.IsExported(n) {
			tn = append(tn, n)
		}
	}
	sort.Slice(tn, func(i, j int) bool { return types[tn[i]].methods > types[tn[j]].methods })
	for i, n := range tn {
		if i == 5 {
			break
		}
		t := types[n]
		fmt.Printf("  %s: %d fields (%d exported), %d methods (%d exported), in %d files\n", n, t.all, t.fields, t.methods, t.exported, len(t.files))
	}
	return nil
}

func recv(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
