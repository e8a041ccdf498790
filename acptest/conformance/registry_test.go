// This file holds the agents the tests run as subprocesses.

package conformance_test

import "github.com/acpclient/acp/acptest"

// registerAgents registers the agents graded as subprocesses.
func registerAgents() {
	acptest.Register("good", func() *acptest.Agent {
		o := goodOptions()
		// A process per connection keeps no sessions: it offers none of
		// the ways back to one.
		o.Capabilities = map[string]any{"promptCapabilities": map[string]any{"embeddedContext": true}}
		return acptest.New(o)
	})
	acptest.Register("hung", func() *acptest.Agent {
		return acptest.New(&acptest.Options{IgnoreStdinEOF: true,
			Methods: map[string]acptest.MethodFunc{"initialize": acptest.NeverAnswer}})
	})
}
