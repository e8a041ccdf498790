package demo_test

// The package tests check for leaked goroutines.

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine of the agent or the
// client behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
