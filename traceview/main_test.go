package traceview

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain closes the shared browser (see chrome) before checking that no
// goroutine leaked.
func TestMain(m *testing.M) {
	code := m.Run()
	closeChrome()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
