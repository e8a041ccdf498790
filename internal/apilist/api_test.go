package apilist

import (
	"flag"
	"os"
	"path/filepath"
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
	{"gateway", "github.com/acpclient/acp/gateway", "gateway.txt"},
	{"nes", "github.com/acpclient/acp/nes", "nes.txt"},
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
