package acp_test

import (
	"os"
	"testing"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/acptest"
	"go.uber.org/goleak"
)

// TestMain lets the test binary act as an agent subprocess: with
// ACP_TEST_AGENT set it runs that agent instead of the tests, so process
// tests need no other binary. It lives in the external test package because
// acptest imports acp.
func TestMain(m *testing.M) {
	if mode := os.Getenv("ACP_TEST_AGENT"); mode != "" {
		acp.RunTestAgent(mode)
		os.Exit(0)
	}
	if mode := os.Getenv(acp.TestHostEnv); mode != "" {
		acp.RunTestHost(mode)
		os.Exit(0)
	}
	acptest.MainIfAgent() // agents registered by the acp_test files' init
	goleak.VerifyTestMain(m)
}
