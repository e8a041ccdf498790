//go:build !race

package acp

// raceEnabled reports a race-detector build (see allocs_guard_test.go).
const raceEnabled = false
