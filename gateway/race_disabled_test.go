//go:build !race

package gateway

// raceEnabled reports a race-detector build, whose allocation counts
// differ (TestRouteBurstAllocs skips there; ./test.sh runs it without).
const raceEnabled = false
