package workspace_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: a terminal's reader and
// watcher, in particular, end when it is released or its manager closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
