package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/acpclient/acp/internal/apilist"
)

// unstableMarker starts the line that tells a reader of go doc that an
// identifier follows schema.unstable.json (or no schema) and may change;
// api/unstable.txt lists what carries it.
const unstableMarker = apilist.UnstableMarker

// pkgDocs maps the exported identifiers of the package of an output (types,
// funcs, consts, vars; "Type.Field" for struct fields; "Type.Method" for
// methods) to their doc text, a group's doc included for grouped
// declarations.
func pkgDocs(t *testing.T, pkg string) map[string]string {
	docs, _ := pkgDocsFiles(t, pkg)
	return docs
}

// pkgDocsFiles is pkgDocs and the file that declares each identifier.
func pkgDocsFiles(t *testing.T, pkg string) (docs, files map[string]string) {
	t.Helper()
	o, ok := outputOf(pkg)
	if !ok {
		t.Fatalf("no output for package %q", pkg)
	}
	fset := token.NewFileSet()
	// Every file of the package, whatever its build tags: both variants of
	// a tagged declaration carry the same doc.
	paths, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(o.Dir), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*ast.File{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed[path] = f
	}
	docs, files = map[string]string{}, map[string]string{}
	text := func(gs ...*ast.CommentGroup) string {
		var b strings.Builder
		for _, g := range gs {
			b.WriteString(g.Text())
		}
		return b.String()
	}
	for path, f := range parsed {
		file := filepath.Base(path)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if s, ok := recv.(*ast.StarExpr); ok {
						recv = s.X
					}
					if id, ok := recv.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				docs[name], files[name] = text(d.Doc), file
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						docs[s.Name.Name], files[s.Name.Name] = text(d.Doc, s.Doc), file
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, fl := range st.Fields.List {
							for _, n := range fl.Names {
								docs[s.Name.Name+"."+n.Name] = text(fl.Doc, fl.Comment)
								if fl.Tag != nil {
									tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
									if k, _, _ := strings.Cut(tag, ","); k != "" {
										docs[s.Name.Name+".json:"+k] = docs[s.Name.Name+"."+n.Name]
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							docs[n.Name], files[n.Name] = text(d.Doc, s.Doc, s.Comment), file
						}
					}
				}
			}
		}
	}
	return docs, files
}

// Every Go type decoded from a $defs entry that only schema.unstable.json
// has, and every field decoding a property only the unstable schema adds
// to a stable definition, says so in its doc: go doc then shows which part
// of the API may change with the schema.
func TestUnstableSchemaPartsMarked(t *testing.T) {
	s, err := loadSchemas(root + "/schema")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]map[string]string{}
	docsOf := func(out string) map[string]string {
		if out == "" {
			out = "schema"
		}
		if pkgs[out] == nil {
			pkgs[out] = pkgDocs(t, out)
		}
		return pkgs[out]
	}
	docs := docsOf("schema")
	unstableOnly := func(def string) bool {
		_, st := s.stable.Defs[def]
		_, un := s.unstable.Defs[def]
		return un && !st
	}
	var missing []string
	checkIn := func(out, name, why string) {
		doc, ok := docsOf(out)[name]
		if !ok {
			t.Errorf("%s (%s) has no declaration in package %s", name, why, out)
			return
		}
		if !strings.Contains(doc, unstableMarker) {
			missing = append(missing, name+" ("+why+")")
		}
	}
	check := func(name, why string) { checkIn("schema", name, why) }
	for _, g := range generated {
		all := true
		for _, d := range g.Defs {
			all = all && unstableOnly(d)
		}
		if all && g.Go != "Capability" {
			checkIn(g.Out, g.Go, "decodes "+strings.Join(g.Defs, ", "))
		}
		if all {
			continue
		}
		for _, d := range g.Defs {
			sd, ud := s.stable.Defs[d], s.unstable.Defs[d]
			if sd == nil || ud == nil {
				continue
			}
			for p := range ud.Properties {
				if _, ok := sd.Properties[p]; ok {
					continue
				}
				if _, ok := docs[g.Go+".json:"+p]; ok {
					name := g.Go + ".json:" + p
					if !strings.Contains(docs[name], unstableMarker) {
						missing = append(missing, name+" (unstable property of "+d+")")
					}
				}
			}
		}
	}
	for _, u := range unions {
		if unstableOnly(u.Def) {
			checkIn(u.Out, u.Go, "union "+u.Def)
		}
	}
	// Unstable defs decoded by hand-written types of the same name in
	// package nes, which drops the prefix (StartNesRequest is
	// nes.StartRequest).
	for def := range s.unstable.Defs {
		if name := strings.ReplaceAll(def, "Nes", ""); unstableOnly(def) {
			if _, ok := docsOf("nes")[name]; ok {
				checkIn("nes", name, "named like "+def)
			}
		}
	}
	// Unstable defs decoded by hand-written types of the same name
	// (NesCapabilities is NESCapabilities).
	ini := strings.NewReplacer("Mcp", "MCP", "Nes", "NES")
	seen := map[string]bool{}
	for _, g := range generated {
		seen[g.Go] = true
	}
	for _, u := range unions {
		seen[u.Go] = true
	}
	for def := range s.unstable.Defs {
		if name := ini.Replace(def); unstableOnly(def) && !seen[name] {
			if _, ok := docs[name]; ok {
				check(name, "named like "+def)
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s: doc comment lacks %q", m, unstableMarker)
	}
}

// unstableFiles hold only unstable features: every exported identifier
// they declare (methods of its types aside, which their type's doc covers)
// is marked, and so is every Client and Session method they declare.
var unstableFiles = []string{
	"client_unstable.go", "nes_capabilities.go", "fork.go", "mcp.go",
	"models.go", "session_manage.go", "auth_status.go",
}

// unstablePackages hold only unstable features: every exported top-level
// identifier they declare is marked, and so is every method of their
// Session (the feature itself). Fields and the methods of wire types
// (UnmarshalJSON, SuggestionID, ...) are covered by their type's doc.
var unstablePackages = []string{"nes"}

func TestUnstablePackagesMarked(t *testing.T) {
	for _, pkg := range unstablePackages {
		docs, _ := pkgDocsFiles(t, pkg)
		var missing []string
		for name, doc := range docs {
			recv, member, isMember := strings.Cut(name, ".")
			switch {
			case strings.Contains(doc, unstableMarker):
				continue
			case !isMember && token.IsExported(name):
			case isMember && recv == "Session" && token.IsExported(member):
			default:
				continue
			}
			missing = append(missing, pkg+"."+name)
		}
		sort.Strings(missing)
		for _, m := range missing {
			t.Errorf("%s: doc comment lacks %q", m, unstableMarker)
		}
	}
}

func TestUnstableFilesMarked(t *testing.T) {
	docs, files := pkgDocsFiles(t, "schema")
	var missing []string
	for name, file := range files {
		if !slices.Contains(unstableFiles, file) || strings.Contains(name, ".json:") {
			continue
		}
		recv, method, isMethod := strings.Cut(name, ".")
		if isMethod && recv != "Client" && recv != "Session" {
			continue
		}
		if !isMethod {
			method = name
		}
		if !token.IsExported(method) || strings.Contains(docs[name], unstableMarker) {
			continue
		}
		missing = append(missing, name+" ("+file+")")
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s: doc comment lacks %q", m, unstableMarker)
	}
}
