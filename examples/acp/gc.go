// gc.go holds the command's setting of the garbage collector.
package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the GOGC the command runs with when the environment does not
// set GOGC. The command's live heap is small for all it streams: a turn of
// 100 000 text chunks keeps under 4 MB (the turn's log, 16 bytes a chunk,
// and its text), and the rest is garbage of one update each. At the
// runtime's default of 100 the heap may grow to twice what is live, and
// never collects below 4 MB; at 50 it grows to one and a half times (and
// 2 MB), which lowers the command's peak RSS on such a turn (with the
// renderer's fix, 21.7 → 19.1 MB in text mode) for a few more collections
// of a heap that small (bench/README.md, memrun). A host with other needs sets GOGC (or GOMEMLIMIT) itself.
const gcPercent = 50

// tuneGC applies gcPercent unless GOGC is set. Only main calls it: the
// tests that run the command in their own process keep their own setting.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
