package remote

// Test servers' helpers, for the package's external tests.
var (
	AcceptWS        = acceptWS
	ReadClientFrame = readClientFrame
)

// OnDeferredEnd sets the function called when an end of the connection
// learnt from stream waits for the session streams (deferEnd), until the
// test ends. Every connection of the package calls it: a test that sets
// it must not run in parallel with others.
func OnDeferredEnd(t interface{ Cleanup(func()) }, f func(stream string)) {
	testHookDeferredEnd = f
	t.Cleanup(func() { testHookDeferredEnd = nil })
}
