package main

import "github.com/acpclient/acp/acptest"

// registerTestAgents registers the acptest agents the auth, session and
// trace tests run as subprocesses.
func registerTestAgents() {}

var _ = acptest.Register
