// The package's tests run against acptest's scripted agent, in process;
// goleak checks that no test leaves a goroutine behind (the client's, the
// agent's or a callback's).
package nes_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
