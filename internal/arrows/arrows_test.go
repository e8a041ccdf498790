package arrows

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// forbidden lists, for a package of this module, the packages it must not
// depend on, directly or through others. Each line says why.
var forbidden = []struct {
	pkg, mustNot, why string
}{
	// The protocol is below the client: a wire type that needs the client
	// holds client state, which is the breach the cut removed.
	{"schema", "", "the protocol imports nothing of the client"},
	{"schema", "nes", "the protocol does not know the unstable NES room"},
	// The client does not depend on its unstable rooms; they depend on it.
	{"", "nes", "the client does not import NES; NES is written over the client's public API"},
	// The engine is framing under jrpc2: it knows no ACP type.
	{"internal/engine", "schema", "the engine knows no ACP type"},
	{"internal/engine", "", "the engine knows no ACP type"},
	// The viewer reads traces through the protocol alone, so that it can
	// show a trace of any client's traffic.
	{"traceview", "", "the viewer reads traces through the protocol package alone"},
}

const module = "github.com/acpclient/acp"

func path(rel string) string {
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

// deps returns the packages pkg depends on (go list -deps), tests excluded.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath", pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	set := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath != pkg {
			set[p.ImportPath] = true
		}
	}
	return set
}

func TestForbiddenArrows(t *testing.T) {
	cache := map[string]map[string]bool{}
	for _, f := range forbidden {
		from, to := path(f.pkg), path(f.mustNot)
		d, ok := cache[from]
		if !ok {
			d = deps(t, from)
			cache[from] = d
		}
		if d[to] {
			t.Errorf("%s imports %s (directly or not): %s", from, to, f.why)
		}
	}
}

// TestForbiddenArrowsSeen checks the test can see an arrow at all: the
// client does import the protocol, so a deps list without it means the
// listing is broken, not that the layering holds.
func TestForbiddenArrowsSeen(t *testing.T) {
	if !deps(t, module)[path("schema")] {
		t.Fatalf("%s does not seem to import %s: the arrow test would pass vacuously", module, path("schema"))
	}
}
