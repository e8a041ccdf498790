// Package arrows holds, as a test, the import arrows that must never exist
// between this module's packages: the layering that the compiler alone
// cannot keep, because a forbidden import compiles as well as an allowed
// one. It has no code; see arrows_test.go.
package arrows
