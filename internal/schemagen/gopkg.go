package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// goPkg is what the generator needs to know of a package with generated
// decoders: its type declarations, read from source so that the
// hand-written types (and their doc comments) stay the single place where
// the Go shapes are defined.
type goPkg struct {
	name  string // the package name
	types map[string]*goDecl
	// wrappers maps an interface type to the decoding wrapper the package
	// declares for it: a struct with one field v of that type whose
	// UnmarshalJSON picks the variant (e.g. authMethodField for AuthMethod).
	wrappers map[string]string
}

type goDecl struct {
	name, file string
	expr       ast.Expr
}

type goField struct {
	name, json string
	expr       ast.Expr
}

// loadPackage parses the non-test Go files of package name in dir, except
// skipFile (the generator's own output, so a stale or broken output cannot
// feed back).
func loadPackage(dir, name, skipFile string) (*goPkg, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	p := &goPkg{name: name, types: map[string]*goDecl{}, wrappers: map[string]string{}}
	fset := token.NewFileSet()
	for _, path := range names {
		base := filepath.Base(path)
		if strings.HasSuffix(base, "_test.go") || base == skipFile {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != name {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if _, dup := p.types[ts.Name.Name]; dup || ts.TypeParams != nil {
					continue
				}
				p.types[ts.Name.Name] = &goDecl{name: ts.Name.Name, file: base, expr: ts.Type}
			}
		}
	}
	for typ, d := range p.types {
		st, ok := d.expr.(*ast.StructType)
		if !ok || len(st.Fields.List) != 1 || len(st.Fields.List[0].Names) != 1 || st.Fields.List[0].Names[0].Name != "v" {
			continue
		}
		if id, ok := st.Fields.List[0].Type.(*ast.Ident); ok {
			if t := p.types[id.Name]; t != nil {
				if _, ok := t.expr.(*ast.InterfaceType); ok {
					p.wrappers[id.Name] = typ
				}
			}
		}
	}
	return p, nil
}

// fields returns the JSON fields of a struct type, in declaration order.
func (p *goPkg) fields(name string) ([]goField, error) {
	d := p.types[name]
	if d == nil {
		return nil, fmt.Errorf("type %s not found", name)
	}
	st, ok := d.expr.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", name)
	}
	var out []goField
	for _, f := range st.Fields.List {
		if len(f.Names) != 1 {
			return nil, fmt.Errorf("%s: embedded or multi-name fields are not supported", name)
		}
		fn := f.Names[0].Name
		if f.Tag == nil {
			return nil, fmt.Errorf("%s.%s has no json tag", name, fn)
		}
		tag, _ := strconv.Unquote(f.Tag.Value)
		key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if key == "-" || reflect.StructTag(tag).Get("schema") == "v2" {
			// Not from this schema: the type decodes it by hand (v2's
			// diff fields on DiffContent), or only a v2 agent's decoder
			// fills it (schema:"v2": a tool call's cancel capability);
			// the generated decoder zeroes it.
			continue
		}
		if key == "" {
			return nil, fmt.Errorf("%s.%s: json tag %q names no key", name, fn, tag)
		}
		out = append(out, goField{name: fn, json: key, expr: f.Type})
	}
	return out, nil
}

type goKind int

const (
	kString goKind = iota
	kBool
	kInt
	kUint
	kFloat
	kStruct
	kIface
	kSlice
	kMap
	kRaw
	// kField is Field[T], the three-state field of patch types: absent,
	// null or a value.
	kField
)

// goType is a field's Go type, classified for decoding.
type goType struct {
	kind  goKind
	ptr   bool
	text  string  // the type without a leading *, as written
	named string  // a named string type ("" for plain string)
	elem  *goType // of a slice, or the T of a Field[T]
}

func (p *goPkg) classify(e ast.Expr) (*goType, error) {
	switch e := e.(type) {
	case *ast.StarExpr:
		t, err := p.classify(e.X)
		if err != nil {
			return nil, err
		}
		if t.ptr || t.kind == kSlice || t.kind == kMap || t.kind == kIface || t.kind == kRaw || t.kind == kField {
			return nil, fmt.Errorf("unsupported pointer type *%s", t.text)
		}
		t.ptr = true
		return t, nil
	case *ast.ArrayType:
		if e.Len != nil {
			return nil, fmt.Errorf("arrays are not supported")
		}
		el, err := p.classify(e.Elt)
		if err != nil {
			return nil, err
		}
		if el.ptr || el.kind == kSlice {
			return nil, fmt.Errorf("unsupported element type %s", exprString(e.Elt))
		}
		return &goType{kind: kSlice, text: exprString(e), elem: el}, nil
	case *ast.MapType:
		return &goType{kind: kMap, text: exprString(e)}, nil
	case *ast.IndexExpr:
		if id, ok := e.X.(*ast.Ident); ok && id.Name == "Field" {
			el, err := p.classify(e.Index)
			if err != nil {
				return nil, err
			}
			if el.ptr || el.kind == kSlice || el.kind == kField {
				return nil, fmt.Errorf("unsupported Field type %s", exprString(e))
			}
			return &goType{kind: kField, text: exprString(e), elem: el}, nil
		}
	case *ast.SelectorExpr:
		if exprString(e) == "json.RawMessage" {
			return &goType{kind: kRaw, text: "json.RawMessage"}, nil
		}
	case *ast.Ident:
		switch e.Name {
		case "string":
			return &goType{kind: kString, text: "string"}, nil
		case "bool":
			return &goType{kind: kBool, text: "bool"}, nil
		case "int", "int64", "int32":
			return &goType{kind: kInt, text: e.Name}, nil
		case "uint64", "uint32", "uint16":
			return &goType{kind: kUint, text: e.Name}, nil
		case "float64":
			return &goType{kind: kFloat, text: e.Name}, nil
		}
		d := p.types[e.Name]
		if d == nil {
			break
		}
		switch u := d.expr.(type) {
		case *ast.Ident:
			if u.Name == "string" {
				return &goType{kind: kString, text: e.Name, named: e.Name}, nil
			}
		case *ast.StructType:
			return &goType{kind: kStruct, text: e.Name}, nil
		case *ast.InterfaceType:
			return &goType{kind: kIface, text: e.Name}, nil
		}
	}
	return nil, fmt.Errorf("unsupported Go type %s", exprString(e))
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.ArrayType:
		return "[]" + exprString(e.Elt)
	case *ast.MapType:
		return "map[" + exprString(e.Key) + "]" + exprString(e.Value)
	case *ast.IndexExpr:
		return exprString(e.X) + "[" + exprString(e.Index) + "]"
	}
	return fmt.Sprintf("%T", e)
}

// fieldNamed returns the field of struct type typ whose name is key in any
// case ("ID" for "id"), or "" when it has none.
func (p *goPkg) fieldNamed(typ, key string) string {
	d := p.types[typ]
	if d == nil {
		return ""
	}
	st, ok := d.expr.(*ast.StructType)
	if !ok {
		return ""
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if strings.EqualFold(n.Name, key) {
				return n.Name
			}
		}
	}
	return ""
}
