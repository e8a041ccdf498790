package acp

import (
	"testing"

	"github.com/acpclient/acp/internal/proctest"
)

// osThreads is the number of OS threads of this process.
func osThreads(t *testing.T) int { return proctest.Threads(t) }
