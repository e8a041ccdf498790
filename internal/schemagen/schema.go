package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// schemas is the pinned stable schema, its unstable superset, and the
// legacy shapes.
type schemas struct {
	stable, unstable, legacy *schema
	version                  string // the latest release named in CHANGELOG.md
}

func loadSchemas(dir string) (*schemas, error) {
	var s schemas
	for _, f := range []struct {
		name string
		dst  **schema
	}{{"schema.json", &s.stable}, {"schema.unstable.json", &s.unstable}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		*f.dst = new(schema)
		if err := json.Unmarshal(b, *f.dst); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	s.legacy = new(schema)
	if err := json.Unmarshal(legacyJSON, s.legacy); err != nil {
		return nil, fmt.Errorf("legacy.json: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	v, err := changelogVersion(b)
	if err != nil {
		return nil, err
	}
	s.version = v
	return &s, nil
}

var releaseHeading = regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`)

// changelogVersion returns the first (newest) release heading of the
// schema's CHANGELOG.md, e.g. "## [1.21.0](...) - 2026-08-20".
func changelogVersion(b []byte) (string, error) {
	m := releaseHeading.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("CHANGELOG.md: no release heading")
	}
	return string(m[1]), nil
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
