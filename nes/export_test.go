// Hooks for the external tests: a Session on any id, to reach the methods'
// own checks (capability, arguments) without an agent that starts one.
package nes

import "github.com/acpclient/acp"

// SessionFor returns a Session with id on c, as Start would.
func SessionFor(c *acp.Client, id string) *Session { return &Session{c: c, id: id} }
