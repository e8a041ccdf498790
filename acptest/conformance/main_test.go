// This file holds TestMain: the test binary is also the subprocess agents,
// and goleak checks no goroutine outlives the tests.

package conformance_test

import (
	"os"
	"testing"

	"github.com/acpclient/acp/acptest"
	"go.uber.org/goleak"
)

// TestMain lets the test binary be the agents graded as subprocesses.
func TestMain(m *testing.M) {
	registerAgents()
	acptest.MainIfAgent()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
