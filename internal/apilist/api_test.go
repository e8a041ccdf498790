package apilist

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite api/*.txt from the source")

// The packages whose API the module promises, and the file each is listed
// in. Internal packages, commands, examples and test suites are not API.
var promised = []struct{ dir, name, file string }{
	{".", "github.com/acpclient/acp", "acp.txt"},
	{"acptest", "github.com/acpclient/acp/acptest", "acptest.txt"},
	{"acptest/demo", "github.com/acpclient/acp/acptest/demo", "acptest-demo.txt"},
	{"acptest/conformance", "github.com/acpclient/acp/acptest/conformance", "acptest-conformance.txt"},
	{"gateway", "github.com/acpclient/acp/gateway", "gateway.txt"},
	{"nes", "github.com/acpclient/acp/nes", "nes.txt"},
	{"schema", "github.com/acpclient/acp/schema", "schema.txt"},
	{"otelacp", "github.com/acpclient/acp/otelacp", "otelacp.txt"}, // a module of its own
	{"registry", "github.com/acpclient/acp/registry", "registry.txt"},
	{"remote", "github.com/acpclient/acp/remote", "remote.txt"},
	{"traceview", "github.com/acpclient/acp/traceview", "traceview.txt"},
	{"workspace", "github.com/acpclient/acp/workspace", "workspace.txt"},
}

// TestAPIListing fails when the exported API of a promised package differs
// from its checked-in listing in api/, so that every API change is a diff
// of api/*.txt in review. After an intended change, run
//
//	go test ./internal/apilist -update
//
// and commit the listing with the change (and a CHANGELOG.md line).
func TestAPIListing(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, p := range promised {
		t.Run(p.file, func(t *testing.T) {
			lines, err := Package(filepath.Join(root, p.dir), p.name)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(lines, "\n") + "\n"
			path := filepath.Join(root, "api", p.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/apilist -update)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("the exported API of %s differs from api/%s (-listed +source); if intended, run go test ./internal/apilist -update and commit it with a CHANGELOG.md line:\n%s", p.name, p.file, d)
			}
		})
	}
}

// TestUnstableListing fails when the identifiers marked "Unstable:" in the
// promised packages differ from api/unstable.txt, so that marking a part
// of the API unstable, or promising it (removing the mark), is a diff in
// review. After an intended change, run
//
//	go test ./internal/apilist -update
//
// and commit the listing with the change (and a CHANGELOG.md line).
func TestUnstableListing(t *testing.T) {
	root := filepath.Join("..", "..")
	var all []string
	for _, p := range promised {
		lines, err := Unstable(filepath.Join(root, p.dir), p.name)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, lines...)
	}
	slices.Sort(all)
	got := strings.Join(all, "\n") + "\n"
	path := filepath.Join(root, "api", "unstable.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/apilist -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("the identifiers marked %q differ from api/unstable.txt (-listed +source); if intended, run go test ./internal/apilist -update and commit it with a CHANGELOG.md line:\n%s", UnstableMarker, d)
	}
}

// The listing is made from syntax: check the shapes it prints on a small
// package, so that a change of format is a deliberate one.
func TestListingFormat(t *testing.T) {
	dir := t.TempDir()
	src := `package p

const A, b = 1, 2
const C int = 3
type K int
const (
	K1 K = iota
	K2
)
var V func(ctx int, s string) (n int, err error)
type S struct {
	X, y int
	Embedded
	F func(a, b int) error
}
type Embedded struct{}
type I interface {
	M(a int) (b string)
	fmt.Stringer
}
type G[T any, K comparable] map[K]T
type Alias = S
func (s *S) Do(a, b int, c ...string) {}
func (s S) unexported() {}
func (g G[T, K]) Len() int { return 0 }
func New[T any](v T) *S { return nil }
type hidden struct{}
func (hidden) Exported() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Package(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, const A",
		"pkg p, const C int",
		"pkg p, const K1 K",
		"pkg p, const K2 K",
		"pkg p, func New[T any](T) *S",
		"pkg p, method (*S) Do(int, int, ...string)",
		"pkg p, method (G[T, K]) Len() int",
		"pkg p, type Alias = S",
		"pkg p, type Embedded struct",
		"pkg p, type G[T any, K comparable] map[K]T",
		"pkg p, type I interface",
		"pkg p, type I interface, M(int) string",
		"pkg p, type I interface, embedded fmt.Stringer",
		"pkg p, type K int",
		"pkg p, type S struct",
		"pkg p, type S struct, F func(int, int) error",
		"pkg p, type S struct, X int",
		"pkg p, type S struct, embedded Embedded",
		"pkg p, var V func(int, string) (int, error)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("listing (-want +got):\n%s", d)
	}
}

// Unstable lists, in the same format, exactly what carries the mark itself:
// a grouped declaration through its group's doc, a field through its own
// doc or line comment, and not the fields or methods of a marked type.
func TestUnstableFormat(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// A is stable.
const A = 1

// Unstable: may change.
const (
	B = 2
	C = 3
)

// T is unstable.
//
// Unstable: may change.
type T struct {
	X int
}

// M is unstable too.
//
// Unstable: may change.
func (T) M() {}

func (T) N() {}

// S is stable, with one unstable field.
type S struct {
	Y int
	// Z is new. Unstable: may change.
	Z string
	W bool // Unstable: may change.
}

// I is stable.
type I interface {
	// Unstable: may change.
	Do()
	Done()
}

// F is unstable. Unstable: may change.
func F() {}

// unstable, but not exported. Unstable: may change.
func g() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Unstable(dir, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, const B",
		"pkg p, const C",
		"pkg p, func F()",
		"pkg p, method (T) M()",
		"pkg p, type I interface, Do()",
		"pkg p, type S struct, W bool",
		"pkg p, type S struct, Z string",
		"pkg p, type T struct",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("unstable listing (-want +got):\n%s", d)
	}
}
