// gc.go records why the command leaves the garbage collector at the
// runtime's default (GOGC=100), and what was measured to decide it.
package main

// The command sets neither GOGC nor a memory limit; a host with other needs
// sets GOGC (or GOMEMLIMIT) in the environment, which the runtime reads.
//
// Until issue 35 the command ran with GOGC=50 for a lower peak. Measured on
// the 100 000-chunk turn with the wake-ups per read (bench/README.md, "End
// to end"; `go run . -only memrun -memrun-env GOGC=100`, two runs of 7
// interleaved runs each, on a loaded 2-core machine): at 100 the wall time
// was 0.53× and 0.73× of 50's in text mode, 0.65× and 0.60× with --json,
// for an own peak 4–5 % higher in text mode (19.5 against 18.7 MB) and
// the same with --json (20.0 MB); a third run, against the build before,
// saw 3 % (text) and 6 % (--json) more. The collector was the largest part of
// the command's CPU (perfsplit: gc ≈ 250 ns an update at 50), and neither
// setting comes near the 16 MB target: most of the peak is not garbage
// but the pages of the binary itself (RssFile, about 9 MB when the command
// has only started) and the turn's log and text (about 3 MB at the end of
// that turn, 5 MB while --json writes turn_end). So the collector's time
// buys under a megabyte, and the default is the better trade.
//
// A memory limit that follows the live heap (after each collection, the
// runtime's other memory plus 1.5 times the live heap, plus some slack)
// was measured before: with no slack it made the collector run 70 times in
// text mode and 150 with --json (GOGC=50 alone ran 14 and 33), and that is
// what lowered the peak; with slack enough to stop that, the peak was the
// same as without. Nor did a lower GOGC buy much: at 25 or 35 the peak was
// within a few hundred kB of 50's.
