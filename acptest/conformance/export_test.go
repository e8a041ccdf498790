// This file exports internals to the package's tests.

package conformance

// SetMaxRecorded lowers MaxRecordedBytes for a test; the returned func
// restores it. Tests using it must not run in parallel with others.
func SetMaxRecorded(n int64) (restore func()) {
	old := maxRecorded
	maxRecorded = n
	return func() { maxRecorded = old }
}
