// Command mvschema moves whole files of declarations from one package of
// this module into another and rewrites every reference to what moved, in
// every package of the given modules, from the type checker's answers
// rather than by text: an identifier is rewritten only when go/types says it
// names a moved object. It exists for the cut of the root package `acp`
// into the client (`acp`) and the protocol (`acp/schema`), and is kept so
// that a branch written against the old shape can be rewritten the same
// way (run it again with the same file list; files already moved are
// skipped).
//
// Usage:
//
//	go run ./mvschema -root ../.. -from github.com/acpclient/acp -to schema \
//	    -files content.go,protocol.go,... [-tests protocol_test.go,...] \
//	    [-rename decodeUpdate=DecodeUpdate,...] [-modules .,otelacp,bench] [-n]
//
// What it does, in order:
//  1. loads every package (tests included) of each module with go/packages;
//  2. takes as moved every package-level object declared in -files of the
//     -from package, and checks the wall: a moved file that refers to an
//     object of -from that does not move is reported (an upward reference),
//     and so is an unexported moved object used from a file that stays,
//     unless -rename exports it; with any report it stops and changes
//     nothing (-force writes anyway, for looking at the result);
//  3. rewrites each use of a moved object outside the moved files:
//     `acp.X` becomes `schema.X`, and in -from's own files an unqualified
//     `X` becomes `schema.X`; a local variable named like the new package
//     that would shadow it is renamed; imports are added and removed;
//  4. writes the moved files into the package directory under their new
//     package clause and removes them from -from;
//  5. rewrites doc links ([X] → [schema.X], [acp.X] → [schema.X]) in Go
//     comments and `acp.X` → `schema.X` in Markdown files.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/packages"
)

var (
	rootDir  = flag.String("root", ".", "the module root of -from")
	fromPath = flag.String("from", "github.com/acpclient/acp", "import path of the package declarations move out of")
	toDir    = flag.String("to", "schema", "directory (relative to -root) of the package they move into; its base name is the package name")
	files    = flag.String("files", "", "comma-separated files of -from (relative to -root) that move whole")
	tests    = flag.String("tests", "", "comma-separated test files of -from that move with them")
	renames  = flag.String("rename", "", "comma-separated old=New renames applied to moved objects")
	modules  = flag.String("modules", ".", "comma-separated module directories (relative to -root) whose packages are rewritten")
	dryRun   = flag.Bool("n", false, "report only; write nothing")
	force    = flag.Bool("force", false, "write even when the wall check reports problems")
)

type objKey struct{ name string }

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mvschema:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run() error {
	root, err := filepath.Abs(*rootDir)
	if err != nil {
		return err
	}
	toName := filepath.Base(*toDir)
	toPath := *fromPath + "/" + filepath.ToSlash(*toDir)
	moving := map[string]bool{} // absolute file names
	for _, f := range append(split(*files), split(*tests)...) {
		abs := filepath.Join(root, f)
		if _, err := os.Stat(abs); err != nil {
			if _, err2 := os.Stat(filepath.Join(root, *toDir, filepath.Base(f))); err2 == nil {
				continue // already moved
			}
			return err
		}
		moving[abs] = true
	}
	rename := map[string]string{}
	for _, r := range split(*renames) {
		old, nw, ok := strings.Cut(r, "=")
		if !ok {
			return fmt.Errorf("bad -rename %q", r)
		}
		rename[old] = nw
	}

	var pkgs []*packages.Package
	for _, m := range split(*modules) {
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
				packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
			Dir:   filepath.Join(root, m),
			Tests: true,
		}
		ps, err := packages.Load(cfg, "./...")
		if err != nil {
			return err
		}
		var bad bool
		packages.Visit(ps, nil, func(p *packages.Package) {
			for _, e := range p.Errors {
				fmt.Fprintln(os.Stderr, e)
				bad = true
			}
		})
		if bad {
			return fmt.Errorf("module %s does not type-check", m)
		}
		pkgs = append(pkgs, ps...)
	}
	// Test variants first: they hold every file of the package, so each
	// file is handled once, with the type information of its widest build.
	sort.SliceStable(pkgs, func(i, j int) bool {
		return strings.Contains(pkgs[i].ID, "[") && !strings.Contains(pkgs[j].ID, "[")
	})

	// 1. The moved objects: package-level declarations of the moved files.
	moved := map[objKey]bool{}
	var fromPkgs []*packages.Package
	for _, p := range pkgs {
		if p.PkgPath != *fromPath {
			continue
		}
		fromPkgs = append(fromPkgs, p)
		for _, f := range p.Syntax {
			if !moving[p.Fset.File(f.FileStart).Name()] {
				continue
			}
			for id, obj := range p.TypesInfo.Defs {
				if obj == nil || !inFile(p.Fset, id.Pos(), f) {
					continue
				}
				if obj.Parent() == p.Types.Scope() {
					moved[objKey{obj.Name()}] = true
				}
			}
		}
	}
	if len(fromPkgs) == 0 {
		return fmt.Errorf("package %s not found", *fromPath)
	}
	isMoved := func(obj types.Object) bool {
		if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != *fromPath {
			return false
		}
		if obj.Parent() != obj.Pkg().Scope() {
			return false
		}
		return moved[objKey{obj.Name()}]
	}

	// 2. The wall.
	var problems []string
	seenProblem := map[string]bool{}
	report := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if !seenProblem[s] {
			seenProblem[s] = true
			problems = append(problems, s)
		}
	}
	for _, p := range fromPkgs {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.FileStart).Name()
			for id, obj := range p.TypesInfo.Uses {
				if !inFile(p.Fset, id.Pos(), f) || obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != *fromPath {
					continue
				}
				if moving[name] {
					if obj.Parent() == obj.Pkg().Scope() && !isMoved(obj) {
						report("upward: %s uses %s (%s)", rel(root, p.Fset.Position(id.Pos())), obj.Name(), rel(root, p.Fset.Position(obj.Pos())))
					}
					continue
				}
				if isMoved(obj) && !obj.Exported() && rename[obj.Name()] == "" {
					report("unexported: %s uses %s (%s)", rel(root, p.Fset.Position(id.Pos())), obj.Name(), rel(root, p.Fset.Position(obj.Pos())))
				}
			}
			// Methods declared in a moved file on a type that stays, or
			// in a staying file on a type that moves.
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil {
					continue
				}
				tn := recvTypeName(fd)
				if tn == "" {
					continue
				}
				if moving[name] != moved[objKey{tn}] {
					report("method: %s (%s.%s) is declared apart from its type", rel(root, p.Fset.Position(fd.Pos())), tn, fd.Name.Name)
				}
			}
		}
	}
	sort.Strings(problems)
	for _, s := range problems {
		fmt.Println(s)
	}
	names := make([]string, 0, len(moved))
	for k := range moved {
		names = append(names, k.name)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "mvschema: %d objects move, %d problems\n", len(moved), len(problems))
	if *dryRun || (len(problems) > 0 && !*force) {
		if len(problems) > 0 && !*dryRun {
			return fmt.Errorf("%d problems; nothing written", len(problems))
		}
		return nil
	}

	// 3. Rewrite the files that stay.
	done := map[string]bool{}
	out := map[string][]byte{} // file → new content
	var remove []string
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.FileStart).Name()
			if done[name] || !strings.HasSuffix(name, ".go") {
				continue
			}
			done[name] = true
			if moving[name] && p.PkgPath == *fromPath {
				b, err := moveFile(p, f, toName, rename, isMoved)
				if err != nil {
					return fmt.Errorf("%s: %v", name, err)
				}
				out[filepath.Join(root, *toDir, filepath.Base(name))] = b
				remove = append(remove, name)
				continue
			}
			b, changed, err := rewriteFile(p, f, toName, toPath, rename, isMoved, moved)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if changed {
				out[name] = b
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, *toDir), 0o755); err != nil {
		return err
	}
	for name, b := range out {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return err
		}
	}
	for _, name := range remove {
		if err := os.Remove(name); err != nil {
			return err
		}
	}
	// 5. Markdown.
	if err := rewriteMarkdown(root, names, rename, toName); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mvschema: %d files written, %d moved\n", len(out), len(remove))
	return nil
}

func inFile(fset *token.FileSet, pos token.Pos, f *ast.File) bool {
	return pos >= f.FileStart && pos < f.FileEnd
}

func rel(root string, pos token.Position) string {
	r, err := filepath.Rel(root, pos.Filename)
	if err != nil {
		r = pos.Filename
	}
	return fmt.Sprintf("%s:%d", r, pos.Line)
}

func recvTypeName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// moveFile gives a moved file its new package clause and applies renames
// to the moved objects it names. Doc links to what stays behind are
// written with the full import path, since the new package cannot import
// the old one.
func moveFile(p *packages.Package, f *ast.File, toName string, rename map[string]string, isMoved func(types.Object) bool) ([]byte, error) {
	if strings.HasSuffix(f.Name.Name, "_test") {
		f.Name.Name = toName + "_test"
	} else {
		f.Name.Name = toName
	}
	for id, obj := range p.TypesInfo.Defs {
		if inFile(p.Fset, id.Pos(), f) && isMoved(obj) && rename[obj.Name()] != "" {
			id.Name = rename[obj.Name()]
		}
	}
	for id, obj := range p.TypesInfo.Uses {
		if inFile(p.Fset, id.Pos(), f) && isMoved(obj) && rename[obj.Name()] != "" {
			id.Name = rename[obj.Name()]
		}
	}
	return render(p.Fset, f)
}

// rewriteFile qualifies every use of a moved object in a file that stays.
func rewriteFile(p *packages.Package, f *ast.File, toName, toPath string, rename map[string]string, isMoved func(types.Object) bool, moved map[objKey]bool) ([]byte, bool, error) {
	info := p.TypesInfo
	changed := false
	// Selector expressions acp.X.
	qualified := map[*ast.Ident]bool{}
	var fromLocal string // the name the file gives the -from import
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		pn, ok := info.Uses[x].(*types.PkgName)
		if !ok || pn.Imported().Path() != *fromPath {
			return true
		}
		if obj := info.Uses[sel.Sel]; isMoved(obj) {
			fromLocal = x.Name
			qualified[sel.Sel] = true
			x.Name = toName
			if nw := rename[sel.Sel.Name]; nw != "" {
				sel.Sel.Name = nw
			}
			changed = true
		}
		return true
	})
	// Unqualified uses, in the -from package's own files.
	inFrom := p.PkgPath == *fromPath
	shadowed := map[types.Object]bool{}
	if inFrom {
		for id, obj := range info.Uses {
			if !inFile(p.Fset, id.Pos(), f) || qualified[id] || !isMoved(obj) {
				continue
			}
			// A local named like the new package would shadow it here.
			if sc := innermost(info, f, id.Pos()); sc != nil {
				if _, o := sc.LookupParent(toName, id.Pos()); o != nil {
					if _, isPkg := o.(*types.PkgName); !isPkg && o.Parent() != o.Pkg().Scope() {
						shadowed[o] = true
					} else if !isPkg {
						return nil, false, fmt.Errorf("package-level %s shadows the new package at %s", toName, p.Fset.Position(id.Pos()))
					}
				}
			}
			name := id.Name
			if nw := rename[name]; nw != "" {
				name = nw
			}
			id.Name = toName + "." + name
			changed = true
		}
		// Embedded fields: a struct embedding a moved type keeps its
		// field name, which the printer derives from the type.
	}
	if len(shadowed) > 0 {
		for id, obj := range info.Defs {
			if shadowed[obj] && inFile(p.Fset, id.Pos(), f) {
				id.Name = "sch"
			}
		}
		for id, obj := range info.Uses {
			if shadowed[obj] && inFile(p.Fset, id.Pos(), f) {
				id.Name = "sch"
			}
		}
	}
	// Doc links in comments.
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			nt := rewriteDocLinks(c.Text, moved, rename, toName, inFrom, fromLocal)
			if nt != c.Text {
				c.Text = nt
				changed = true
			}
		}
	}
	if !changed {
		return nil, false, nil
	}
	if !inFrom || len(qualified) > 0 || true {
		astutil.AddImport(p.Fset, f, toPath)
	}
	// Drop the -from import if nothing uses it any more.
	if !inFrom {
		used := false
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				if pn, ok := info.Uses[x].(*types.PkgName); ok && pn.Imported().Path() == *fromPath && x.Name != toName {
					used = true
				}
			}
			return true
		})
		if !used {
			named, found := "", false
			for _, imp := range f.Imports {
				if imp == nil || imp.Path == nil || strings.Trim(imp.Path.Value, `"`) != *fromPath {
					continue
				}
				if imp.Name != nil {
					named = imp.Name.Name
				}
				found = true
			}
			switch {
			case !found || named == "_":
			case named != "":
				astutil.DeleteNamedImport(p.Fset, f, named, *fromPath)
			default:
				astutil.DeleteImport(p.Fset, f, *fromPath)
			}
		}
	}
	if !usesName(f, toName) {
		astutil.DeleteImport(p.Fset, f, toPath)
	}
	b, err := render(p.Fset, f)
	return b, true, err
}

func usesName(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == name {
				found = true
			}
		case *ast.Ident:
			if strings.HasPrefix(x.Name, name+".") {
				found = true
			}
		}
		return !found
	})
	return found
}

func innermost(info *types.Info, f *ast.File, pos token.Pos) *types.Scope {
	fs := info.Scopes[f]
	if fs == nil {
		return nil
	}
	return fs.Innermost(pos)
}

var docLink = regexp.MustCompile(`\[(\*?)([A-Za-z_][A-Za-z0-9_]*\.)?([A-Z][A-Za-z0-9_]*)(\.[A-Za-z0-9_]+)?\]`)

func rewriteDocLinks(text string, moved map[objKey]bool, rename map[string]string, toName string, inFrom bool, fromLocal string) string {
	if fromLocal == "" {
		fromLocal = "acp"
	}
	return docLink.ReplaceAllStringFunc(text, func(m string) string {
		sm := docLink.FindStringSubmatch(m)
		star, qual, name, rest := sm[1], sm[2], sm[3], sm[4]
		if !moved[objKey{name}] {
			return m
		}
		if nw := rename[name]; nw != "" {
			name = nw
		}
		switch {
		case qual == "" && inFrom:
			return "[" + star + toName + "." + name + rest + "]"
		case qual == fromLocal+".":
			return "[" + star + toName + "." + name + rest + "]"
		}
		return m
	})
}

func render(fset *token.FileSet, f *ast.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, err
	}
	b, err := format.Source(buf.Bytes())
	if err != nil {
		return buf.Bytes(), nil
	}
	return b, nil
}

// rewriteMarkdown rewrites acp.X to schema.X in the module's Markdown
// files, for the exported moved names.
func rewriteMarkdown(root string, names []string, rename map[string]string, toName string) error {
	set := map[string]bool{}
	for _, n := range names {
		if ast.IsExported(n) {
			set[n] = true
		}
	}
	re := regexp.MustCompile(`\bacp\.([A-Z][A-Za-z0-9_]*)\b`)
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nb := re.ReplaceAllFunc(b, func(m []byte) []byte {
			name := string(m[4:])
			if !set[name] {
				return m
			}
			if nw := rename[name]; nw != "" {
				name = nw
			}
			return []byte(toName + "." + name)
		})
		if !bytes.Equal(nb, b) {
			return os.WriteFile(path, nb, 0o644)
		}
		return nil
	})
}
