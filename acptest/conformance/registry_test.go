package conformance_test

import "github.com/acpclient/acp/acptest"

// registerAgents registers the agents graded as subprocesses.
func registerAgents() {
	acptest.Register("good", func() *acptest.Agent { return acptest.New(goodOptions()) })
}
