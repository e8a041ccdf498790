//go:build race

package gateway

// raceEnabled reports a race-detector build, whose allocation counts
// differ (the allocation guards skip there; ./test.sh runs them without).
const raceEnabled = true
