// init_test.go tests that linking the package costs a program little at
// start: the page's Content-Security-Policy is hashed on first use.
package traceview

import (
	"strings"
	"testing"

	"github.com/acpclient/acp/internal/inittrace"
)

// The package's init allocates next to nothing: hashing the page's
// script and style at init took 22 KB from every program that links the
// package (the acp command, for acp view), whatever it ran.
func TestInitIsLazy(t *testing.T) {
	if n := inittrace.Bytes(t, "github.com/acpclient/acp/traceview"); n > 1024 {
		t.Errorf("the package's init allocated %d bytes, want at most 1024", n)
	}
}

// The policy computed on first use pins the inline code by its hashes.
func TestCSPPinsTheInlineCode(t *testing.T) {
	p := csp()
	for _, want := range []string{"style-src '" + hash(viewerCSS) + "'", "script-src '" + hash(viewerJS) + "'", "default-src 'none'"} {
		if !strings.Contains(p, want) {
			t.Errorf("csp() = %q, want it to contain %q", p, want)
		}
	}
	if csp() != p {
		t.Error("csp() changed between calls")
	}
}
