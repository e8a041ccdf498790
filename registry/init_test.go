// init_test.go tests that linking the package costs a program little at
// start: its patterns are compiled on first use.
package registry

import (
	"testing"

	"github.com/acpclient/acp/internal/inittrace"
)

// The package's init allocates next to nothing: its three patterns, when
// compiled at init, took 27 KB in 284 allocations from every program that
// links the package, the acp command's every run included.
func TestInitIsLazy(t *testing.T) {
	if n := inittrace.Bytes(t, "github.com/acpclient/acp/registry"); n > 1024 {
		t.Errorf("the package's init allocated %d bytes, want at most 1024", n)
	}
}

// The patterns still check, once compiled on first use, from several
// goroutines at once.
func TestLazyPatternsCheck(t *testing.T) {
	done := make(chan bool)
	for range 4 {
		go func() {
			done <- idPattern().MatchString("codex-acp") && !idPattern().MatchString("Codex") &&
				versionPattern().MatchString("1.2.3-rc.1") && !versionPattern().MatchString("1.2") &&
				sha256Pattern().MatchString("0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF")
		}()
	}
	for range 4 {
		if !<-done {
			t.Fatal("a pattern matched wrongly")
		}
	}
}
