package main

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// envTestAlloc makes the test binary, re-executed as the measured child,
// touch that many MiB and exit.
const envTestAlloc = "ACP_BENCH_TEST_ALLOC_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(envTestAlloc); v != "" {
		n, _ := strconv.Atoi(v)
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		runtime.KeepAlive(b)
		os.Exit(0)
	}
	if mode := os.Getenv(envMode); mode != "" {
		runWriter(mode) // the writer agent, as main runs it
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
