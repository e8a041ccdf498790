#!/usr/bin/env bash
# The whole test suite, as the README documents it: every package with the
# race detector. The interop tests run `npm ci` in interop/tsagent on first
# use. The OpenTelemetry module under otelacp/ is a module of its own (so
# that acp does not depend on OpenTelemetry) and is tested here as well; so
# is the benchmark module under bench/: its tests (the harness's own peaks,
# ratio lines and floors) run here, its benchmarks do not (bench/README.md).
set -euo pipefail
cd "$(dirname "$0")"
# A program built with -race sleeps a second before it exits, so that the
# goroutines still running may yet be caught racing (GORACE atexit_sleep_ms,
# default 1000). The suite's agents are its test binaries run again, and a
# test that closes an agent waits for it to exit: that second was half the
# wall time of the CLI's tests. Goroutines still running at a test binary's
# end fail goleak, and every access before the exit is still checked; a
# GORACE of the caller's own is kept as it is.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
go test -race -count=1 ./... "$@"
# The allocation guards (allocs_guard_test.go, feed_reuse_test.go,
# gateway/lines_test.go, gateway/cork_test.go) skip themselves under -race,
# which changes allocation counts; they run here once more without it.
go test -count=1 -run '^(TestFoldAllocs|TestEventsReusedAllocs)' .
go test -count=1 -run '^(TestRouteBurstAllocs|TestRunBlocksAllocs|TestWriteFrameAllocs)$' ./gateway
(cd otelacp && go test -race -count=1 ./... "$@")
(cd bench && go test -race -count=1 ./... "$@")
