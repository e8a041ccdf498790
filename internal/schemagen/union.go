package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// genUnion is a $defs union decoded into a Go interface: a oneOf told apart
// by a string const property (the schema's "discriminator"), or an anyOf
// whose variants are told apart by a required key that only they have. The
// generator writes its decoder function, the wrapper that decodes it as a
// field, and the UnmarshalJSON of the variant that keeps unknown values.
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
}

type unionPlan struct {
	u        genUnion
	key      string   // the discriminator; "" when keys tell the variants apart
	consts   []string // the discriminator's values, or the keys
	variants []string // the Go type of each const
}

// planUnion reads the variants of u from the schema: each oneOf branch
// fixes the discriminator to a const and refers to the $defs entry of its
// body. The Go type of a variant is the generated type of that entry (or
// the hand-written one notGenerated names), or, when several Go types share
// the entry (the three content chunks), the const in CamelCase.
func (g *gen) planUnion(u genUnion) (unionPlan, error) {
	p := unionPlan{u: u}
	d := g.s.stable.Defs[u.Def]
	if u.Unstable {
		d = g.s.unstable.Defs[u.Def]
	}
	if d == nil {
		return p, fmt.Errorf("no $defs entry")
	}
	if d.Discriminator == nil && len(d.AnyOf) > 0 {
		return g.planKeyed(p, d)
	}
	if d.Discriminator == nil || d.Discriminator.PropertyName == "" || len(d.OneOf) == 0 {
		return p, fmt.Errorf("not a oneOf with a discriminator")
	}
	p.key = d.Discriminator.PropertyName
	for i, b := range d.OneOf {
		prop := b.Properties[p.key]
		if prop == nil || !slices.Contains(b.Required, p.key) {
			return p, fmt.Errorf("variant %d does not require %q", i, p.key)
		}
		c, ok := prop.Const.(string)
		if !ok {
			return p, fmt.Errorf("variant %d: %q is not a string const", i, p.key)
		}
		if len(b.AllOf) != 1 || b.AllOf[0].Ref == "" {
			return p, fmt.Errorf("variant %q does not refer to one $defs entry", c)
		}
		ref := refName(b.AllOf[0].Ref)
		goType, err := g.variantType(ref, camel(c))
		if err != nil {
			return p, fmt.Errorf("variant %q: %w", c, err)
		}
		if slices.Contains(p.consts, c) {
			return p, fmt.Errorf("variant %q appears twice", c)
		}
		p.consts = append(p.consts, c)
		p.variants = append(p.variants, goType)
		g.variantOf[goType] = p.key
	}
	for _, name := range []string{u.Go, u.Unknown} {
		if g.pkg.types[name] == nil {
			return p, fmt.Errorf("no Go type %s", name)
		}
	}
	return p, nil
}

// variantType returns the Go type that decodes the $defs entry ref: the one
// generated type of that entry, the hand-written one notGenerated names, or,
// when several share it, the one named byName.
func (g *gen) variantType(ref, byName string) (string, error) {
	var goTypes []string
	for _, t := range generated {
		if len(t.Defs) == 1 && t.Defs[0] == ref {
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
	g.b.WriteString("\n")
	g.b.WriteString(wrapComment(fmt.Sprintf(
		"%s decodes the schema's %s, told apart by %q: %s. Any other %q is kept as *%s, raw. "+
			"A value that is not an object, has no string %q, or is a known variant that does not decode is an error.",
		u.Func, u.Def, p.key, strings.Join(list, ", "), p.key, u.Unknown, p.key)))
	fmt.Fprintf(&g.b, "func %s(data []byte) (%s, error) {\n", u.Func, u.Go)
	fmt.Fprintf(&g.b, "\tkind, found, err := jsonDiscriminator(data, %q)\n", p.key)
	fmt.Fprintf(&g.b, "\tif err != nil {\n\t\treturn %s\n\t}\n", fail(fmt.Sprintf("errDecode(%q, err)", u.Label)))
	fmt.Fprintf(&g.b, "\tif !found {\n\t\treturn %s\n\t}\n", fail(fmt.Sprintf("errMissing(%q, %q)", u.Label, p.key)))
	fmt.Fprintf(&g.b, "\tvar v interface {\n\t\t%s\n\t\tjson.Unmarshaler\n\t}\n", u.Go)
	fmt.Fprintf(&g.b, "\tswitch string(kind) {\n")
	for i, c := range p.consts {
		fmt.Fprintf(&g.b, "\tcase %q:\n\t\tv = new(%s)\n", c, p.variants[i])
	}
	fmt.Fprintf(&g.b, "\tdefault:\n\t\tif err := jsonObject(data); err != nil {\n\t\t\treturn nil, errDecode(%q, err)\n\t\t}\n", u.Label)
	fmt.Fprintf(&g.b, "\t\treturn &%s{%s: string(kind), Raw: rawCopy(data)}, nil\n\t}\n", u.Unknown, u.UnknownKey)
	fmt.Fprintf(&g.b, "\tif err := v.UnmarshalJSON(data); err != nil {\n\t\treturn %s\n\t}\n\treturn v, nil\n}\n", fail("err"))

	g.emitWrapper(u)
	g.emitUnknown(u, p.key)
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
		fmt.Fprintf(&g.b, "\tcase jsonHasKey(data, %q):\n\t\tv = new(%s)\n", k, p.variants[i])
	}
	fmt.Fprintf(&g.b, "\tdefault:\n\t\tif err := jsonObject(data); err != nil {\n\t\t\treturn nil, errDecode(%q, err)\n\t\t}\n", u.Label)
	fmt.Fprintf(&g.b, "\t\treturn &%s{Raw: rawCopy(data)}, nil\n\t}\n", u.Unknown)
	fmt.Fprintf(&g.b, "\tif err := v.UnmarshalJSON(data); err != nil {\n\t\treturn %s\n\t}\n\treturn v, nil\n}\n",
		fmt.Sprintf(u.Fail, "err"))
	g.emitWrapper(u)
	g.emitUnknown(u, "")
}

func (g *gen) emitWrapper(u genUnion) {
	if u.Wrapper != "" {
		g.b.WriteString("\n")
		g.b.WriteString(wrapComment(fmt.Sprintf(
			"%s decodes a %s inside a wire struct; its error fails the enclosing decode.", u.Wrapper, u.Go)))
		fmt.Fprintf(&g.b, `type %[1]s struct{ v %[2]s }

func (f *%[1]s) UnmarshalJSON(b []byte) (err error) {
	f.v, err = %[3]s(b)
	return err
}
`, u.Wrapper, u.Go, u.Func)
	}
}

// emitUnknown writes the UnmarshalJSON of the variant that keeps unknown
// values: any object, with its discriminator (key) when there is one.
func (g *gen) emitUnknown(u genUnion, key string) {
	if key == "" {
		fmt.Fprintf(&g.b, `
// UnmarshalJSON keeps any object as %[1]s.
func (x *%[1]s) UnmarshalJSON(b []byte) error {
	if err := jsonObject(b); err != nil {
		return errDecode(%[2]q, err)
	}
	*x = %[1]s{Raw: rawCopy(b)}
	return nil
}
`, u.Unknown, u.Label)
		return
	}
	fmt.Fprintf(&g.b, `
// UnmarshalJSON keeps any object as %[1]s, with its %[2]q.
func (x *%[1]s) UnmarshalJSON(b []byte) error {
	if err := jsonObject(b); err != nil {
		return errDecode(%[3]q, err)
	}
	kind, _, _ := jsonDiscriminator(b, %[2]q)
	*x = %[1]s{%[4]s: string(kind), Raw: rawCopy(b)}
	return nil
}
`, u.Unknown, key, u.Label, u.UnknownKey)
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
