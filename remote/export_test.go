package remote

// Test servers' helpers, for the package's external tests.
var (
	AcceptWS        = acceptWS
	ReadClientFrame = readClientFrame
)

// OnDeferredEnd sets the function called when an end of the connection
// learnt from stream waits for the session streams (deferEnd), until the
// test ends.
func OnDeferredEnd(t interface{ Cleanup(func()) }, f func(stream string)) {
	testHookDeferredEnd = f
	t.Cleanup(func() { testHookDeferredEnd = nil })
}
