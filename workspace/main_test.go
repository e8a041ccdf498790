package workspace_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary a helper process instead of running the
// tests: its value names an entry of helpers, which the test files register
// in their init.
const helperEnv = "ACP_WORKSPACE_TEST_HELPER"

var helpers = map[string]func(){}

// Every test must leave no goroutine behind: a terminal's reader and
// watcher, in particular, end when it is released or its manager closed.
func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		run := helpers[name]
		if run == nil {
			os.Stderr.WriteString("unknown helper " + name + "\n")
			os.Exit(2)
		}
		run()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
