package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the module root, two levels up.
const root = "../.."

// TestGeneratedFileIsFresh fails when a generated file (protocol_gen.go,
// and each other output) is not what `go generate ./...` would write: after
// a change to the schema copy, to the Go types it reads, or to this
// generator.
func TestGeneratedFileIsFresh(t *testing.T) {
	for _, o := range outputs {
		t.Run(o.File, func(t *testing.T) {
			want, err := generate(root, o)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, filepath.FromSlash(o.Dir), o.File)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is stale: run `go generate ./...` in the repository root and commit the result\n%s",
					path, firstDiff(got, want))
			}
		})
	}
}

// loadOutput loads the Go types of the package of the output named pkg.
func loadOutput(t *testing.T, pkg string) *goPkg {
	t.Helper()
	o, ok := outputOf(pkg)
	if !ok {
		t.Fatalf("no output for package %q", pkg)
	}
	p, err := loadPackage(filepath.Join(root, filepath.FromSlash(o.Dir)), o.Pkg, o.File)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "first difference at line " + strconv.Itoa(i+1) + ":\n committed: " + gl + "\n generated: " + wl
		}
	}
	return ""
}

// TestEveryDefCovered checks that every $defs entry of the stable schema is
// decoded by a generated decoder or is on the notGenerated list with a
// reason, and that every Go type the lists name exists where they say.
func TestEveryDefCovered(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*goPkg{}
	pkgOf := func(out string) *goPkg {
		o, ok := outputOf(out)
		if !ok {
			t.Fatalf("Out %q is in no output", out)
		}
		if pkgs[o.Pkg] == nil {
			pkgs[o.Pkg] = loadOutput(t, o.Pkg)
		}
		return pkgs[o.Pkg]
	}
	pkg := pkgOf("schema")
	covered := map[string]string{}
	shape := map[string]string{} // Go type → its defs
	for _, g := range generated {
		if p := pkgOf(g.Out); p.types[g.Go] == nil {
			t.Errorf("generated type %s is not declared in package %s", g.Go, p.name)
		}
		shape[g.Go] = strings.Join(g.Defs, ",")
		for _, d := range g.Defs {
			// Several Go types may decode one def when it is all they
			// decode (the three content chunks share ContentChunk).
			if prev, dup := covered[d]; dup && !(len(g.Defs) == 1 && shape[prev] == d) {
				t.Errorf("$defs %s is generated for both %s and %s", d, prev, g.Go)
			}
			covered[d] = g.Go
			if s.stable.Defs[d] == nil && !(g.Unstable && s.unstable.Defs[d] != nil) && !(g.Legacy && s.legacy.Defs[d] != nil) {
				t.Errorf("%s names $defs %s, which the schema does not have", g.Go, d)
			}
		}
	}
	for _, u := range unions {
		// A variant may merge the union's own def first: the properties
		// every variant shares (SessionConfigOption's id and name).
		if prev, dup := covered[u.Def]; dup && !strings.HasPrefix(shape[prev], u.Def+",") {
			t.Errorf("$defs %s is both a generated type and a generated union", u.Def)
		}
		covered[u.Def] = u.Go
		p := pkgOf(u.Out)
		for _, name := range []string{u.Go, u.Unknown} {
			if p.types[name] == nil {
				t.Errorf("union %s: type %s is not declared in package %s", u.Def, name, p.name)
			}
		}
		if u.Wrapper != "" && p.types[u.Wrapper] != nil {
			t.Errorf("union %s: wrapper %s is generated but also declared by hand", u.Def, u.Wrapper)
		}
	}
	for d, sk := range notGenerated {
		if s.stable.Defs[d] == nil {
			t.Errorf("notGenerated lists %s, which the stable schema does not have", d)
		}
		if g, dup := covered[d]; dup {
			t.Errorf("$defs %s is both generated (%s) and listed as not generated", d, g)
		}
		if strings.TrimSpace(sk.Why) == "" {
			t.Errorf("notGenerated[%s] gives no reason", d)
		}
		if sk.Go != "" {
			decl := pkg.types[sk.Go]
			switch {
			case decl == nil:
				t.Errorf("notGenerated[%s]: type %s is not declared in package schema", d, sk.Go)
			case decl.file != sk.File:
				t.Errorf("notGenerated[%s]: type %s is declared in %s, not %s", d, sk.Go, decl.file, sk.File)
			}
		}
	}
	var missing []string
	for d := range s.stable.Defs {
		if _, ok := covered[d]; ok {
			continue
		}
		if _, ok := notGenerated[d]; !ok {
			missing = append(missing, d)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("$defs with no Go decoder and no reason in notGenerated: %s", strings.Join(missing, ", "))
	}
}

// TestMarksDriveDecoding flips the schema's marks on a few properties and
// checks that the generated decoder follows: leniency comes from the marks,
// not from a list kept by hand.
func TestMarksDriveDecoding(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := loadOutput(t, "schema")
	gen := func(typ string) string {
		t.Helper()
		for _, g := range generated {
			if g.Go == typ {
				out, err := render(s, pkg, "", []genType{g}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
		}
		t.Fatalf("%s is not generated", typ)
		return ""
	}
	contains := func(out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("generated code lacks %q:\n%s", want, out)
		}
	}

	caps := s.stable.Defs["AgentCapabilities"].Properties["loadSession"]
	contains(gen("AgentCapabilities"), "LoadSession         wirejson.Opt[bool]")
	caps.DefaultOnError = false
	contains(gen("AgentCapabilities"), "LoadSession         wirejson.Strict[bool]")
	contains(gen("AgentCapabilities"), `wirejson.ErrField("agent capabilities", "loadSession"`)
	caps.DefaultOnError = true

	modes := s.stable.Defs["SessionModeState"].Properties["availableModes"]
	contains(gen("SessionModeState"), "wirejson.List[SessionMode]")
	modes.SkipInvalid = false
	contains(gen("SessionModeState"), "wirejson.Opt[[]SessionMode]")
	modes.DefaultOnError = false
	contains(gen("SessionModeState"), "wirejson.Strict[[]SessionMode]")
	modes.SkipInvalid, modes.DefaultOnError = true, true

	impl := s.stable.Defs["Implementation"]
	contains(gen("Implementation"), `wirejson.ErrMissing("implementation", "version")`)
	impl.Required = []string{"name"}
	if out := gen("Implementation"); strings.Contains(out, `wirejson.ErrMissing("implementation", "version")`) {
		t.Errorf("version still required after the schema dropped it:\n%s", out)
	}
	impl.Required = []string{"name", "version"}

	// A property the Go type lacks stops the generator.
	impl.Properties["website"] = &node{Type: []byte(`"string"`)}
	for _, g := range generated {
		if g.Go == "Implementation" {
			if _, err := render(s, pkg, "", []genType{g}, nil); err == nil || !strings.Contains(err.Error(), "website") {
				t.Errorf("a schema property without a Go field was not reported: %v", err)
			}
		}
	}
	delete(impl.Properties, "website")
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"MCPServerHTTP":       "mcp server http",
		"HTTPHeader":          "http header",
		"Implementation":      "implementation",
		"ListSessionsRequest": "list sessions request",
	} {
		if got := words(in); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnionsFollowSchema checks that a union's dispatch is read from the
// schema's oneOf branches and their discriminator consts: a renamed const is
// dispatched under its new name, and a branch no Go type decodes stops the
// generator.
func TestUnionsFollowSchema(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := loadOutput(t, "schema")
	var cb genUnion
	for _, u := range unions {
		if u.Def == "ContentBlock" {
			cb = u
		}
	}
	gen := func() (string, error) {
		out, err := render(s, pkg, "", nil, []genUnion{cb})
		return string(out), err
	}
	out, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "case \"resource_link\":\n\t\tv = new(ResourceLink)") {
		t.Errorf("no dispatch of resource_link:\n%s", out)
	}

	link := s.stable.Defs["ContentBlock"].OneOf[3].Properties["type"]
	link.Const = "link"
	out, err = gen()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "case \"link\":\n\t\tv = new(ResourceLink)") || strings.Contains(out, `"resource_link"`) {
		t.Errorf("the renamed const is not what is dispatched:\n%s", out)
	}
	link.Const = "resource_link"

	d := s.stable.Defs["ContentBlock"]
	d.OneOf = append(d.OneOf, &node{
		Properties: map[string]*node{"type": {Const: "video"}},
		Required:   []string{"type"},
		AllOf:      []*node{{Ref: "#/$defs/VideoContent"}},
	})
	if _, err := gen(); err == nil || !strings.Contains(err.Error(), "video") {
		t.Errorf("a variant without a Go type was not reported: %v", err)
	}
	d.OneOf = d.OneOf[:len(d.OneOf)-1]

	// A union without a discriminator is told apart by the required key
	// each variant has alone; without one, there is no dispatch to write.
	var rc genUnion
	for _, u := range unions {
		if u.Def == "EmbeddedResourceResource" {
			rc = u
		}
	}
	out2, err := render(s, pkg, "", nil, []genUnion{rc})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out2), "case wirejson.HasKey(data, \"blob\"):\n\t\tv = new(BlobResourceContents)") {
		t.Errorf("no dispatch of blob:\n%s", out2)
	}
	blob := s.stable.Defs["BlobResourceContents"]
	req := blob.Required
	blob.Required = []string{"uri"}
	if _, err := render(s, pkg, "", nil, []genUnion{rc}); err == nil || !strings.Contains(err.Error(), "BlobResourceContents") {
		t.Errorf("a variant without a key of its own was not reported: %v", err)
	}
	blob.Required = req
}

// TestNewFieldShapes checks how the field shapes of the session updates
// are generated: a pointer to an enum, raw JSON, a patch Field, a list of
// enum values (an item that is not a string is invalid, so it is dropped),
// and a required union field, whose decoder's error fails the object.
func TestNewFieldShapes(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := loadOutput(t, "schema")
	gen := func(typ string) (string, error) {
		t.Helper()
		for _, g := range generated {
			if g.Go == typ {
				out, err := render(s, pkg, "", []genType{g}, nil)
				return string(out), err
			}
		}
		t.Fatalf("%s is not generated", typ)
		return "", nil
	}
	for typ, wants := range map[string][]string{
		"ToolCallUpdate":    {"var kind *ToolKind", "kind = &v", "RawInput   wirejson.Raw"},
		"SessionInfoUpdate": {"Title     wireField[string]", "Title:     w.Title.f"},
		"Annotations":       {"Audience     wirejson.List[string]", "audience[i] = Role(e)"},
		"AgentMessageChunk": {"Content   contentBlockField", `wirejson.ErrMissing("agent_message_chunk", "content")`},
		"Cost":              {"Amount   wirejson.Strict[float64]"},
	} {
		out, err := gen(typ)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: generated code lacks %q:\n%s", typ, w, out)
			}
		}
	}

	// Raw JSON that the schema makes strict cannot be expressed: the
	// generator says so instead of writing a decoder that is not strict.
	raw := s.stable.Defs["ToolCall"].Properties["rawInput"]
	raw.DefaultOnError = false
	if _, err := gen("ToolCall"); err == nil || !strings.Contains(err.Error(), "RawInput") {
		t.Errorf("a strict raw field was not refused: %v", err)
	}
	raw.DefaultOnError = true
}

// TestUnionDefaultVariant checks the anyOf unions whose default variant is
// a titled branch without the discriminator (AuthMethod): the title is what
// an absent "type" means, legacy.json adds branches, and the unknown
// variant requires what every known variant requires.
func TestUnionDefaultVariant(t *testing.T) {
	s, err := loadSchemas(filepath.Join(root, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := loadOutput(t, "schema")
	var am genUnion
	for _, u := range unions {
		if u.Def == "AuthMethod" {
			am = u
		}
	}
	gen := func(u genUnion) (string, error) {
		out, err := render(s, pkg, "", nil, []genUnion{u})
		return string(out), err
	}
	out, err := gen(am)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"if !found || len(kind) == 0 {\n\t\tkind = []byte(\"agent\")\n\t}",
		"case \"agent\":\n\t\tv = new(AgentAuthMethod)",
		"case \"env_var\":\n\t\tv = new(EnvVarAuthMethod)",
		"return terminalFromMeta(v), nil",
		"if !w.ID.OK {\n\t\treturn wirejson.ErrMissing(\"auth method\", \"id\")",
		"if !w.Name.OK {\n\t\treturn wirejson.ErrMissing(\"auth method\", \"name\")",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}

	d := s.stable.Defs["AuthMethod"]
	agent := d.AnyOf[len(d.AnyOf)-1]
	agent.Title = "self"
	if out, err = gen(am); err != nil || !strings.Contains(out, "kind = []byte(\"self\")") {
		t.Errorf("the default does not follow the branch's title (%v):\n%s", err, out)
	}
	agent.Title = "agent"

	term := s.stable.Defs["AuthMethodTerminal"]
	req := term.Required
	term.Required = []string{"id"}
	if out, err = gen(am); err != nil || strings.Contains(out, "wirejson.ErrMissing(\"auth method\", \"name\")") {
		t.Errorf("an unknown method still needs a name no longer common to all (%v):\n%s", err, out)
	}
	term.Required = req

	noLegacy := am
	noLegacy.Legacy = false
	if out, err = gen(noLegacy); err != nil || strings.Contains(out, "env_var") {
		t.Errorf("env_var dispatched without legacy.json (%v)", err)
	}

	d.AnyOf = append(d.AnyOf, &node{Title: "other", AllOf: []*node{{Ref: "#/$defs/AuthMethodAgent"}}})
	if _, err := gen(am); err == nil || !strings.Contains(err.Error(), "two variants without") {
		t.Errorf("two default variants were not reported: %v", err)
	}
	d.AnyOf = d.AnyOf[:len(d.AnyOf)-1]
}
