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
//
// The command sets no memory limit of its own. One that follows the live
// heap (after each collection, the runtime's other memory plus 1.5 times
// the live heap, plus some slack) was measured on that turn: with no slack
// it made the collector run 70 times in text mode and 150 with --json,
// where GOGC=50 alone runs 14 and 33, and that is what lowered the peak; with slack enough to stop that, the peak
// was the same as without. Nor does a lower GOGC buy much: at 25 or 35 the
// peak is within a few hundred kB of 50's. What remains is live (the turn's
// log and text, about 3 MB at the end of that turn, 5 MB while --json
// writes turn_end) and, for more than half the peak, the pages of the
// binary itself (RssFile, about 9 MB when the command has only started).
const gcPercent = 50

// tuneGC applies gcPercent unless GOGC is set. Only main calls it: the
// tests that run the command in their own process keep their own setting.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
