package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// genUnion is a $defs union decoded into a Go interface: a oneOf or anyOf
// told apart by a string const property (the schema's "discriminator"; an
// anyOf may have one branch without it, titled, which is the variant when
// the property is absent), or an anyOf whose variants are told apart by a
// required key that only they have. The generator writes its decoder
// function, the wrapper that decodes it as a field, and the UnmarshalJSON
// of the variant that keeps unknown values.
type genUnion struct {
	Def   string // the $defs entry
	Go    string // the Go interface
	Func  string // the decoder: func(data []byte) (Go, error)
	Label string // the type as errors name it
	// Wrapper is the struct{ v Go } that decodes one value inside a wire
	// struct ("" when the package writes its own).
	Wrapper string
	// Unknown is the variant holding any other discriminator value, with
	// the value in its field UnknownKey (if any) and the whole object in
	// Raw.
	Unknown, UnknownKey string
	// Fail is how the decoder returns an error %s for a value that is an
	// object but not a valid variant: "nil, %s", or a call that pairs the
	// error with the raw bytes.
	Fail string
	// Unstable reads the union from schema.unstable.json, whose variants
	// are a superset of the stable ones.
	Unstable bool
	// Legacy adds the branches of legacy.json's def of the same name:
	// variants agents still send that no schema has any more.
	Legacy bool
	// UnknownCommon makes the unknown variant require what every known
	// variant requires (besides what the union itself requires), so an
	// unknown value still has, say, the id and name a list shows.
	UnknownCommon bool
	// Then names a func(Go) Go applied to every decoded known variant.
	Then string
	// Out is the package the union is declared in, as in genType.
	Out string
}

type unionPlan struct {
	u        genUnion
	key      string   // the discriminator; "" when keys tell the variants apart
	consts   []string // the discriminator's values, or the keys
	variants []string // the Go type of each const
	// dflt is the const standing for an absent (or null) discriminator:
	// the title of the anyOf branch that has none. "" when it is required.
	dflt string
	// needs are the keys the unknown variant must have, each with the
	// field of the Unknown type that keeps it ("" when only checked).
	needs []unknownNeed
}

type unknownNeed struct{ key, field string }

// planUnion reads the variants of u from the schema: each oneOf (or
// anyOf) branch fixes the discriminator to a const and refers to the $defs
// entry of its body; in an anyOf, one titled branch without the
// discriminator is the default. The Go type of a variant is the generated
// type of that entry (or the hand-written one notGenerated names), or,
// when several Go types share the entry (the three content chunks), the
// const in CamelCase.
func (g *gen) planUnion(u genUnion) (unionPlan, error) {
	p := unionPlan{u: u}
	d := g.s.stable.Defs[u.Def]
	if u.Unstable {
		d = g.s.unstable.Defs[u.Def]
	}
	if d == nil {
		return p, fmt.Errorf("no $defs entry")
	}
	branches, anyOf := d.OneOf, false
	if len(branches) == 0 {
		branches, anyOf = d.AnyOf, true
	}
	if d.Discriminator != nil {
		p.key = d.Discriminator.PropertyName
	} else if anyOf {
		p.key = constKey(branches)
	}
	if p.key == "" && anyOf {
		return g.planKeyed(p, d)
	}
	if p.key == "" || len(branches) == 0 {
		return p, fmt.Errorf("not a oneOf or anyOf with a discriminator")
	}
	if u.Legacy {
		ld := g.s.legacy.Defs[u.Def]
		if ld == nil {
			return p, fmt.Errorf("legacy.json has no %s", u.Def)
		}
		branches = append(slices.Clip(branches), ld.AnyOf...)
	}
	for i, b := range branches {
		if len(b.AllOf) != 1 || b.AllOf[0].Ref == "" {
			return p, fmt.Errorf("variant %d does not refer to one $defs entry", i)
		}
		ref := refName(b.AllOf[0].Ref)
		var c string
		if prop := b.Properties[p.key]; prop == nil && anyOf && b.Title != "" {
			if p.dflt != "" {
				return p, fmt.Errorf("two variants without %q: %q and %q", p.key, p.dflt, b.Title)
			}
			c, p.dflt = b.Title, b.Title
		} else {
			if prop == nil || !slices.Contains(b.Required, p.key) {
				return p, fmt.Errorf("variant %d does not require %q", i, p.key)
			}
			var ok bool
			if c, ok = prop.Const.(string); !ok {
				return p, fmt.Errorf("variant %d: %q is not a string const", i, p.key)
			}
		}
		goType, err := g.variantType(ref, camel(c))
		if err != nil {
			return p, fmt.Errorf("variant %q: %w", c, err)
		}
		if slices.Contains(p.consts, c) {
			return p, fmt.Errorf("variant %q appears twice", c)
		}
		p.consts = append(p.consts, c)
		p.variants = append(p.variants, goType)
		if c != p.dflt {
			g.variantOf[goType] = p.key
		}
	}
	for _, name := range []string{u.Go, u.Unknown} {
		if g.pkg.types[name] == nil {
			return p, fmt.Errorf("no Go type %s", name)
		}
	}
	needs := slices.Clone(d.Required)
	if u.UnknownCommon {
		needs = append(needs, g.commonRequired(branches)...)
	}
	for _, k := range needs {
		if k == p.key || slices.ContainsFunc(p.needs, func(n unknownNeed) bool { return n.key == k }) {
			continue
		}
		p.needs = append(p.needs, unknownNeed{key: k, field: g.pkg.fieldNamed(u.Unknown, k)})
	}
	return p, nil
}

// constKey returns the property that the branches fix to a string const,
// "" when none does or they disagree.
func constKey(branches []*node) string {
	key := ""
	for _, b := range branches {
		for k, prop := range b.Properties {
			if _, ok := prop.Const.(string); !ok {
				continue
			}
			if key != "" && key != k {
				return ""
			}
			key = k
		}
	}
	return key
}

// commonRequired returns the keys that the $defs entry of every branch
// requires, in the order of the first.
func (g *gen) commonRequired(branches []*node) []string {
	var out []string
	for i, b := range branches {
		d := g.s.def(refName(b.AllOf[0].Ref))
		if d == nil {
			return nil
		}
		if i == 0 {
			out = slices.Clone(d.Required)
			continue
		}
		out = slices.DeleteFunc(out, func(k string) bool { return !slices.Contains(d.Required, k) })
	}
	return out
}

// variantType returns the Go type that decodes the $defs entry ref: the one
// generated type of that entry, the hand-written one notGenerated names, or,
// when several share it, the one named byName.
func (g *gen) variantType(ref, byName string) (string, error) {
	var goTypes []string
	for _, t := range generated {
		if !in(t.Out, g.pkg.name) {
			continue // a variant is declared beside its union
		}
		// A type that merges defs decodes the last one; the first ones are
		// properties its union shares (SessionConfigOption's id and name).
		if t.Defs[len(t.Defs)-1] == ref {
			goTypes = append(goTypes, t.Go)
		}
	}
	if sk, ok := notGenerated[ref]; ok && sk.Go != "" && len(goTypes) == 0 {
		goTypes = append(goTypes, sk.Go) // decoded by hand
	}
	switch {
	case len(goTypes) == 1:
		return goTypes[0], nil
	case slices.Contains(goTypes, byName):
		return byName, nil
	}
	return "", fmt.Errorf("no Go type decodes $defs %s (candidates %v)", ref, goTypes)
}

// planKeyed plans a union without a discriminator: each variant must
// require a key that no other variant has, and the first of those keys an
// object has picks its variant (EmbeddedResourceResource: "text" or
// "blob").
func (g *gen) planKeyed(p unionPlan, d *node) (unionPlan, error) {
	var refs []string
	for i, b := range d.AnyOf {
		pb := g.s.stable.peel(b)
		if pb.ref == "" || pb.target.Properties == nil {
			return p, fmt.Errorf("variant %d is not a $defs object", i)
		}
		refs = append(refs, pb.ref)
	}
	for i, ref := range refs {
		var own []string
		for _, k := range g.s.stable.Defs[ref].Required {
			shared := false
			for j, other := range refs {
				if j != i && g.s.stable.Defs[other].Properties[k] != nil {
					shared = true
				}
			}
			if !shared {
				own = append(own, k)
			}
		}
		if len(own) != 1 {
			return p, fmt.Errorf("variant %s: no single required key of its own (%v)", ref, own)
		}
		goType, err := g.variantType(ref, "")
		if err != nil {
			return p, err
		}
		p.consts = append(p.consts, own[0])
		p.variants = append(p.variants, goType)
	}
	for _, name := range []string{p.u.Go, p.u.Unknown} {
		if g.pkg.types[name] == nil {
			return p, fmt.Errorf("no Go type %s", name)
		}
	}
	return p, nil
}

func (g *gen) emitUnion(p unionPlan) {
	if p.key == "" {
		g.emitKeyed(p)
		return
	}
	u := p.u
	fail := func(err string) string { return fmt.Sprintf(u.Fail, err) }
	var list []string
	for i, c := range p.consts {
		list = append(list, fmt.Sprintf("%q (%s)", c, p.variants[i]))
	}
	doc := fmt.Sprintf("%s decodes the schema's %s, told apart by %q: %s.", u.Func, u.Def, p.key, strings.Join(list, ", "))
	if p.dflt != "" {
		doc += fmt.Sprintf(" An absent, null or empty %q means %q.", p.key, p.dflt)
	}
	doc += fmt.Sprintf(" Any other %q is kept as *%s, raw", p.key, u.Unknown)
	if len(p.needs) > 0 {
		var keys []string
		for _, n := range p.needs {
			keys = append(keys, strconv.Quote(n.key))
		}
		doc += ", when it has " + strings.Join(keys, " and ")
	}
	doc += fmt.Sprintf(". A value that is not an object, has no string %q, or is a known variant that does not decode is an error.", p.key)
	if p.dflt != "" {
		doc = strings.Replace(doc, fmt.Sprintf("has no string %q", p.key), fmt.Sprintf("has a %q that is not a string", p.key), 1)
	}
	if u.Then != "" {
		doc += fmt.Sprintf(" A decoded variant is passed through %s.", u.Then)
	}
	g.b.WriteString("\n")
	g.b.WriteString(wrapComment(doc))
	fmt.Fprintf(&g.b, "func %s(data []byte) (%s, error) {\n", u.Func, u.Go)
	fmt.Fprintf(&g.b, "\tkind, found, err := wirejson.Discriminator(data, %q)\n", p.key)
	fmt.Fprintf(&g.b, "\tif err != nil {\n\t\treturn %s\n\t}\n", fail(fmt.Sprintf("wirejson.ErrDecode(%q, err)", u.Label)))
	if p.dflt != "" {
		fmt.Fprintf(&g.b, "\tif !found || len(kind) == 0 {\n\t\tkind = []byte(%q)\n\t}\n", p.dflt)
	} else {
		fmt.Fprintf(&g.b, "\tif !found {\n\t\treturn %s\n\t}\n", fail(fmt.Sprintf("wirejson.ErrMissing(%q, %q)", u.Label, p.key)))
	}
	fmt.Fprintf(&g.b, "\tvar v interface {\n\t\t%s\n\t\tjson.Unmarshaler\n\t}\n", u.Go)
	fmt.Fprintf(&g.b, "\tswitch string(kind) {\n")
	for i, c := range p.consts {
		fmt.Fprintf(&g.b, "\tcase %q:\n\t\tv = new(%s)\n", c, p.variants[i])
	}
	if len(p.needs) > 0 {
		fmt.Fprintf(&g.b, "\tdefault:\n\t\tx := new(%s)\n\t\tif err := x.UnmarshalJSON(data); err != nil {\n\t\t\treturn %s\n\t\t}\n\t\treturn x, nil\n\t}\n",
			u.Unknown, fail("err"))
	} else {
		fmt.Fprintf(&g.b, "\tdefault:\n\t\tif err := wirejson.CheckObject(data); err != nil {\n\t\t\treturn nil, wirejson.ErrDecode(%q, err)\n\t\t}\n", u.Label)
		fmt.Fprintf(&g.b, "\t\treturn &%s{%s: string(kind), Raw: wirejson.RawCopy(data)}, nil\n\t}\n", u.Unknown, u.UnknownKey)
	}
	ret := "v"
	if u.Then != "" {
		ret = u.Then + "(v)"
	}
	fmt.Fprintf(&g.b, "\tif err := v.UnmarshalJSON(data); err != nil {\n\t\treturn %s\n\t}\n\treturn %s, nil\n}\n", fail("err"), ret)

	g.emitWrapper(u)
	g.emitUnknown(u, p.key, p.needs)
}

// emitKeyed writes the decoder of a union told apart by keys.
func (g *gen) emitKeyed(p unionPlan) {
	u := p.u
	var list []string
	for i, k := range p.consts {
		list = append(list, fmt.Sprintf("%q (%s)", k, p.variants[i]))
	}
	g.b.WriteString("\n")
	g.b.WriteString(wrapComment(fmt.Sprintf(
		"%s decodes the schema's %s, whose variants have no discriminator: the first of the keys %s "+
			"that the object has picks the variant. An object with none is kept as *%s, raw. "+
			"A value that is not an object, or a variant that does not decode, is an error.",
		u.Func, u.Def, strings.Join(list, ", "), u.Unknown)))
	fmt.Fprintf(&g.b, "func %s(data []byte) (%s, error) {\n", u.Func, u.Go)
	fmt.Fprintf(&g.b, "\tvar v interface {\n\t\t%s\n\t\tjson.Unmarshaler\n\t}\n", u.Go)
	fmt.Fprintf(&g.b, "\tswitch {\n")
	for i, k := range p.consts {
		fmt.Fprintf(&g.b, "\tcase wirejson.HasKey(data, %q):\n\t\tv = new(%s)\n", k, p.variants[i])
	}
	fmt.Fprintf(&g.b, "\tdefault:\n\t\tif err := wirejson.CheckObject(data); err != nil {\n\t\t\treturn nil, wirejson.ErrDecode(%q, err)\n\t\t}\n", u.Label)
	fmt.Fprintf(&g.b, "\t\treturn &%s{Raw: wirejson.RawCopy(data)}, nil\n\t}\n", u.Unknown)
	fmt.Fprintf(&g.b, "\tif err := v.UnmarshalJSON(data); err != nil {\n\t\treturn %s\n\t}\n\treturn v, nil\n}\n",
		fmt.Sprintf(u.Fail, "err"))
	g.emitWrapper(u)
	g.emitUnknown(u, "", nil)
}

func (g *gen) emitWrapper(u genUnion) {
	if u.Wrapper != "" {
		g.b.WriteString("\n")
		g.b.WriteString(wrapComment(fmt.Sprintf(
			"%s decodes one %s inside a wire struct; its error fails the enclosing decode.", u.Wrapper, u.Go)))
		fmt.Fprintf(&g.b, `type %[1]s struct{ v %[2]s }

func (f *%[1]s) UnmarshalJSON(b []byte) (err error) {
	f.v, err = %[3]s(b)
	return err
}
`, u.Wrapper, u.Go, u.Func)
	}
}

// emitUnknown writes the UnmarshalJSON of the variant that keeps unknown
// values: any object, with its discriminator (key) when there is one and
// the keys it needs.
func (g *gen) emitUnknown(u genUnion, key string, needs []unknownNeed) {
	if len(needs) > 0 {
		g.emitUnknownNeeding(u, key, needs)
		return
	}
	if key == "" {
		fmt.Fprintf(&g.b, `
// UnmarshalJSON keeps any object as %[1]s.
func (x *%[1]s) UnmarshalJSON(b []byte) error {
	if err := wirejson.CheckObject(b); err != nil {
		return wirejson.ErrDecode(%[2]q, err)
	}
	*x = %[1]s{Raw: wirejson.RawCopy(b)}
	return nil
}
`, u.Unknown, u.Label)
		return
	}
	fmt.Fprintf(&g.b, `
// UnmarshalJSON keeps any object as %[1]s, with its %[2]q.
func (x *%[1]s) UnmarshalJSON(b []byte) error {
	if err := wirejson.CheckObject(b); err != nil {
		return wirejson.ErrDecode(%[3]q, err)
	}
	kind, _, _ := wirejson.Discriminator(b, %[2]q)
	*x = %[1]s{%[4]s: string(kind), Raw: wirejson.RawCopy(b)}
	return nil
}
`, u.Unknown, key, u.Label, u.UnknownKey)
}

// emitUnknownNeeding writes the UnmarshalJSON of an unknown variant that
// must have the string keys needs, keeping those it has a field for.
func (g *gen) emitUnknownNeeding(u genUnion, key string, needs []unknownNeed) {
	var keys []string
	for _, n := range needs {
		keys = append(keys, strconv.Quote(n.key))
	}
	g.b.WriteString("\n")
	g.b.WriteString(wrapComment(fmt.Sprintf("UnmarshalJSON keeps an object with %s as %s, with its %q.",
		strings.Join(keys, " and "), u.Unknown, key)))
	fmt.Fprintf(&g.b, "func (x *%s) UnmarshalJSON(b []byte) error {\n", u.Unknown)
	fmt.Fprintf(&g.b, "\tif err := wirejson.CheckObject(b); err != nil {\n\t\treturn wirejson.ErrDecode(%q, err)\n\t}\n", u.Label)
	name := func(n unknownNeed) string {
		if n.field != "" {
			return n.field
		}
		return camel(n.key)
	}
	g.b.WriteString("\tvar w struct {\n")
	for _, n := range needs {
		fmt.Fprintf(&g.b, "\t\t%s wirejson.Str `json:%q`\n", name(n), n.key)
	}
	g.b.WriteString("\t}\n")
	fmt.Fprintf(&g.b, "\tif err := json.Unmarshal(b, &w); err != nil {\n\t\treturn wirejson.ErrDecode(%q, err)\n\t}\n", u.Label)
	for _, n := range needs {
		fmt.Fprintf(&g.b, "\tif !w.%s.OK {\n\t\treturn wirejson.ErrMissing(%q, %q)\n\t}\n", name(n), u.Label, n.key)
	}
	fmt.Fprintf(&g.b, "\tkind, _, _ := wirejson.Discriminator(b, %q)\n", key)
	fmt.Fprintf(&g.b, "\t*x = %s{%s: string(kind)", u.Unknown, u.UnknownKey)
	for _, n := range needs {
		if n.field != "" {
			fmt.Fprintf(&g.b, ", %s: w.%s.V", n.field, n.field)
		}
	}
	g.b.WriteString(", Raw: wirejson.RawCopy(b)}\n\treturn nil\n}\n")
}

// camel turns a snake_case const into a Go name: "agent_message_chunk"
// becomes "AgentMessageChunk".
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}
