package main

// The climbs back of one update's path: how often the static call graph
// from the reader's hook to the state calls back up the ownership of the
// client, a lower layer calling into a higher one (a turn's method calling
// the session's or the client's, say).
//
// The method, so that it can be run on any commit and give the same
// answer:
//
//   - Layers come from ownership. Client is layer 0, Session 1, Turn 2.
//     Every other named type of the package takes the layer of the deepest
//     of the three that holds it through its fields (through pointers,
//     slices, maps, channels, arrays, type arguments and inline structs,
//     never through another of the three): c.routing is the client's,
//     s.restore the session's, t.life the turn's. A type none of them holds
//     (a TurnState, an Update) is layer 3, the state.
//   - A method is in its receiver's layer. A function that is not a method
//     is in the layer of its caller: it climbs only through what it calls.
//   - The walk starts at an entry (Client.onUpdate: the reader's hook for
//     session/update; Session.apply: the session's half) and follows every
//     static call (go/types: typeutil.StaticCallee) to a function of the
//     package, function literals included, in source order, each function
//     once per layer it is entered in. It does not follow calls through
//     interfaces or function values, nor a go statement (another
//     goroutine's path).
//   - A climb back is a call, counted once per calling function and
//     callee, whose callee's layer is above (a smaller number than) the
//     layer the caller runs in.

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

var roots = []string{"Client", "Session", "Turn"}

const stateLayer = 3

// climbs prints the climbs back of the walks from the entries, if the
// package in dir has them (the root package does).
func climbs(dir string, verbose bool) error {
	w, err := load(dir)
	if err != nil || w == nil {
		return err
	}
	for _, entry := range []string{"Client.onUpdate", "Session.apply"} {
		list, reached, files, ok := w.climbsFrom(entry)
		if !ok {
			continue
		}
		fmt.Printf("  climbs back from %s: %d (over %d functions in %d files)\n", entry, len(list), reached, files)
		if verbose {
			for _, c := range list {
				fmt.Printf("    %s\n", c)
			}
		}
	}
	return nil
}

// load loads the package in dir; nil if it has not the three owners.
func load(dir string) (*walker, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedFiles, Dir: dir}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		return nil, fmt.Errorf("loading %s: %v", dir, pkgs[0].Errors)
	}
	return newWalker(pkgs[0]), nil
}

// climbsFrom walks from entry ("Type.method" or "func") and returns the
// climbs back, sorted, and how many functions in how many files the walk
// reached; ok is false when the package has no such entry.
func (w *walker) climbsFrom(entry string) (list []string, reached, files int, ok bool) {
	fn := w.lookup(entry)
	if fn == nil {
		return nil, 0, 0, false
	}
	w.reset()
	w.walk(fn, w.layerOf(fn))
	fs := map[string]bool{}
	for f := range w.reached {
		fs[w.file(f)] = true
	}
	list = slices.Clone(w.climbs)
	sort.Strings(list)
	return list, len(w.reached), len(fs), true
}

type walkKey struct {
	fn    *types.Func
	layer int
}

type walker struct {
	p      *packages.Package
	decls  map[*types.Func]*ast.FuncDecl
	layers map[*types.TypeName]int

	seen    map[walkKey]bool
	reached map[*types.Func]bool
	edges   map[string]bool
	climbs  []string
}

func newWalker(p *packages.Package) *walker {
	w := &walker{p: p, decls: map[*types.Func]*ast.FuncDecl{}, layers: map[*types.TypeName]int{}}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					w.decls[fn] = fd
				}
			}
		}
	}
	scope := p.Types.Scope()
	for i, r := range roots {
		tn, ok := scope.Lookup(r).(*types.TypeName)
		if !ok {
			return nil
		}
		w.layers[tn] = i
	}
	for i, r := range roots {
		tn := scope.Lookup(r).(*types.TypeName)
		seen := map[types.Type]bool{}
		var visit func(t types.Type)
		visit = func(t types.Type) {
			if seen[t] {
				return
			}
			seen[t] = true
			switch t := t.(type) {
			case *types.Named:
				for ta := range t.TypeArgs().Types() {
					visit(ta)
				}
				o := t.Origin().Obj()
				if o.Pkg() != p.Types {
					return
				}
				if isRoot(o.Name()) {
					return // another root: its parts are its own
				}
				if l, ok := w.layers[o]; !ok || l < i {
					w.layers[o] = i
				}
				visit(t.Origin().Underlying())
			case *types.Pointer:
				visit(t.Elem())
			case *types.Slice:
				visit(t.Elem())
			case *types.Array:
				visit(t.Elem())
			case *types.Chan:
				visit(t.Elem())
			case *types.Map:
				visit(t.Key())
				visit(t.Elem())
			case *types.Struct:
				for f := range t.Fields() {
					visit(f.Type())
				}
			}
		}
		visit(tn.Type().Underlying())
	}
	return w
}

func isRoot(name string) bool {
	for _, r := range roots {
		if r == name {
			return true
		}
	}
	return false
}

func (w *walker) reset() {
	w.seen, w.reached, w.edges, w.climbs = map[walkKey]bool{}, map[*types.Func]bool{}, map[string]bool{}, nil
}

// lookup finds "Type.method" or "func" among the package's declarations.
func (w *walker) lookup(name string) *types.Func {
	for fn := range w.decls {
		if w.name(fn) == name {
			return fn
		}
	}
	return nil
}

func (w *walker) name(fn *types.Func) string {
	if r := recvNamed(fn); r != nil {
		return r.Obj().Name() + "." + fn.Name()
	}
	return fn.Name()
}

func (w *walker) file(fn *types.Func) string {
	pos := w.p.Fset.Position(w.decls[fn].Pos())
	return pos.Filename[strings.LastIndex(pos.Filename, "/")+1:]
}

func recvNamed(fn *types.Func) *types.Named {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	t := sig.Recv().Type()
	if pt, ok := t.(*types.Pointer); ok {
		t = pt.Elem()
	}
	n, _ := t.(*types.Named)
	return n
}

// layerOf is a method's layer, or -1 for a function that is not one.
func (w *walker) layerOf(fn *types.Func) int {
	r := recvNamed(fn)
	if r == nil {
		return -1
	}
	if l, ok := w.layers[r.Origin().Obj()]; ok {
		return l
	}
	return stateLayer
}

func (w *walker) walk(fn *types.Func, in int) {
	l := w.layerOf(fn)
	if l < 0 {
		l = in
	}
	k := walkKey{fn, l}
	if w.seen[k] {
		return
	}
	w.seen[k] = true
	w.reached[fn] = true
	ast.Inspect(w.decls[fn].Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.GoStmt); ok {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		callee := typeutil.StaticCallee(w.p.TypesInfo, call)
		if callee == nil {
			return true
		}
		callee = callee.Origin()
		if callee.Pkg() != w.p.Types || w.decls[callee] == nil {
			return true
		}
		cl := w.layerOf(callee)
		if cl >= 0 && cl < l {
			if e := w.name(fn) + " → " + w.name(callee); !w.edges[e] {
				w.edges[e] = true
				w.climbs = append(w.climbs, fmt.Sprintf("%s (%s, layer %d) → %s (%s, layer %d)", w.name(fn), w.file(fn), l, w.name(callee), w.file(callee), cl))
			}
		}
		w.walk(callee, l)
		return true
	})
}
