// Package testhook holds hooks that tests set to watch what a package does
// inside, where the package's API must not show them: a test of the client
// counts the patterns the protocol package compiles, across the package
// wall. Nothing but tests sets them; unset, each costs one atomic load.
package testhook

import "sync/atomic"

// Pattern, if set, hears of every elicitation pattern the schema package
// compiles or matches: "compile" or "match", and the pattern.
var Pattern atomic.Pointer[func(event, pattern string)]
