package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// node is the part of a JSON Schema node the generator reads.
type node struct {
	Ref            string           `json:"$ref"`
	Title          string           `json:"title"`
	Type           json.RawMessage  `json:"type"`
	Properties     map[string]*node `json:"properties"`
	Required       []string         `json:"required"`
	Items          *node            `json:"items"`
	AllOf          []*node          `json:"allOf"`
	AnyOf          []*node          `json:"anyOf"`
	OneOf          []*node          `json:"oneOf"`
	Const          any              `json:"const"`
	Format         string           `json:"format"`
	Minimum        *float64         `json:"minimum"`
	Maximum        *float64         `json:"maximum"`
	XMethod        string           `json:"x-method"`
	DefaultOnError bool             `json:"x-deserialize-default-on-error"`
	DefaultOnNull  bool             `json:"x-deserialize-default-on-null"`
	SkipInvalid    bool             `json:"x-deserialize-skip-invalid-items"`
	Discriminator  *struct {
		PropertyName string `json:"propertyName"`
	} `json:"discriminator"`
}

type schema struct {
	Defs map[string]*node `json:"$defs"`
}

// legacyJSON holds the shapes real agents send that no pinned schema has
// (the model selection that config options replaced); only types marked
// Legacy read it.
//
//go:embed legacy.json
var legacyJSON []byte

// frozenJSON names the definitions taken from the 1.21.0 unstable schema
// because the pinned SDK schema no longer has them in the shape this
// package speaks (NES, document sync, connection-scoped MCP-over-ACP); its
// $comment gives the reasons.
//
//go:embed frozen.json
var frozenJSON []byte

// stabilisedJSON lists what became stable after the pinned SDK schema
// (client system prompt in 1.30.0; subagent sessions and plan operations in
// 1.34.0), each entry with its published source; see applyStabilised.
//
//go:embed stabilised.json
var stabilisedJSON []byte

// pinDir is the directory, under schema/, of the pinned v1 schemas.
const pinDir = "sdk-2.4.0/v1"

// schemas is the pinned stable schema, its unstable superset, and the
// legacy shapes.
type schemas struct {
	stable, unstable, legacy *schema
	version                  string // the schema release of the pin
	through                  string // the release the stabilised overlay reaches
	stabilised               map[string]stabilisedEntry
}

// frozenFile is frozen.json.
type frozenFile struct {
	From    string   `json:"from"`    // relative to the repository root
	Replace []string `json:"replace"` // override the pinned definitions of these names
	Defs    []string `json:"defs"`    // absent from the pinned schema
	// Properties names, by definition, properties the pinned definition
	// lost; they are copied into it.
	Properties map[string][]string `json:"properties"`
}

// stabilisedFile is stabilised.json.
type stabilisedFile struct {
	// Pin is the schema release the pinned files correspond to, and Why
	// how that was worked out (the files carry no version).
	Pin     string                     `json:"pin"`
	PinWhy  string                     `json:"pinWhy"`
	Through string                     `json:"through"`
	Defs    map[string]stabilisedEntry `json:"$defs"`
}

// stabilisedEntry promotes a definition, or parts of one, from the pinned
// unstable schema to the stable one, and may add properties the pin lacks.
type stabilisedEntry struct {
	Source string `json:"source"` // the published reference the entry follows
	Since  string `json:"since"`  // the release that made it stable
	// Whole promotes the unstable definition as it is.
	Whole bool `json:"whole"`
	// Properties promotes these properties of the unstable definition into
	// the stable one (with their required-ness).
	Properties []string `json:"properties"`
	// Branches promotes the oneOf/anyOf branches of a union whose
	// discriminator const is one of these.
	Branches []string `json:"branches"`
	// Add holds properties that neither pinned schema has; they are added
	// to the definition in both.
	Add map[string]*node `json:"add"`
}

func loadSchemas(dir string) (*schemas, error) {
	var s schemas
	for _, f := range []struct {
		name string
		dst  **schema
	}{{"schema.json", &s.stable}, {"schema.unstable.json", &s.unstable}} {
		var err error
		if *f.dst, err = readSchema(filepath.Join(dir, filepath.FromSlash(pinDir), f.name)); err != nil {
			return nil, err
		}
	}
	s.legacy = new(schema)
	if err := json.Unmarshal(legacyJSON, s.legacy); err != nil {
		return nil, fmt.Errorf("legacy.json: %w", err)
	}
	if err := s.applyFrozen(filepath.Dir(dir)); err != nil {
		return nil, fmt.Errorf("frozen.json: %w", err)
	}
	if err := s.applyStabilised(); err != nil {
		return nil, fmt.Errorf("stabilised.json: %w", err)
	}
	return &s, nil
}

func readSchema(path string) (*schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sch := new(schema)
	if err := json.Unmarshal(b, sch); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sch, nil
}

// applyFrozen copies the definitions frozen.json names from the 1.21.0
// unstable schema into the unstable one, with the definitions they refer
// to that the pinned schema lacks.
func (s *schemas) applyFrozen(root string) error {
	var f frozenFile
	if err := json.Unmarshal(frozenJSON, &f); err != nil {
		return err
	}
	old, err := readSchema(filepath.Join(root, filepath.FromSlash(f.From)))
	if err != nil {
		return err
	}
	for _, name := range f.Replace {
		if old.Defs[name] == nil || s.unstable.Defs[name] == nil {
			return fmt.Errorf("replace %s: it must be in both %s and the pinned schema", name, f.From)
		}
		s.unstable.Defs[name] = old.Defs[name]
	}
	for _, name := range f.Defs {
		if old.Defs[name] == nil {
			return fmt.Errorf("%s is not in %s", name, f.From)
		}
		if s.unstable.Defs[name] != nil {
			return fmt.Errorf("%s is in the pinned schema: take it from there, or list it under replace", name)
		}
		s.unstable.Defs[name] = old.Defs[name]
	}
	for _, name := range slices.Sorted(maps.Keys(f.Properties)) {
		od, nd := old.Defs[name], s.unstable.Defs[name]
		if od == nil || nd == nil {
			return fmt.Errorf("properties of %s: it must be in both %s and the pinned schema", name, f.From)
		}
		nd = nd.clone()
		s.unstable.Defs[name] = nd
		for _, p := range f.Properties[name] {
			if od.Properties[p] == nil || nd.Properties[p] != nil {
				return fmt.Errorf("%s.%s must be in %s and not in the pinned schema", name, p, f.From)
			}
			nd.Properties[p] = od.Properties[p]
		}
	}
	if refs := danglingRefs(s.unstable); len(refs) > 0 {
		return fmt.Errorf("the frozen definitions refer to %s, which neither list names", strings.Join(refs, ", "))
	}
	return nil
}

// applyStabilised promotes what stabilised.json lists from the unstable
// schema to the stable one, and adds its new properties to both.
func (s *schemas) applyStabilised() error {
	var f stabilisedFile
	if err := json.Unmarshal(stabilisedJSON, &f); err != nil {
		return err
	}
	if f.Pin == "" || f.Through == "" || strings.TrimSpace(f.PinWhy) == "" {
		return fmt.Errorf("pin, pinWhy and through must be set")
	}
	s.version, s.through, s.stabilised = f.Pin, f.Through, f.Defs
	names := make([]string, 0, len(f.Defs))
	for name := range f.Defs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		e := f.Defs[name]
		if e.Source == "" || e.Since == "" {
			return fmt.Errorf("%s: source and since must be set", name)
		}
		u := s.unstable.Defs[name]
		if u == nil {
			return fmt.Errorf("%s: not in the pinned unstable schema", name)
		}
		st := s.stable.Defs[name]
		switch {
		case e.Whole:
			if st != nil {
				return fmt.Errorf("%s: whole, but the stable schema has it", name)
			}
			s.stable.Defs[name] = u
			st = u
		case len(e.Properties) > 0 || len(e.Branches) > 0:
			if st == nil {
				return fmt.Errorf("%s: the stable schema lacks it; promote it whole", name)
			}
			st = st.clone()
			s.stable.Defs[name] = st
		}
		for _, p := range e.Properties {
			n := u.Properties[p]
			if n == nil {
				return fmt.Errorf("%s.%s: not in the unstable schema", name, p)
			}
			if st.Properties[p] != nil {
				return fmt.Errorf("%s.%s: already stable", name, p)
			}
			st.Properties[p] = n
			if slices.Contains(u.Required, p) {
				st.Required = append(st.Required, p)
			}
		}
		for _, b := range e.Branches {
			if err := promoteBranch(st, u, b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		for p, n := range e.Add {
			for _, d := range []*node{st, u} {
				if d == nil || d == st && st == u && d.Properties[p] == n {
					continue
				}
				if d.Properties[p] != nil {
					return fmt.Errorf("%s.%s: the pinned schema has it; drop it from add", name, p)
				}
				if d.Properties == nil {
					d.Properties = map[string]*node{}
				}
				d.Properties[p] = n
			}
		}
	}
	if refs := danglingRefs(s.stable); len(refs) > 0 {
		return fmt.Errorf("the stable schema refers to %s; promote them too", strings.Join(refs, ", "))
	}
	return nil
}

// clone copies a definition's top level, so promoting parts of the
// unstable one leaves the pinned stable one's maps unshared.
func (n *node) clone() *node {
	c := *n
	c.Properties = maps.Clone(n.Properties)
	c.Required = slices.Clone(n.Required)
	c.OneOf = slices.Clone(n.OneOf)
	c.AnyOf = slices.Clone(n.AnyOf)
	return &c
}

// promoteBranch copies the union branch whose discriminator const is kind
// from u to st, before st's catch-all branch (the one without a const).
func promoteBranch(st, u *node, kind string) error {
	find := func(list []*node) int {
		return slices.IndexFunc(list, func(b *node) bool { return branchConst(b) == kind })
	}
	for _, lists := range [][2]*[]*node{{&st.OneOf, &u.OneOf}, {&st.AnyOf, &u.AnyOf}} {
		dst, src := lists[0], lists[1]
		i := find(*src)
		if i < 0 {
			continue
		}
		if find(*dst) >= 0 {
			return fmt.Errorf("branch %s: already stable", kind)
		}
		at := slices.IndexFunc(*dst, func(b *node) bool { return branchConst(b) == "" })
		if at < 0 {
			at = len(*dst)
		}
		*dst = slices.Insert(*dst, at, (*src)[i])
		return nil
	}
	return fmt.Errorf("branch %s: not in the unstable schema", kind)
}

// branchConst returns the string const of a union branch's discriminator:
// its only property with a const.
func branchConst(b *node) string {
	for _, p := range b.Properties {
		if c, ok := p.Const.(string); ok {
			return c
		}
	}
	return ""
}

// danglingRefs returns the $defs names that sch refers to and lacks.
func danglingRefs(sch *schema) []string {
	seen := map[*node]bool{}
	missing := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		if n.Ref != "" {
			if name := refName(n.Ref); sch.Defs[name] == nil {
				missing[name] = true
			}
		}
		for _, p := range n.Properties {
			walk(p)
		}
		walk(n.Items)
		for _, list := range [][]*node{n.AllOf, n.AnyOf, n.OneOf} {
			for _, b := range list {
				walk(b)
			}
		}
	}
	for _, d := range sch.Defs {
		walk(d)
	}
	out := slices.Sorted(maps.Keys(missing))
	return out
}

// types returns the node's "type" keyword as a list.
func (n *node) types() []string {
	if len(n.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(n.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(n.Type, &many)
	return many
}

// refName returns the $defs name a "$ref" points at.
func refName(ref string) string { return strings.TrimPrefix(ref, "#/$defs/") }

// prop is a property with its wrappers peeled off: allOf of one element and
// anyOf with null are how the schema spells "this type" and "this type or
// null".
type prop struct {
	n        *node  // the property itself (holds the x-deserialize marks)
	target   *node  // after peeling allOf/anyOf-null and following one $ref
	ref      string // the $defs name followed, if any
	nullable bool
}

func (s *schema) peel(n *node) prop {
	p := prop{n: n, target: n}
	for {
		t := p.target
		switch {
		case len(t.AllOf) == 1 && t.Properties == nil:
			p.target = t.AllOf[0]
			continue
		case len(t.AnyOf) == 2 && isNull(t.AnyOf[1]):
			p.nullable = true
			p.target = t.AnyOf[0]
			continue
		case t.Ref != "":
			p.ref = refName(t.Ref)
			d := s.Defs[p.ref]
			if d == nil {
				return p
			}
			p.target = d
			continue
		}
		return p
	}
}

func isNull(n *node) bool {
	ts := n.types()
	return len(ts) == 1 && ts[0] == "null"
}

// kind classifies a schema node as a JSON kind: string, boolean, integer,
// number, array, object, or any (a union of several kinds).
func (s *schema) kind(n *node, depth int) string {
	if depth > 20 {
		return "any"
	}
	if n.Ref != "" {
		d := s.Defs[refName(n.Ref)]
		if d == nil {
			return "any"
		}
		return s.kind(d, depth+1)
	}
	var kinds []string
	for _, t := range n.types() {
		if t != "null" {
			kinds = append(kinds, t)
		}
	}
	if n.Properties != nil && len(kinds) == 0 {
		kinds = append(kinds, "object")
	}
	for _, list := range [][]*node{n.AllOf, n.AnyOf, n.OneOf} {
		for _, b := range list {
			if isNull(b) {
				continue
			}
			kinds = append(kinds, s.kind(b, depth+1))
		}
	}
	if len(kinds) == 0 {
		return "any"
	}
	for _, k := range kinds[1:] {
		if k != kinds[0] {
			return "any"
		}
	}
	return kinds[0]
}

// isEnum reports whether a $defs entry is a closed set of string constants.
func isEnum(d *node) bool {
	if len(d.OneOf) == 0 || d.Properties != nil {
		return false
	}
	for _, b := range d.OneOf {
		if _, ok := b.Const.(string); !ok {
			return false
		}
	}
	return true
}

// def returns the $defs entry name from the stable schema, else the
// unstable one, else legacy.json.
func (s *schemas) def(name string) *node {
	for _, sch := range []*schema{s.stable, s.unstable, s.legacy} {
		if d := sch.Defs[name]; d != nil {
			return d
		}
	}
	return nil
}
